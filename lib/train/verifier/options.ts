/** `swerl train-verifier`'s options, checked and defaulted once. */
import path from 'node:path';

import { invalidArg } from '../../errors.js';
import { MODEL_PRESETS, type ModelPreset } from '../../model/model-config.js';
import { MAX_LR, MAX_THREADS } from '../../model/native-policy-options.js';
import { optionsParser } from '../../schema.js';
import { DEFAULT_JUDGE_TOKEN_BUDGET } from '../../tts/judge.js';

export interface TrainVerifierOptions {
  /** candidates.jsonl files of swerl eval, trajectories files of training runs, or folders of them. */
  data: string[];
  /** A task file or folder: problem statements for trajectories, by task id. */
  tasks?: string;
  /** The judge to start from: a Hugging Face model directory... */
  model?: string;
  /** ...or a preset trained from scratch with the byte tokenizer (tests, demos). */
  preset?: ModelPreset;
  /** Where the trained judge goes: a model directory, with the metrics and summary beside its weights. */
  out: string;
  /** Passes over the training set (DeepSWE trained its verifier for 2). */
  epochs: number;
  lr: number;
  /** Examples per optimizer step. */
  batchSize: number;
  seed: number;
  /** The share of records held out (whole tasks) for accuracy and AUC; 0: none. */
  heldOutFraction: number;
  /** Tokens of a judge prompt at most (judgePrompt's budget). */
  tokenBudget: number;
  device: string;
  /** libtorch threads; 0 = every core. */
  threads?: number;
  /** Replace `out` when it already holds something. */
  overwrite: boolean;
}

const parse = optionsParser<TrainVerifierOptions>({
  type: 'object',
  additionalProperties: false,
  required: ['data', 'out'],
  properties: {
    data: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
    tasks: { type: 'string', minLength: 1 },
    model: { type: 'string', minLength: 1 },
    preset: { enum: Object.keys(MODEL_PRESETS) },
    out: { type: 'string', minLength: 1 },
    epochs: { type: 'integer', minimum: 1, maximum: 10_000, default: 2 },
    lr: { type: 'number', exclusiveMinimum: 0, maximum: MAX_LR, default: 1e-5 },
    batchSize: { type: 'integer', minimum: 1, maximum: 100_000, default: 8 },
    seed: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 },
    heldOutFraction: { type: 'number', minimum: 0, maximum: 0.9, default: 0.2 },
    tokenBudget: { type: 'integer', minimum: 64, maximum: 2 ** 24, default: DEFAULT_JUDGE_TOKEN_BUDGET },
    device: { type: 'string', pattern: '^(cpu|cuda(:[0-9]+)?)$', default: 'cpu' },
    threads: { type: 'integer', minimum: 0, maximum: MAX_THREADS },
    overwrite: { type: 'boolean', default: false },
  },
});

export function parseTrainVerifierOptions(raw: unknown, field = 'options'): TrainVerifierOptions {
  const options = parse(raw, field);
  if ((options.model === undefined) === (options.preset === undefined))
    throw invalidArg(`${field}.model / ${field}.preset`, options.model === undefined ? 'are both unset' : 'are both set', 'start the judge from one: a model directory (--model DIR) or a preset (--preset qwen3-tiny)');
  if (options.model !== undefined && path.resolve(options.model) === path.resolve(options.out))
    throw invalidArg(`${field}.out`, `is the model it starts from (${options.model})`, 'write the trained judge to a new directory');
  return options;
}
