/** Per-token weights: how the loss aggregates over tokens (docs/loss.md, "Token weights"). */
import { invalidArg } from '../errors.js';
import { native } from '../native.js';
import { optionsParser, type Input } from '../schema.js';
import { sequenceLayout } from './sequences.js';
import { float32Array, int32Array, maskArray } from './validate.js';

export const AGGREGATIONS = ['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum-norm'] as const;
export type Aggregation = (typeof AGGREGATIONS)[number];

const TOKEN_WEIGHTS_SCHEMA = {
  type: 'object',
  properties: {
    /**
     * token-mean (DAPO): m/sum(m); seq-mean-token-mean (GRPO): m/(B n_i);
     * seq-mean-token-sum-norm (Dr.GRPO, GRPO++, the default): m/(B L).
     */
    aggregation: { type: 'string', enum: AGGREGATIONS, default: 'seq-mean-token-sum-norm' },
    /** L for seq-mean-token-sum-norm: a constant maximum length (DeepSWE: 32768). */
    maxLength: { type: 'number', exclusiveMinimum: 0 },
    /** Data parallelism: B summed over every rank (default: this batch's sequences). */
    globalSequences: { type: 'integer', minimum: 1 },
    /** Data parallelism: sum of the mask over every rank (default: this batch's). */
    globalMaskedTokens: { type: 'integer', minimum: 1 },
  },
} as const;

/** tokenWeights' arguments: the batch's layout, then the options of TOKEN_WEIGHTS_SCHEMA. */
export type TokenWeightsArgs = Input<typeof TOKEN_WEIGHTS_SCHEMA> & {
  /** 1 on trained (assistant) tokens of the flattened batch, else 0. */
  mask: ArrayLike<number | boolean>;
  /** Tokens per sequence, in order (sum = mask.length). Give this or sequenceIds. */
  seqLengths?: ArrayLike<number>;
  /** Sequence index of every token. */
  sequenceIds?: ArrayLike<number>;
};

const parseOptions = optionsParser(TOKEN_WEIGHTS_SCHEMA);

export function tokenWeights(args: TokenWeightsArgs): Float32Array {
  if (typeof args !== 'object' || args === null) throw invalidArg('tokenWeights arguments', 'must be an object');
  const { mask: rawMask, seqLengths, sequenceIds, ...rest } = args;
  const options = parseOptions(rest, 'tokenWeights');
  if (options.aggregation === 'seq-mean-token-sum-norm' && options.maxLength === undefined) {
    throw invalidArg(
      'tokenWeights.maxLength',
      'is required for seq-mean-token-sum-norm',
      'set it to the response budget (DeepSWE: 32768)',
    );
  }
  const mask = maskArray(rawMask, 'tokenWeights.mask');
  const layout = sequenceLayout({ seqLengths, sequenceIds }, mask.length, 'tokenWeights');
  return native().tokenWeights({
    mask,
    ...layout,
    aggregation: options.aggregation,
    maxLength: options.maxLength ?? 0,
    globalSequences: options.globalSequences ?? 0,
    globalMaskedTokens: options.globalMaskedTokens ?? 0,
  });
}

/** Spreads one value per sequence over its tokens (e.g. advantages A_i to A_t). */
export function perToken(values: ArrayLike<number>, seqLengths: ArrayLike<number>): Float32Array {
  const perSequence = float32Array(values, 'perToken values');
  const lengths = int32Array(seqLengths, 'perToken seqLengths', {
    length: perSequence.length,
    lengthOf: 'one length per value',
    min: 0,
  });
  const out = new Float32Array(lengths.reduce((a, b) => a + b, 0));
  let t = 0;
  lengths.forEach((n, s) => {
    out.fill(perSequence[s]!, t, t + n);
    t += n;
  });
  return out;
}
