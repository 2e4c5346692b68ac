/** `swerl train-verifier`'s options, checked and defaulted once. */
import path from 'node:path';

import { invalidArg } from '../../errors.js';
import { MODEL_PRESET_NAMES } from '../../model/model-config.js';
import { MAX_LR, MAX_THREADS } from '../../model/native-policy-options.js';
import { optionsParser, type Infer } from '../../schema.js';
import { DEFAULT_JUDGE_TOKEN_BUDGET } from '../../tts/judge.js';

const TRAIN_VERIFIER_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['data', 'out'],
  properties: {
    /** candidates.jsonl files of swerl eval, trajectories files of training runs, or folders of them. */
    data: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
    /** A task file or folder: problem statements for trajectories, by task id. */
    tasks: { type: 'string', minLength: 1 },
    /** The judge to start from: a Hugging Face model directory... */
    model: { type: 'string', minLength: 1 },
    /** ...or a preset trained from scratch with the byte tokenizer (tests, demos). */
    preset: { enum: MODEL_PRESET_NAMES },
    /** Where the trained judge goes: a model directory, with the metrics and summary beside its weights. */
    out: { type: 'string', minLength: 1 },
    /** Passes over the training set (DeepSWE trained its verifier for 2). */
    epochs: { type: 'integer', minimum: 1, maximum: 10_000, default: 2 },
    lr: { type: 'number', exclusiveMinimum: 0, maximum: MAX_LR, default: 1e-5 },
    /** Examples per optimizer step. */
    batchSize: { type: 'integer', minimum: 1, maximum: 100_000, default: 8 },
    seed: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 },
    /** The share of records held out (whole tasks) for accuracy and AUC; 0: none. */
    heldOutFraction: { type: 'number', minimum: 0, maximum: 0.9, default: 0.2 },
    /** Tokens of a judge prompt at most (judgePrompt's budget). */
    tokenBudget: { type: 'integer', minimum: 64, maximum: 2 ** 24, default: DEFAULT_JUDGE_TOKEN_BUDGET },
    device: { type: 'string', pattern: '^(cpu|cuda(:[0-9]+)?)$', default: 'cpu' },
    /** libtorch threads; 0 = every core. */
    threads: { type: 'integer', minimum: 0, maximum: MAX_THREADS },
    /** Replace `out` when it already holds something. */
    overwrite: { type: 'boolean', default: false },
  },
} as const;
export type TrainVerifierOptions = Infer<typeof TRAIN_VERIFIER_SCHEMA>;

const parse = optionsParser(TRAIN_VERIFIER_SCHEMA);

export function parseTrainVerifierOptions(raw: unknown, field = 'options'): TrainVerifierOptions {
  const options = parse(raw, field);
  if ((options.model === undefined) === (options.preset === undefined))
    throw invalidArg(`${field}.model / ${field}.preset`, options.model === undefined ? 'are both unset' : 'are both set', 'start the judge from one: a model directory (--model DIR) or a preset (--preset qwen3-tiny)');
  if (options.model !== undefined && path.resolve(options.model) === path.resolve(options.out))
    throw invalidArg(`${field}.out`, `is the model it starts from (${options.model})`, 'write the trained judge to a new directory');
  return options;
}
