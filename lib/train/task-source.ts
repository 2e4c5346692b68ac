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
import type { TaskRef } from '../env/task.js';
import { sweGenSuiteIds, writeSweGenSuite, type SweGenSuiteRequest } from '../env/swe-gen/suite.js';
import type { FrozenLakeTasksConfig, SweGenerateConfig, SweTasksConfig, TasksConfig } from './config.js';
import { Curriculum, tierOptions, tierSeeds, type CurriculumConfig } from './curriculum.js';

export interface TaskSource {
  /** The tasks training steps draw from (with a curriculum: its current tier's). */
  readonly train: readonly TaskRef[];
  readonly evaluation: readonly TaskRef[];
  /** The tiers of tasks.curriculum, when the config has one. */
  readonly curriculum?: Curriculum;
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
    private readonly pool: TaskRef[],
    readonly evaluation: TaskRef[],
    private readonly backend: SandboxBackend,
    private readonly config: SweTasksConfig,
    private readonly label: string,
    readonly curriculum?: Curriculum,
  ) {}

  get train(): readonly TaskRef[] {
    return this.curriculum ? this.curriculum.current.train : this.pool;
  }

  makeEnv(ref: TaskRef): Env {
    return new SweEnv(ref.task!, this.backend, { ...this.config.env, label: this.label });
  }
}

/** The generated suites of a run: the held-out ids, and (with a curriculum) each tier's pool and dev ids. */
interface GeneratedIds {
  heldout: string[];
  tiers?: { pool: string[]; dev: string[] }[];
}

/**
 * Writes the generated train and held-out suites into `dir` (the same bytes for the same knobs,
 * so a resumed run finds what it started with). With a curriculum, each tier's pool and dev
 * slice instead of one train suite (tierSeeds: tiers never share a seed). `reuse` (a
 * data-parallel follower): where every task is there already (rank 0 wrote them, on this node
 * or a shared filesystem), nothing is rewritten under rank 0's sandboxes.
 */
async function generateSuites(dir: string, generate: SweGenerateConfig, curriculum: CurriculumConfig | undefined, reuse: boolean): Promise<GeneratedIds> {
  const { train, heldout, firstSeed = 0, ...knobs } = generate;
  const suites: { ids: string[]; write: () => Promise<unknown> }[] = [];
  const suite = (request: SweGenSuiteRequest) => {
    const ids = sweGenSuiteIds(request);
    suites.push({ ids, write: () => writeSweGenSuite(dir, { ...request, force: true }) });
    return ids;
  };
  let tiers: GeneratedIds['tiers'];
  if (curriculum) {
    tiers = tierOptions(curriculum, knobs).map((options, i) => {
      const seeds = tierSeeds(i, train, curriculum.devTasks, firstSeed);
      return { pool: suite({ ...options, split: 'train', ...seeds.pool }), dev: suite({ ...options, split: 'train', ...seeds.dev }) };
    });
  } else {
    suite({ ...knobs, split: 'train', firstSeed, count: train });
  }
  const heldoutIds = heldout === 0 ? [] : suite({ ...knobs, split: 'heldout', firstSeed, count: heldout });
  const all = suites.flatMap((s) => s.ids);
  if (new Set(all).size !== all.length) throw invalidArg('config.tasks.curriculum', 'makes two suites share a task id', 'report it: tiers are meant to take disjoint seeds');
  if (!(reuse && all.every((id) => existsSync(path.join(dir, id))))) for (const s of suites) await s.write();
  return { heldout: heldoutIds, ...(tiers ? { tiers } : {}) };
}

/**
 * The curriculum's tiers of tasks. tasks.only narrows each tier's pool as it does an untiered
 * suite (a run's RL pool without the tasks its policy already solves every time, say); the dev
 * slices stay whole, since they measure the tier, and a tier left without a pool task is refused.
 */
function tieredSource(tiers: NonNullable<GeneratedIds['tiers']>, config: CurriculumConfig, only: readonly string[] | undefined, pick: (ids: readonly string[], field: string) => TaskRef[]): Curriculum {
  const kept = only ? new Set(only) : undefined;
  return new Curriculum(
    tiers.map((tier, i) => {
      const name = config.tiers[i]!.name;
      const pool = kept ? tier.pool.filter((id) => kept.has(id)) : tier.pool;
      if (pool.length === 0) throw invalidArg('config.tasks.only', `leaves tier ${JSON.stringify(name)} of config.tasks.curriculum no task to train on (its ${tier.pool.length} pool tasks are all left out)`, 'name at least one of its pool tasks, or drop the tier');
      return { name, train: pick(pool, 'config.tasks.curriculum'), dev: pick(tier.dev, 'config.tasks.curriculum') };
    }),
    config,
  );
}

/**
 * algorithm.partialCredit grades an unresolved episode by its patch's similarity to its task's
 * gold patch: refused at the start of a run when a training task has none (a generated task,
 * made when played, always has one).
 */
export function assertGoldPatches(source: TaskSource, field: string): void {
  const pools = source.curriculum ? source.curriculum.tiers.map((tier) => tier.train) : [source.train];
  for (const ref of pools.flat()) {
    if (ref.task && (ref.task.goldPatch === undefined || ref.task.goldPatch.trim() === '')) {
      throw invalidArg(field, `grades unresolved episodes by their similarity to the task's gold patch, and training task ${ref.id} has none`, 'give every training task a gold patch (gold.patch in a task folder, patch in a row), or remove it');
    }
  }
}

/** The tasks of a config, loaded and checked. */
export async function openTaskSource(config: TasksConfig, label: string, options: { reuseGenerated?: boolean } = {}): Promise<TaskSource> {
  if (config.kind === 'frozenlake') return new FrozenLakeSource(config);
  const generated = config.generate ? await generateSuites(config.path, config.generate, config.curriculum, options.reuseGenerated ?? false) : { heldout: [] };
  const heldout = generated.heldout;
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
  const devIds = new Set(generated.tiers?.flatMap((t) => t.dev) ?? []);
  const trainIds = (config.only ?? tasks.map((t) => t.id)).filter((id) => !evalIds.includes(id) && !devIds.has(id));
  const train = pick(trainIds, 'config.tasks.only');
  if (train.length === 0) throw invalidArg('config.tasks', `leaves no training task under ${config.path}`);
  const curriculum = generated.tiers && config.curriculum ? tieredSource(generated.tiers, config.curriculum, config.only, pick) : undefined;
  assertRunnable([...train.map((r) => r.task!), ...evalIds.map((id) => byId.get(id)!).filter(Boolean)], config.sandbox);
  const backend = await createSandboxBackend(config.sandbox, { ...config.sandboxOptions, label });
  return new SweSource(train, evalIds.length ? pick(evalIds, 'config.tasks.evalIds') : train, backend, config, label, curriculum);
}
