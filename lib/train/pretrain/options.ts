/** The training config's `pretrain` section: which reading drills a step is made of, and the copy probes. */
import { SwerlError, invalidArg } from '../../errors.js';
import { resolveJobConfig, type JobConfig } from '../config.js';
import { BUG_KINDS } from '../../env/swe-gen/bugs.js';
import { LANGUAGES } from '../../env/swe-gen/program.js';
import { optionsParser, type Infer } from '../../schema.js';
import { DEFAULT_DRILLS, DRILL_TURNS, makeDrill, type DrillOptions, type DrillTurn } from './drills.js';

const RANGE = (max: number) =>
  ({
    type: 'object',
    additionalProperties: false,
    required: ['min', 'max'],
    properties: { min: { type: 'integer', minimum: 0, maximum: max }, max: { type: 'integer', minimum: 0, maximum: max } },
  }) as const;

const PRETRAIN_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    /** The drills' programs, turns and mix (drills.ts DrillOptions); the split is always train. */
    drills: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        mix: {
          type: 'object',
          additionalProperties: false,
          properties: Object.fromEntries(DRILL_TURNS.map((k) => [k, { type: 'number', minimum: 0, maximum: 1000 } as const])) as Record<DrillTurn, { type: 'number'; minimum: 0; maximum: 1000 }>,
          default: DEFAULT_DRILLS.mix,
        },
        turns: { ...RANGE(48), default: DEFAULT_DRILLS.turns },
        echoWords: { ...RANGE(512), default: DEFAULT_DRILLS.echoWords },
        programs: {
          type: 'object',
          additionalProperties: false,
          default: {},
          properties: {
            /** Always train (checked below): a run directory's config.json has it written out, and loads again. */
            split: { type: 'string' },
            firstSeed: { type: 'integer', minimum: 0, maximum: 2 ** 31 - 1, default: DEFAULT_DRILLS.programs.firstSeed },
            count: { type: 'integer', minimum: 1, maximum: 2 ** 31, default: DEFAULT_DRILLS.programs.count },
            functions: RANGE(8),
            lines: RANGE(200),
            languages: { type: 'array', items: { enum: LANGUAGES }, minItems: 1, uniqueItems: true },
            kinds: { type: 'array', items: { enum: BUG_KINDS }, minItems: 1, uniqueItems: true },
          },
        },
        renameFiles: { type: 'number', minimum: 0, maximum: 1, default: DEFAULT_DRILLS.renameFiles },
        partialViews: { type: 'number', minimum: 0, maximum: 1, default: DEFAULT_DRILLS.partialViews },
        maxSteps: { type: 'integer', minimum: 2, maximum: 1000, default: DEFAULT_DRILLS.maxSteps },
        workdir: { type: 'string', pattern: '^/', default: DEFAULT_DRILLS.workdir },
      },
    },
    /** Drills per optimizer step. */
    sequencesPerStep: { type: 'integer', minimum: 1, maximum: 100_000, default: 8 },
    /**
     * Repeated spans of random ids (drills.ts repeatIds): the first `warmupSteps` steps are
     * `warmupSequences` of them and nothing else, until the copying circuit forms; afterwards
     * `sequencesPerStep` of them join each step's drills, so it stays.
     */
    repeats: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        warmupSteps: { type: 'integer', minimum: 0, maximum: 10_000_000, default: 600 },
        warmupSequences: { type: 'integer', minimum: 1, maximum: 100_000, default: 32 },
        sequencesPerStep: { type: 'integer', minimum: 0, maximum: 100_000, default: 16 },
        length: { ...RANGE(4096), default: { min: 8, max: 64 } },
      },
    },
    /**
     * Lookup sheets (drills.ts lookupIds): a program's view, then lines asked for by number and
     * given, `queries` of them a sheet. After the repeats' warm-up, `sequencesPerStep` of them
     * join each step's drills (0: none, and no draw is made).
     */
    lookups: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        sequencesPerStep: { type: 'integer', minimum: 0, maximum: 100_000, default: 0 },
        queries: { ...RANGE(1024), default: { min: 8, max: 16 } },
      },
    },
    /** Copy probes on held-out programs: every this many steps (0: after the last only), this many of each kind. */
    probes: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        every: { type: 'integer', minimum: 0, maximum: 10_000_000, default: 250 },
        count: { type: 'integer', minimum: 1, maximum: 100_000, default: 50 },
        seed: { type: 'integer', minimum: 0, maximum: 0xffffffff, default: 0 },
      },
    },
  },
} as const;
export type PretrainConfig = Omit<Infer<typeof PRETRAIN_SCHEMA>, 'drills'> & { drills: DrillOptions };

const parse = optionsParser(PRETRAIN_SCHEMA);

/** The section checked and defaulted; a mix of all zeros, a range with min > max, or drills too long for their step budget are refused here. */
export function resolvePretrainOptions(raw: unknown, field = 'config.pretrain'): PretrainConfig {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalidArg(field, 'must be an object', 'e.g. {"sequencesPerStep": 8, "drills": {"programs": {"lines": {"min": 4, "max": 20}}}}');
  const parsed = parse(raw, field);
  const { split, ...programs } = parsed.drills.programs;
  if (split !== undefined && split !== 'train') throw invalidArg(`${field}.drills.programs.split`, `is ${JSON.stringify(split)}; drills read train-split programs only (the copy probes read held-out ones)`, 'remove it');
  const drills: DrillOptions = { ...parsed.drills, mix: { ...DEFAULT_DRILLS.mix, ...parsed.drills.mix }, programs: { ...programs, split: 'train' } };
  const options: PretrainConfig = { ...parsed, drills };
  if (Object.values(drills.mix).every((w) => w === 0)) throw invalidArg(`${field}.drills.mix`, 'gives every turn kind weight 0', `give one of ${DRILL_TURNS.join(', ')} a positive weight`);
  for (const [name, range] of [['drills.turns', drills.turns], ['drills.echoWords', drills.echoWords], ['drills.programs.functions', drills.programs.functions], ['drills.programs.lines', drills.programs.lines], ['repeats.length', options.repeats.length], ['lookups.queries', options.lookups.queries]] as const)
    if (range && range.min > range.max) throw invalidArg(`${field}.${name}`, `has min ${range.min} > max ${range.max}`);
  if (options.repeats.length.min < 1) throw invalidArg(`${field}.repeats.length.min`, 'must be at least 1');
  if (options.lookups.queries.min < 1) throw invalidArg(`${field}.lookups.queries.min`, 'must be at least 1');
  if (drills.programs.functions && drills.programs.functions.min < 1) throw invalidArg(`${field}.drills.programs.functions.min`, 'must be at least 1');
  if (drills.turns.max > drills.maxSteps - 2)
    throw invalidArg(`${field}.drills.turns.max`, `(${drills.turns.max}) leaves no step for the first view and finish within maxSteps ${drills.maxSteps}`, `lower it to ${drills.maxSteps - 2}, or raise maxSteps`);
  // Programs the generator cannot make are found now, not after the model has loaded.
  try {
    makeDrill(0, 0, drills);
  } catch (error) {
    if (error instanceof SwerlError) throw invalidArg(`${field}.drills.programs`, error.message.replace(/^options /, ''));
    throw error;
  }
  return options;
}

/** A pretraining config (a `pretrain` section): reading drills instead of data or rollouts; tasks, algorithm and sampler are checked but unused. */
export type PretrainTrainConfig = JobConfig<'pretrain', PretrainConfig>;

/** Validates and defaults a pretraining config (one with a `pretrain` section). */
export function resolvePretrainConfig(value: unknown, baseDir = process.cwd()): PretrainTrainConfig {
  return resolveJobConfig(value, baseDir, 'pretrain', resolvePretrainOptions, 'pretraining', '{"sequencesPerStep": 8}');
}
