/**
 * One run of a verifier's tests against a candidate, in a fresh sandbox of the task: the
 * candidate's patch applied; its changes to test infrastructure and to the task's own test
 * files reverted to the base (a candidate does not get to edit the tests that judge it); new
 * test files put in when given; a command run as grading runs one (fresh HOME, time limit);
 * its log parsed. The hidden tests never enter: a verifier must not see them.
 */
import { applyPatch, prepareRepository, taskSandboxSpec } from '../env/repo.js';
import { restoreFromBase, revertTestInfrastructure, runTests } from '../env/reward/grade.js';
import type { TestLogFormat } from '../env/env.js';
import type { TestStatuses } from '../env/reward/test-log.js';
import type { SandboxBackend } from '../env/sandbox/sandbox.js';
import { patchedPaths } from '../env/patch-files.js';
import type { Task } from '../env/task.js';
import type { Slots } from '../util/bounded.js';

export interface TestRunSpec {
  /** The candidate's patch ('' for the base). */
  patch: string;
  /** New test files (a patch adding them) put in after the candidate's changes. */
  tests?: { patch: string; files: readonly string[] };
  /** Default: the task's test command and log format. */
  command?: string;
  logFormat?: TestLogFormat;
}

export interface TestRunOptions {
  timeoutMs: number;
  label?: string;
  /** Checked before each sandbox starts. */
  signal?: AbortSignal;
}

/** Statuses by test id, or null and why none (the patch did not apply, the run timed out, …). */
export type TestRunResult = { statuses: TestStatuses; reason?: undefined } | { statuses: null; reason: string };

/** The task's own test files at the base: those its hidden tests replace (none for image paths). */
export function taskTestFiles(task: Task): string[] {
  const hidden = task.hiddenTests;
  if (hidden.kind === 'files') return hidden.paths;
  if (hidden.kind === 'patch') return patchedPaths(hidden.patch, { old: true });
  return [];
}

export async function testRun(backend: SandboxBackend, task: Task, spec: TestRunSpec, options: TestRunOptions): Promise<TestRunResult> {
  options.signal?.throwIfAborted();
  const sandboxSpec = await taskSandboxSpec(task, options.label);
  const sandbox = await backend.create(sandboxSpec);
  try {
    const prepared = await prepareRepository(sandbox, task, { patch: spec.patch, ...(sandboxSpec.baseCommit ? { baseCommit: sandboxSpec.baseCommit } : {}) });
    if (prepared.patchError !== undefined) return { statuses: null, reason: `the patch does not apply: ${prepared.patchError}` };
    await revertTestInfrastructure(sandbox, task, prepared);
    await restoreFromBase(sandbox, prepared.baseCommit, [...taskTestFiles(task), ...(spec.tests?.files ?? [])], 'restoring the test files');
    if (spec.tests) await applyPatch(sandbox, spec.tests.patch, 'adding the verifier\'s test files');
    const { run, statuses } = await runTests(sandbox, task, {
      timeoutMs: options.timeoutMs,
      ...(spec.command !== undefined ? { command: spec.command } : {}),
      ...(spec.logFormat !== undefined ? { logFormat: spec.logFormat } : {}),
    });
    if (run.timedOut) return { statuses: null, reason: `the tests ran longer than ${options.timeoutMs / 1000} s` };
    return { statuses };
  } finally {
    await sandbox.destroy();
  }
}

/**
 * testRun over many patches, each distinct patch run once (k candidates often share a patch),
 * each sandbox holding one of `slots` (shared by all tasks' runs); results in patch order.
 */
export async function testRuns(
  backend: SandboxBackend,
  task: Task,
  patches: readonly string[],
  spec: Omit<TestRunSpec, 'patch'>,
  options: TestRunOptions & { slots: Slots },
): Promise<TestRunResult[]> {
  const distinct = [...new Set(patches)];
  const results = await Promise.all(distinct.map((patch) => options.slots.run(() => testRun(backend, task, { ...spec, patch }, options))));
  const byPatch = new Map(distinct.map((patch, i) => [patch, results[i]!]));
  return patches.map((patch) => byPatch.get(patch)!);
}
