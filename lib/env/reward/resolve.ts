/** Whether a run resolved its task, by the SWE-bench rule or the R2E-Gym rule. */
import type { TestStatus } from '../env.js';
import { r2eGymTestKey, type TestStatuses } from './test-log.js';

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

/**
 * R2E-Gym: the parsed statuses, keyed "Class.test_name" (file path dropped), must equal
 * expected_output_json exactly: the same keys with the same statuses.
 */
export function r2eGymResolution(statuses: TestStatuses, expected: Readonly<Record<string, string>>): Resolution {
  const actual = new Map<string, string>();
  for (const [id, status] of statuses) actual.set(r2eGymTestKey(id), status);
  const problems: string[] = [];
  for (const [key, status] of Object.entries(expected)) {
    const got = actual.get(key);
    if (got !== status) problems.push(`${key}: expected ${status}, got ${got ?? 'missing'}`);
  }
  for (const key of actual.keys()) if (!(key in expected)) problems.push(`${key}: not expected`);
  if (problems.length === 0) return { resolved: true };
  return { resolved: false, reason: `${problems.length} mismatch(es): ${problems.slice(0, 5).join('; ')}${problems.length > 5 ? '; …' : ''}` };
}
