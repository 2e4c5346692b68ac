/**
 * Where a run's episodes come from: FrozenLake maps by seed, or SWE tasks in sandboxes. A
 * source names its training and evaluation tasks and makes a fresh env for one.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';

import { SwerlError, invalidArg } from '../errors.js';
import type { Env } from '../env/env.js';
import { FrozenLakeEnv } from '../env/frozen-lake.js';
import { createSandboxBackend } from '../env/sandbox/backends.js';
import type { SandboxBackend } from '../env/sandbox/sandbox.js';
import { SweEnv } from '../env/swe-env.js';
import { assertRunnable, loadTasks } from '../env/tasks/load.js';
import type { Task } from '../env/tasks/task.js';
import { sweGenSuiteIds, writeSweGenSuite } from '../env/tasks/swe-gen/suite.js';
import type { FrozenLakeTasksConfig, SweGenerateConfig, SweTasksConfig, TasksConfig } from './config.js';

export interface TaskRef {
  id: string;
  task?: Task;
}

export interface TaskSource {
  readonly train: readonly TaskRef[];
  readonly evaluation: readonly TaskRef[];
  makeEnv(ref: TaskRef): Env;
  /** What the agent is told when its token budget runs low. */
  readonly budgetWarning: string;
}

export function frozenLakeTaskId(seed: number): string {
  return `frozenlake-${seed}`;
}

class FrozenLakeSource implements TaskSource {
  readonly train: TaskRef[];
  readonly evaluation: TaskRef[];
  readonly budgetWarning = 'You are about to run out of tokens: answer with your move now.';
  readonly #seeds = new Map<string, number>();

  constructor(private readonly config: FrozenLakeTasksConfig) {
    const ref = (seed: number): TaskRef => {
      const id = frozenLakeTaskId(seed);
      this.#seeds.set(id, seed);
      return { id };
    };
    this.train = config.trainSeeds.map(ref);
    this.evaluation = (config.evalSeeds ?? config.trainSeeds).map(ref);
  }

  makeEnv(ref: TaskRef): Env {
    const seed = this.#seeds.get(ref.id);
    if (seed === undefined) throw invalidArg('task id', `${ref.id} is not a map of this run`);
    const { size, holeDensity, slippery, maxSteps, prompt } = this.config;
    return new FrozenLakeEnv({ size, holeDensity, slippery, maxSteps, prompt, seed });
  }
}

class SweSource implements TaskSource {
  readonly budgetWarning = 'You are about to run out of context: call finish now to submit your work.';
  constructor(
    readonly train: TaskRef[],
    readonly evaluation: TaskRef[],
    private readonly backend: SandboxBackend,
    private readonly config: SweTasksConfig,
    private readonly label: string,
  ) {}

  makeEnv(ref: TaskRef): Env {
    return new SweEnv(ref.task!, this.backend, { ...this.config.env, label: this.label });
  }
}

/**
 * Writes the generated train and held-out suites into `dir` (the same bytes for the same knobs,
 * so a resumed run finds what it started with); resolves with the held-out ids. `reuse` (a
 * data-parallel follower): where every task is there already (rank 0 wrote them, on this node
 * or a shared filesystem), nothing is rewritten under rank 0's sandboxes.
 */
async function generateSuites(dir: string, generate: SweGenerateConfig, reuse: boolean): Promise<string[]> {
  const { train, heldout, ...knobs } = generate;
  if (reuse) {
    const trainIds = sweGenSuiteIds({ ...knobs, split: 'train', count: train });
    const heldoutIds = heldout === 0 ? [] : sweGenSuiteIds({ ...knobs, split: 'heldout', count: heldout });
    if ([...trainIds, ...heldoutIds].every((id) => existsSync(path.join(dir, id)))) return heldoutIds;
  }
  await writeSweGenSuite(dir, { ...knobs, split: 'train', count: train, force: true });
  if (heldout === 0) return [];
  const suite = await writeSweGenSuite(dir, { ...knobs, split: 'heldout', count: heldout, force: true });
  return suite.tasks.map((t) => t.id);
}

/** The tasks of a config, loaded and checked. */
export async function openTaskSource(config: TasksConfig, label: string, options: { reuseGenerated?: boolean } = {}): Promise<TaskSource> {
  if (config.kind === 'frozenlake') return new FrozenLakeSource(config);
  const heldout = config.generate ? await generateSuites(config.path, config.generate, options.reuseGenerated ?? false) : [];
  const { tasks, problems } = await loadTasks(config.path, {
    ...(config.format ? { format: config.format } : {}),
    ...(config.repos !== undefined ? { repos: config.repos } : {}),
    ...(config.testCommand !== undefined ? { testCommand: config.testCommand } : {}),
  });
  if (problems.length > 0) throw new SwerlError('ERR_SWERL_INVALID_TASK', `config.tasks.path: ${problems.map((p) => p.message).join('; ')}`);
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const pick = (ids: readonly string[], field: string): TaskRef[] =>
    ids.map((id) => {
      const task = byId.get(id);
      if (!task) throw invalidArg(field, `names ${JSON.stringify(id)}, which is not a task under ${config.path}`);
      return { id, task };
    });
  const evalIds = config.evalIds ?? heldout;
  const trainIds = (config.only ?? tasks.map((t) => t.id)).filter((id) => !evalIds.includes(id));
  const train = pick(trainIds, 'config.tasks.only');
  if (train.length === 0) throw invalidArg('config.tasks', `leaves no training task under ${config.path}`);
  assertRunnable([...train.map((r) => r.task!), ...evalIds.map((id) => byId.get(id)!).filter(Boolean)], config.sandbox);
  const backend = await createSandboxBackend(config.sandbox, { ...config.sandboxOptions, label });
  return new SweSource(train, evalIds.length ? pick(evalIds, 'config.tasks.evalIds') : train, backend, config, label);
}
