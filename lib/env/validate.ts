/**
 * Task validation: in a real sandbox, the gold patch must score 1 and the untouched
 * repository 0, each run several times; differing results across runs mark the task flaky.
 */
import { mapBounded } from '../util/bounded.js';
import { applyPatch } from './repo.js';
import { PASSING } from './reward/resolve.js';
import type { SandboxBackend } from './sandbox/sandbox.js';
import { SweEnv, type SweEnvOptions } from './swe-env.js';
import type { Task, TaskValidation, ValidationRun } from './task.js';

export interface ValidateOptions {
  runs?: number;
  concurrency?: number;
  env?: Partial<SweEnvOptions>;
  /** Called as each task finishes. */
  onTask?: (result: TaskValidation) => void;
}

async function runOnce(task: Task, backend: SandboxBackend, gold: boolean, env: Partial<SweEnvOptions>): Promise<ValidationRun> {
  const started = performance.now();
  // The base run grades the untouched repository: its failing tests must really fail.
  const episode = new SweEnv(task, backend, { ...env, emptyPatch: 'grade' });
  try {
    await episode.reset();
    if (gold) await applyPatch(episode.currentSandbox!, task.goldPatch!);
    const { reward, reason, tests } = await episode.reward();
    const passToPass = task.resolution.rule === 'swe-bench' ? task.resolution.passToPass : [];
    const brokenPassToPass = passToPass.filter((id) => !PASSING.includes(tests[id]!));
    return { reward, reason, durationMs: performance.now() - started, brokenPassToPass, ...(Object.keys(tests).length ? { tests } : {}) };
  } catch (error) {
    return { reward: 0, reason: `harness error: ${(error as Error).message}`, durationMs: performance.now() - started, brokenPassToPass: [] };
  } finally {
    await episode.close();
  }
}

export async function validateTask(task: Task, backend: SandboxBackend, options: ValidateOptions = {}): Promise<TaskValidation> {
  const runs = options.runs ?? 2;
  const env = options.env ?? {};
  if (task.goldPatch === undefined) {
    return { id: task.id, gold: [], base: [], ok: false, flaky: false, problem: 'the task has no gold patch' };
  }
  const gold: ValidationRun[] = [];
  const base: ValidationRun[] = [];
  for (let i = 0; i < runs; i++) {
    gold.push(await runOnce(task, backend, true, env));
    base.push(await runOnce(task, backend, false, env));
  }
  const flaky = new Set(gold.map((r) => r.reward)).size > 1 || new Set(base.map((r) => r.reward)).size > 1;
  const badGold = gold.find((r) => r.reward !== 1);
  const badBase = base.find((r) => r.reward !== 0);
  // A base run that fails for the wrong reason (a PASS_TO_PASS test broken) means a broken task.
  const brokenBase = base.find((r) => r.brokenPassToPass.length > 0);
  const problem = badGold
    ? `gold scored 0: ${badGold.reason}`
    : badBase
      ? 'the untouched repository scored 1'
      : brokenBase
        ? `PASS_TO_PASS tests fail on the untouched repository: ${brokenBase.brokenPassToPass.slice(0, 5).join(', ')}`
        : undefined;
  return { id: task.id, gold, base, ok: !problem, flaky, ...(problem ? { problem } : {}) };
}

/** Validates tasks with bounded concurrency; results in task order. */
export async function validateTasks(tasks: readonly Task[], backend: SandboxBackend, options: ValidateOptions = {}): Promise<TaskValidation[]> {
  return mapBounded(tasks, options.concurrency ?? 2, async (task) => {
    const result = await validateTask(task, backend, options);
    options.onTask?.(result);
    return result;
  });
}

/** A plain-text table of validation results. */
export function validationTable(results: readonly TaskValidation[]): string {
  const rows = results.map((r) => [
    r.id,
    r.gold.map((g) => g.reward).join(' '),
    r.base.map((b) => b.reward).join(' '),
    `${(Math.max(0, ...r.gold.map((g) => g.durationMs), ...r.base.map((b) => b.durationMs)) / 1000).toFixed(1)}s`,
    r.ok ? 'ok' : `${r.flaky ? 'FLAKY' : 'FAIL'}: ${r.problem}`,
  ]);
  const header = ['task', 'gold', 'base', 'slowest', 'result'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (i < 4 ? row[i]!.length : 0))));
  const format = (row: string[]) => row.map((cell, i) => (i < 4 ? cell.padEnd(widths[i]!) : cell)).join('  ');
  return [format(header), ...rows.map(format)].join('\n');
}
