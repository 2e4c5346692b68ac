/**
 * A curriculum over generated tasks (`tasks.curriculum`, with `tasks.generate`): tiers of
 * difficulty, easiest first, each its own pool of train-split tasks made with the generate knobs
 * under the tier's own (bug kinds, languages, functions and lines a file). GRPO-style RL learns
 * only from groups whose rewards differ, so a run starts where the policy solves some tasks and
 * not others, and moves on when it has learned them: every `checkEvery` steps the current tier's
 * dev slice (train-split seeds never trained on) is played greedily, and at `advanceAt` resolved
 * the next tier's pool takes over. Held-out tasks never enter the rule. The tier, the dev rate
 * and every advance are in each step's metrics; the tier is in the trainer state, so a resumed
 * run goes on where it was, and in the run's summary, so a later phase (RL after RFT) can start
 * there (`startTier`). With `placement`, a fresh run checks the dev slices before its first step
 * too, so that it does not spend steps on a tier the policy has already learned.
 */
import { invalidArg } from '../errors.js';
import { BUG_KINDS } from '../env/swe-gen/bugs.js';
import { parseSweGenTaskOptions, type SweGenTaskOptions } from '../env/swe-gen/options.js';
import { LANGUAGES } from '../env/swe-gen/program.js';
import type { Infer } from '../schema.js';
import type { TaskRef } from '../env/task.js';

const RANGE = { type: 'object', additionalProperties: false, required: ['min', 'max'], properties: { min: { type: 'integer', minimum: 1, maximum: 1000 }, max: { type: 'integer', minimum: 1, maximum: 1000 } } } as const;

export const CURRICULUM_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['tiers'],
  properties: {
    /** Easiest first; the last is usually the full distribution (a tier of no knobs: the generate knobs). */
    tiers: {
      type: 'array',
      minItems: 1,
      maxItems: 32,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name'],
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 64 },
          // Kinds and languages are checked by name in tierOptions, which says which ones exist.
          kinds: { type: 'array', items: { type: 'string' }, minItems: 1, uniqueItems: true },
          languages: { type: 'array', items: { type: 'string' }, minItems: 1, uniqueItems: true },
          functions: RANGE,
          lines: RANGE,
        },
      },
    },
    /** The dev slice's greedy resolve rate at which the next tier takes over (0: at every check, a fixed schedule). */
    advanceAt: { type: 'number', minimum: 0, maximum: 1, default: 0.5 },
    /** Dev tasks per tier: train-split seeds after the tier's pool, never trained on. */
    devTasks: { type: 'integer', minimum: 1, maximum: 100_000, default: 32 },
    /** Steps between checks of the dev slice. */
    checkEvery: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 2 },
    /** The tier a fresh run starts in (a later phase going on from where an earlier one got to); a resumed run goes on in its own. */
    startTier: { type: 'string', minLength: 1, maxLength: 64 },
    /**
     * Before a fresh run's first step, play the dev slices from the start tier on, taking the next
     * tier while one passes advanceAt: the run starts where the policy still fails some tasks.
     */
    placement: { type: 'boolean', default: false },
  },
} as const;
/** A curriculum as resolved (every default filled). */
export type CurriculumConfig = Infer<typeof CURRICULUM_SCHEMA>;
export type CurriculumTierConfig = CurriculumConfig['tiers'][number];

/** Each tier's swe-gen knobs: the generate knobs under the tier's. Unknown kinds or languages are refused by name. */
export function tierOptions(curriculum: CurriculumConfig, generate: Partial<SweGenTaskOptions>, field = 'config.tasks.curriculum'): SweGenTaskOptions[] {
  const names = new Set<string>();
  const options = curriculum.tiers.map((tier, i) => {
    const where = `${field}.tiers[${i}]`;
    if (names.has(tier.name)) throw invalidArg(`${where}.name`, `repeats ${JSON.stringify(tier.name)}`, 'give each tier its own name');
    names.add(tier.name);
    for (const kind of tier.kinds ?? [])
      if (!(BUG_KINDS as readonly string[]).includes(kind)) throw invalidArg(`${where}.kinds`, `names ${JSON.stringify(kind)}, which is not a bug kind`, `use some of ${BUG_KINDS.join(', ')}`);
    for (const language of tier.languages ?? [])
      if (!(LANGUAGES as readonly string[]).includes(language)) throw invalidArg(`${where}.languages`, `names ${JSON.stringify(language)}, which is not a language of swe-gen`, `use some of ${LANGUAGES.join(', ')}`);
    const { name: _name, ...knobs } = tier;
    return parseSweGenTaskOptions({ ...generate, ...knobs }, where);
  });
  if (curriculum.startTier !== undefined) tierIndex([...names], curriculum.startTier, `${field}.startTier`);
  return options;
}

/** Where the tier named `name` is among `names`; refused by `field` when it is none of them. */
function tierIndex(names: readonly string[], name: string, field: string): number {
  const i = names.indexOf(name);
  if (i < 0) throw invalidArg(field, `names ${JSON.stringify(name)}, which is not one of its tiers`, `use one of ${names.join(', ')}`);
  return i;
}

/** Where tier i's tasks sit among the train split's seeds from `firstSeed`: its pool, then its dev slice; tiers never share a seed. */
export function tierSeeds(i: number, train: number, devTasks: number, firstSeed = 0): { pool: { firstSeed: number; count: number }; dev: { firstSeed: number; count: number } } {
  const first = firstSeed + i * (train + devTasks);
  return { pool: { firstSeed: first, count: train }, dev: { firstSeed: first + train, count: devTasks } };
}

export interface CurriculumTier {
  name: string;
  train: TaskRef[];
  dev: TaskRef[];
}

/** The tiers of a run and which one it is on. */
export class Curriculum {
  #tier = 0;

  constructor(
    readonly tiers: readonly CurriculumTier[],
    readonly config: CurriculumConfig,
  ) {
    if (tiers.length === 0) throw invalidArg('curriculum', 'has no tiers');
    if (config.startTier !== undefined) this.#tier = tierIndex(tiers.map((tier) => tier.name), config.startTier, 'curriculum.startTier');
  }

  get tier(): number {
    return this.#tier;
  }

  get current(): CurriculumTier {
    return this.tiers[this.#tier]!;
  }

  get last(): boolean {
    return this.#tier === this.tiers.length - 1;
  }

  /** Goes to tier `i` (a resumed run's). */
  resume(i: number): void {
    if (!Number.isInteger(i) || i < 0 || i >= this.tiers.length) throw invalidArg('curriculum tier', `${i} is not a tier of this run (0..${this.tiers.length - 1})`, 'resume with the config the run started with');
    this.#tier = i;
  }

  /** Whether `step` checks the dev slice. */
  checks(step: number): boolean {
    return !this.last && step % this.config.checkEvery === 0;
  }

  /** Records a dev rate; advances when it reaches advanceAt. Returns whether it advanced. */
  observe(devRate: number): boolean {
    if (this.last || devRate < this.config.advanceAt) return false;
    this.#tier++;
    return true;
  }
}

/**
 * Offline difficulty filtering of a curriculum's pools (for tasks.only): each tier's pool task
 * ids less those whose every sampled episode resolved (Nebius and DeepSWE leave such tasks out
 * of RL: their groups are never mixed, so GRPO learns nothing from them, and rejection
 * fine-tuning replays fixes the policy already has). A task never sampled stays, and a tier whose
 * every task was solved every time keeps its whole pool (tasks.only refuses a tier left empty,
 * and a placement steps past a tier its policy has learned anyway).
 */
export function unsolvedPools(pools: readonly (readonly string[])[], episodes: readonly { taskId: string; reward: number }[]): string[] {
  const played = new Map<string, { episodes: number; resolved: number }>();
  for (const episode of episodes) {
    const count = played.get(episode.taskId) ?? { episodes: 0, resolved: 0 };
    count.episodes++;
    if (episode.reward === 1) count.resolved++;
    played.set(episode.taskId, count);
  }
  const alwaysSolved = (id: string) => {
    const count = played.get(id);
    return count !== undefined && count.resolved === count.episodes;
  };
  return pools.flatMap((pool) => {
    const left = pool.filter((id) => !alwaysSolved(id));
    return left.length > 0 ? left : [...pool];
  });
}
