/**
 * The regression half of the execution-based verifier: the repository's own tests that pass at
 * the base commit, run against each candidate. A candidate that breaks working behaviour
 * passes fewer. The task's test command runs with the repository's test files as the base has
 * them (the hidden tests never enter); a task whose tests cannot run at the base (R2E-Gym
 * images hold theirs outside the repository) has no regression tests and every score 0.
 */
import type { SandboxBackend } from '../env/sandbox/sandbox.js';
import type { Task } from '../env/task.js';
import type { Slots } from '../util/bounded.js';
import { testRuns, type TestRunOptions } from './test-run.js';

export interface RegressionResult {
  /** The tests that pass at the base commit. */
  baseline: string[];
  /** For each patch, how many of the baseline still pass with it. */
  passes: number[];
  /** Why the baseline is empty, when it is. */
  note?: string;
}

export async function regressionScores(backend: SandboxBackend, task: Task, patches: readonly string[], options: TestRunOptions & { slots: Slots }): Promise<RegressionResult> {
  const [base, ...runs] = await testRuns(backend, task, ['', ...patches], {}, options);
  const baseline = base!.statuses ? [...base!.statuses].filter(([, status]) => status === 'PASSED').map(([id]) => id).sort() : [];
  const passes = runs.map((run) => (run.statuses ? baseline.filter((id) => run.statuses.get(id) === 'PASSED').length : 0));
  const note = !base!.statuses ? `the tests did not run at the base: ${base!.reason}` : baseline.length === 0 ? 'no test passes at the base commit' : undefined;
  return { baseline, passes, ...(note ? { note } : {}) };
}
