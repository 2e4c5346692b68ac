/**
 * The knobs of swe-gen, validated and defaulted once. The defaults suit a tiny model trained
 * from scratch on a CPU: one file of 15-40 lines holding 2-4 short functions, one bug, a
 * one-line fix (a guard line added, for a missing case).
 */
import { invalidArg } from '../../errors.js';
import { optionsParser, type Infer } from '../../schema.js';
import { BUG_KINDS } from './bugs.js';
import { LANGUAGES } from './program.js';
import { SEEDS_PER_SPLIT, SPLITS } from './splits.js';

const MAX_FUNCTIONS = 8;

function rangeSchema(min: number, max: number, defaults: Range) {
  const bound = (value: number) => ({ type: 'integer', minimum: min, maximum: max, default: value }) as const;
  return { type: 'object', additionalProperties: false, properties: { min: bound(defaults.min), max: bound(defaults.max) }, default: {} } as const;
}

/** What each task is made of. */
const TASK_PROPERTIES = {
  /** Languages a task's language is drawn from (default both). */
  languages: { type: 'array', items: { enum: LANGUAGES }, minItems: 1, uniqueItems: true, default: [...LANGUAGES] },
  /** Bug kinds a bug's kind is drawn from (default all five). */
  kinds: { type: 'array', items: { enum: BUG_KINDS }, minItems: 1, uniqueItems: true, default: [...BUG_KINDS] },
  /** Functions in the file (each task draws a number in the range). */
  functions: rangeSchema(1, MAX_FUNCTIONS, { min: 2, max: 4 }),
  /** Lines of the source file as the agent sees it (approximate file size). */
  lines: rangeSchema(1, 1000, { min: 15, max: 40 }),
  /** Bugs per task, each in its own function. */
  bugs: { enum: [1, 2], default: 1 },
} as const;
const TASK_SCHEMA = { type: 'object', additionalProperties: false, properties: TASK_PROPERTIES } as const;
export type SweGenTaskOptions = Infer<typeof TASK_SCHEMA>;
export interface Range {
  min: number;
  max: number;
}

/** A suite: which seeds of which split, and what its tasks are made of. */
const SUITE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...TASK_PROPERTIES,
    split: { enum: SPLITS, default: 'train' },
    /** Tasks in the suite. */
    count: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 100 },
    /** The first seed; the suite holds seeds firstSeed .. firstSeed + count - 1. */
    firstSeed: { type: 'integer', minimum: 0, maximum: SEEDS_PER_SPLIT - 1, default: 0 },
    /** Write into a folder that is not empty (replacing tasks of the same ids). */
    force: { type: 'boolean', default: false },
  },
} as const;
export type SweGenSuiteOptions = Infer<typeof SUITE_SCHEMA>;

const parseTask = optionsParser(TASK_SCHEMA);
const parseSuite = optionsParser(SUITE_SCHEMA);

function checkTask(options: SweGenTaskOptions, field: string): void {
  for (const name of ['functions', 'lines'] as const) {
    const { min, max } = options[name];
    if (min > max) throw invalidArg(`${field}.${name}`, `has min ${min} above max ${max}`, 'give min <= max');
  }
  if (options.functions.min < options.bugs) {
    throw invalidArg(`${field}.functions.min`, `is ${options.functions.min} but bugs is ${options.bugs}: each bug needs a function of its own`, `give functions.min >= ${options.bugs}`);
  }
}

export function parseSweGenTaskOptions(value: unknown, field = 'sweGen'): SweGenTaskOptions {
  const options = parseTask(value, field);
  checkTask(options, field);
  return options;
}

export function parseSweGenSuiteOptions(value: unknown, field = 'sweGen'): SweGenSuiteOptions {
  const options = parseSuite(value, field);
  checkTask(options, field);
  if (options.firstSeed + options.count > SEEDS_PER_SPLIT) {
    throw invalidArg(`${field}.count`, `runs past the split's last seed (${SEEDS_PER_SPLIT - 1}) from firstSeed ${options.firstSeed}`, 'give fewer tasks or an earlier firstSeed');
  }
  return options;
}

/** The task options of suite options (what each task is made of). */
export function taskOptionsOf(options: SweGenTaskOptions): SweGenTaskOptions {
  const { languages, kinds, functions, lines, bugs } = options;
  return { languages, kinds, functions, lines, bugs };
}
