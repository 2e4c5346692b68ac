/** Whether a run resolved its task, by the SWE-bench rule or the R2E-Gym rule. */
import type { TestStatus } from '../env.js';
import { r2eGymKey, type TestStatuses } from './test-log.js';

export interface Resolution {
  resolved: boolean;
  /** Why not, in a line, when not resolved. */
  reason?: string;
}

/** The statuses that count as a required test passing (SWE-bench's rule). */
export const PASSING: readonly TestStatus[] = ['PASSED', 'XFAIL'];

/**
 * SWE-bench: resolved iff every FAIL_TO_PASS and every PASS_TO_PASS test passed (PASSED or
 * XFAIL). A test missing from the log counts as failed.
 */
export function sweBenchResolution(statuses: TestStatuses, failToPass: readonly string[], passToPass: readonly string[]): Resolution {
  const failing = [...failToPass, ...passToPass].filter((id) => !PASSING.includes(statuses.get(id) as TestStatus));
  if (failing.length === 0) return { resolved: true };
  const shown = failing.slice(0, 5).map((id) => `${id} (${statuses.get(id) ?? 'missing'})`);
  return { resolved: false, reason: `${failing.length} required test(s) not passing: ${shown.join(', ')}${failing.length > 5 ? ', …' : ''}` };
}

// Durations some runners print inside test names (" [1.34 ms]", " in 29.08 msec", " (12ms)"):
// SWE-rebench-V2's harness strips them from both sides before comparing.
const TIMING_SUFFIXES = [
  /\s*\[\s*\d+(?:\.\d+)?\s*(?:ms|s)\s*\]\s*$/i,
  /\s+in\s+\d+(?:\.\d+)?\s+(?:msec|sec)\b/i,
  /\s*\(\s*\d+(?:\.\d+)?\s*(?:ms|s)\s*\)\s*$/i,
];
const withoutTiming = (name: string) => TIMING_SUFFIXES.reduce((n, re) => n.replace(re, ''), name).trim();

/**
 * SWE-rebench-V2: resolved when the tests the log shows PASSED are exactly `passed` (its
 * FAIL_TO_PASS and PASS_TO_PASS), no more and no fewer, timing suffixes stripped on both sides.
 */
export function passedSetResolution(statuses: TestStatuses, passed: readonly string[]): Resolution {
  // The harness keys the parsed statuses by the stripped name (a later one wins), then compares
  // the sorted names that passed with its sorted list.
  const byName = new Map([...statuses].map(([name, status]) => [withoutTiming(name), status]));
  const actual = [...byName].filter(([, status]) => status === 'PASSED').map(([name]) => name).sort();
  const expected = passed.map(withoutTiming).sort();
  const missing = expected.filter((name) => !actual.includes(name));
  const extra = actual.filter((name) => !expected.includes(name));
  if (missing.length === 0 && extra.length === 0 && actual.length === expected.length) return { resolved: true };
  const shown = [...missing.map((n) => `${n} (${byName.get(n) ?? 'missing'})`), ...extra.map((n) => `${n} (passed, not listed)`)];
  return { resolved: false, reason: `${missing.length} listed test(s) not passing, ${extra.length} unlisted passing: ${shown.slice(0, 5).join(', ')}${shown.length > 5 ? ', …' : ''}` };
}

/**
 * R2E-Gym: the statuses its log parser reads (keys "Class.test_name", test-log.ts
 * parseR2eGymLog) must equal expected_output_json exactly, the same keys with the same statuses,
 * both sides' keys cut at " - " and their colour codes dropped, as its reward compares them.
 */
export function r2eGymResolution(statuses: TestStatuses, expectedByKey: Readonly<Record<string, string>>): Resolution {
  const actual = new Map<string, string>();
  for (const [key, status] of statuses) actual.set(r2eGymKey(key), status);
  const expected: Record<string, string> = {};
  for (const key of Object.keys(expectedByKey).sort()) expected[r2eGymKey(key)] = expectedByKey[key]!;
  const problems: string[] = [];
  for (const [key, status] of Object.entries(expected)) {
    const got = actual.get(key);
    if (got !== status) problems.push(`${key}: expected ${status}, got ${got ?? 'missing'}`);
  }
  for (const key of actual.keys()) if (!(key in expected)) problems.push(`${key}: not expected`);
  if (problems.length === 0) return { resolved: true };
  return { resolved: false, reason: `${problems.length} mismatch(es): ${problems.slice(0, 5).join('; ')}${problems.length > 5 ? '; …' : ''}` };
}
