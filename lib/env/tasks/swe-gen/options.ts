/**
 * The knobs of swe-gen, validated and defaulted once. The defaults suit a tiny model trained
 * from scratch on a CPU: one file of 15-40 lines holding 2-4 short functions, one bug, a
 * one-line fix (a guard line added, for a missing case).
 */
import { invalidArg } from '../../../errors.js';
import { optionsParser } from '../../../schema.js';
import { BUG_KINDS, type BugKind } from './bugs.js';
import { LANGUAGES, type Language } from './program.js';
import { SEEDS_PER_SPLIT, SPLITS, type Split } from './splits.js';

export interface Range {
  min: number;
  max: number;
}

/** What each task is made of. */
export interface SweGenTaskOptions {
  /** Languages a task's language is drawn from. Default both. */
  languages: Language[];
  /** Bug kinds a bug's kind is drawn from. Default all five. */
  kinds: BugKind[];
  /** Functions in the file (each task draws a number in the range). Default 2-4. */
  functions: Range;
  /** Lines of the source file as the agent sees it (approximate file size). Default 15-40. */
  lines: Range;
  /** Bugs per task, each in its own function. Default 1. */
  bugs: 1 | 2;
}

/** A suite: which seeds of which split, and what its tasks are made of. */
export interface SweGenSuiteOptions extends SweGenTaskOptions {
  /** Default train. */
  split: Split;
  /** Tasks in the suite. Default 100. */
  count: number;
  /** The first seed; the suite holds seeds firstSeed .. firstSeed + count - 1. Default 0. */
  firstSeed: number;
  /** Write into a folder that is not empty (replacing tasks of the same ids). Default false. */
  force: boolean;
}

const MAX_FUNCTIONS = 8;

function rangeSchema(min: number, max: number, defaults: Range) {
  const bound = (value: number) => ({ type: 'integer', minimum: min, maximum: max, default: value });
  return { type: 'object', additionalProperties: false, properties: { min: bound(defaults.min), max: bound(defaults.max) }, default: {} };
}

const TASK_PROPERTIES = {
  languages: { type: 'array', items: { enum: [...LANGUAGES] }, minItems: 1, uniqueItems: true, default: [...LANGUAGES] },
  kinds: { type: 'array', items: { enum: [...BUG_KINDS] }, minItems: 1, uniqueItems: true, default: [...BUG_KINDS] },
  functions: rangeSchema(1, MAX_FUNCTIONS, { min: 2, max: 4 }),
  lines: rangeSchema(1, 1000, { min: 15, max: 40 }),
  bugs: { enum: [1, 2], default: 1 },
};

const parseTask = optionsParser<SweGenTaskOptions>({ type: 'object', additionalProperties: false, properties: TASK_PROPERTIES });

const parseSuite = optionsParser<SweGenSuiteOptions>({
  type: 'object',
  additionalProperties: false,
  properties: {
    ...TASK_PROPERTIES,
    split: { enum: [...SPLITS], default: 'train' },
    count: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 100 },
    firstSeed: { type: 'integer', minimum: 0, maximum: SEEDS_PER_SPLIT - 1, default: 0 },
    force: { type: 'boolean', default: false },
  },
});

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
