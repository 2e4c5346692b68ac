/** The training config's `sft` section: what to train on and how a step is made. */
import path from 'node:path';

import { invalidArg } from '../../errors.js';
import { resolveJobConfig, type JobConfig } from '../config.js';
import { optionsParser, type Infer } from '../../schema.js';
import { TERMINATION_REASONS } from '../../types/termination.js';
import { SFT_FORMATS } from './data.js';

export const SFT_TRAIN_ON = ['assistant', 'all'] as const;
export type SftTrainOn = (typeof SFT_TRAIN_ON)[number];

const SFT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['data'],
  properties: {
    /** Chat JSONL files, trajectory files, folders of them or run directories (relative: from the config file's folder). */
    data: { type: 'array', minItems: 1, maxItems: 100_000, items: { type: 'string', minLength: 1 } },
    /** 'auto': each file's format told by its first record. */
    format: { enum: [...SFT_FORMATS], default: 'auto' },
    /** Trajectories only: keep those with an environment reward at least this (1: solved). */
    minReward: { type: 'number' },
    /** Trajectories only: keep those that ended in one of these ways. */
    terminations: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: [...TERMINATION_REASONS] } },
    /**
     * The tokens the loss trains: the assistant's (supervised fine-tuning), or every token but
     * the first (language modelling on the whole conversation: prompts and observations too, the
     * reading a model that has never seen code needs before it can copy a line from a file).
     */
    trainOn: { enum: [...SFT_TRAIN_ON], default: 'assistant' },
    /** Tokens per example at most. */
    maxLength: { type: 'integer', minimum: 2, maximum: 2 ** 24, default: 32768 },
    /** What happens to a longer example: dropped, or cut to its first maxLength tokens. */
    overlong: { enum: ['drop', 'truncate'], default: 'drop' },
    /** Examples per optimizer step. */
    sequencesPerStep: { type: 'integer', minimum: 1, maximum: 100_000, default: 8 },
    /** The share of examples held out of training, their NLL reported (0: none). */
    heldOutFraction: { type: 'number', minimum: 0, maximum: 0.5, default: 0 },
    /** Held-out NLL every this many steps, and after the last (0: after the last only). */
    heldOutEvery: { type: 'integer', minimum: 0, maximum: 10_000_000, default: 10 },
  },
} as const;
export type SftConfig = Infer<typeof SFT_SCHEMA>;

export const parseSftOptions = optionsParser(SFT_SCHEMA);

/**
 * The section checked and defaulted, its paths taken from baseDir (the config file's folder). A
 * single path may be given as a string.
 */
export function resolveSftOptions(raw: unknown, baseDir: string, field = 'config.sft'): SftConfig {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalidArg(field, 'must be an object', 'e.g. {"data": ["conversations.jsonl"]}');
  const value = raw as Record<string, unknown>;
  const sft = parseSftOptions(typeof value.data === 'string' ? { ...value, data: [value.data] } : value, field);
  sft.data = sft.data.map((p) => path.resolve(baseDir, p));
  return sft;
}

/**
 * A supervised fine-tuning config (an `sft` section): the same sections, tasks optional (with
 * tasks and eval.every, greedy eval runs as in RL); algorithm and sampler are checked but unused.
 */
export type SftTrainConfig = JobConfig<'sft', SftConfig>;

/**
 * Validates and defaults an SFT config (one with an `sft` section): the sections of
 * resolveTrainConfig with tasks optional, and sft.data taken from `baseDir` as tasks.path is.
 */
export function resolveSftConfig(value: unknown, baseDir = process.cwd()): SftTrainConfig {
  return resolveJobConfig(value, baseDir, 'sft', (section) => resolveSftOptions(section, baseDir), 'supervised fine-tuning', '{"data": ["conversations.jsonl"]}');
}
