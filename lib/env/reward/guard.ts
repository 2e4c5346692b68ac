/**
 * The grading guard: test outcomes from a channel the code under test does not own.
 *
 * The repository's own source runs inside the test process and could rewrite what the runner
 * reports. At grading only, the test command gets a guard of ours, installed from a folder
 * outside the work tree: for pytest a plugin under a random module name (`-p`, so a module of
 * the patch cannot stand in for it), for node's test runner a preloaded module (`--import`).
 * It records each test's outcome from the call itself, checks at the end that the runner's
 * machinery is as it was, and writes its record (each line signed with a key of this grading)
 * to a file outside the work tree. Grading then holds the parsed log to the record: a test the
 * log calls passing that the guard did not see pass, a record line the guard did not sign, a
 * test process that ended before its runner did, or tampering the guard saw gives 0, whatever
 * the tests say (docs/swe-env.md states the policy). Other runners (django's, sympy's) run
 * unguarded, as before.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { packageRoot } from '../../native.js';
import { shellQuote } from '../sandbox/sandbox.js';
import type { TestLogFormat, TestStatus } from '../env.js';
import { parseTestLog, type TestStatuses } from './test-log.js';

export type GuardRunner = 'pytest' | 'node';

/** The runner a log format comes from, when swerl has a guard for it. */
export function guardRunnerOf(format: TestLogFormat): GuardRunner | null {
  if (format.startsWith('pytest') || format === 'r2e-gym') return 'pytest';
  if (format.startsWith('node-')) return 'node';
  return null;
}

const SOURCES: Record<GuardRunner, string> = { pytest: 'pytest_guard.py', node: 'node_guard.mjs' };
const cache = new Map<GuardRunner, Buffer>();

function guardSource(runner: GuardRunner): Buffer {
  let source = cache.get(runner);
  if (!source) {
    source = readFileSync(path.join(packageRoot(), 'lib', 'env', 'reward', 'guard', SOURCES[runner]));
    cache.set(runner, source);
  }
  return source;
}

/** One grading's guard: where it goes in the sandbox, its key, and how the command takes it. */
export interface Guard {
  runner: GuardRunner;
  /** A fresh folder outside the work tree (made by `setup`). */
  dir: string;
  /** Where the guard writes its record. */
  record: string;
  key: string;
  /** The guard's file, to write into `dir`. */
  file: { name: string; contents: Buffer };
  /** Shell that exports what loads the guard into the test command (run after `dir` holds the file). */
  exports: string;
}

export function makeGuard(runner: GuardRunner, workdir: string): Guard {
  const tag = randomBytes(8).toString('hex');
  const dir = `/tmp/swerl-guard-${tag}`;
  const record = `${dir}/record`;
  const key = randomBytes(32).toString('hex');
  const common = [`SWERL_GUARD_KEY=${key}`, `SWERL_GUARD_RECORD=${shellQuote(record)}`, `SWERL_GUARD_ROOT=${shellQuote(workdir)}`];
  if (runner === 'pytest') {
    // A random module name: a module of the patch named like the guard would be found first.
    const module = `swerl_guard_${tag}`;
    return {
      runner, dir, record, key,
      file: { name: `${module}.py`, contents: guardSource(runner) },
      exports: `export ${common.join(' ')} PYTHONPATH=${shellQuote(dir)}\${PYTHONPATH:+:$PYTHONPATH} PYTEST_ADDOPTS="-p ${module}\${PYTEST_ADDOPTS:+ $PYTEST_ADDOPTS}"`,
    };
  }
  const file = `${dir}/guard.mjs`;
  return {
    runner, dir, record, key,
    file: { name: 'guard.mjs', contents: guardSource(runner) },
    exports: `export ${common.join(' ')} NODE_OPTIONS="--import ${file}\${NODE_OPTIONS:+ $NODE_OPTIONS}"`,
  };
}

export type GuardVerdict = 'passed' | 'failed' | 'error' | 'skipped' | 'xfailed' | 'xpassed';

const STATUS_OF: Record<GuardVerdict, TestStatus> = { passed: 'PASSED', failed: 'FAILED', error: 'ERROR', skipped: 'SKIPPED', xfailed: 'XFAIL', xpassed: 'XPASS' };

/** What the guard's record says: each test's verdict, and everything that voids the run. */
export interface GuardRecord {
  verdicts: Map<string, GuardVerdict>;
  /** Tampering the guard saw, and faults of the record itself (unsigned lines, a missing end). */
  tampering: string[];
}

/** Reads a record, keeping only lines signed with `key`; an unsigned line is itself tampering. */
export function readGuardRecord(text: string, key: string): GuardRecord {
  const verdicts = new Map<string, GuardVerdict>();
  const tampering = new Set<string>(); // the same finding from each test process is one
  const started = new Set<number>();
  const ended = new Set<number>();
  let unsigned = 0;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const space = line.indexOf(' ');
    const [mac, body] = [line.slice(0, space), line.slice(space + 1)];
    const expected = createHmac('sha256', key).update(body).digest();
    const given = Buffer.from(mac, 'hex');
    if (space < 0 || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      unsigned++;
      continue;
    }
    const entry = JSON.parse(body) as { kind: string; pid?: number; id?: string; verdict?: GuardVerdict; what?: string };
    if (entry.kind === 'start') started.add(entry.pid!);
    else if (entry.kind === 'end') ended.add(entry.pid!);
    else if (entry.kind === 'test') verdicts.set(entry.id!, entry.verdict!);
    else if (entry.kind === 'tamper') tampering.add(entry.what!);
  }
  if (unsigned > 0) tampering.add(`${unsigned} line(s) of the guard's record were not written by the guard`);
  if (started.size === 0) tampering.add('the guard never started: the test command ran without it');
  const cut = [...started].filter((pid) => !ended.has(pid));
  if (cut.length > 0) tampering.add(`a test process (pid ${cut.join(', ')}) ended before its runner finished (an early exit, a kill, or exit handlers removed)`);
  return { verdicts, tampering: [...tampering] };
}

/** The record's verdicts as the log's statuses, ids written as the log format writes them. */
function verdictStatuses(record: GuardRecord, runner: GuardRunner, format: TestLogFormat): TestStatuses {
  if (runner === 'node') return new Map([...record.verdicts].map(([id, verdict]) => [id, STATUS_OF[verdict]]));
  // pytest-family formats rewrite ids (SWE-bench's per-repository quirks): the record's node ids
  // go through the same parser as summary lines.
  const lines = [...record.verdicts].map(([id, verdict]) => `${STATUS_OF[verdict]} ${id}`);
  // R2E-Gym's parser reads only what follows the short summary's title.
  if (format === 'r2e-gym') lines.unshift('short test summary info');
  return parseTestLog(format, lines.join('\n'));
}

const PASSING: readonly TestStatus[] = ['PASSED', 'XFAIL', 'XPASS'];

/**
 * Why the run's reward must be 0 by the guard (empty: it agrees): tampering it saw, and each
 * of `checked` that the log calls passing but the guard did not see pass the same way.
 */
export function guardFindings(record: GuardRecord, runner: GuardRunner, format: TestLogFormat, log: TestStatuses, checked: Iterable<string>): string[] {
  const findings = [...record.tampering];
  const seen = verdictStatuses(record, runner, format);
  const disagreements: string[] = [];
  for (const id of new Set(checked)) {
    const status = log.get(id);
    if (status === undefined || !PASSING.includes(status)) continue;
    const guarded = seen.get(id);
    if (guarded !== status) disagreements.push(`${id} (the log says ${status}, the guard saw ${guarded ?? 'no run of it'})`);
  }
  if (disagreements.length > 0) {
    findings.push(`${disagreements.length} test(s) the log reports passing did not pass under the guard: ${disagreements.slice(0, 3).join(', ')}${disagreements.length > 3 ? ', …' : ''}`);
  }
  return findings;
}
