/**
 * The GRPO++ policy loss and its gradient, forward and backward in one native call
 * (docs/loss.md). Two forms: over materialized logits [T, V], and fused with the LM head
 * over hidden states [T, H] and weight [V, H] without ever holding T x V.
 */
import { invalidArg } from '../errors.js';
import { native, type NativeLossOptions, type NativeLossStats, type NativeTokenInputs } from '../native.js';
import { optionsParser, type Input } from '../schema.js';
import { DTYPE_MAX, float32Array, int32Array, positiveInteger } from './validate.js';

/** Default tiles of the fused loss per device. */
export const DEFAULT_CHUNK_SIZE = {
  cpu: { tokens: 1024, vocab: 4096 },
  cuda: { tokens: 2048, vocab: 16384 },
} as const;

export interface TokenInputs {
  /** The sampled token of every position, in [0, V). */
  targets: ArrayLike<number>;
  /** The sampler's logprobs of the targets (fp32). */
  oldLogprobs: ArrayLike<number>;
  /** A_t: the trajectory's advantage on each of its tokens. */
  advantages: ArrayLike<number>;
  /** w_t >= 0 (tokenWeights()); tokens with w_t > 0 are the masked-in ones the stats cover. */
  weights: ArrayLike<number>;
  /** Reference-policy logprobs, when options.kl is set. */
  refLogprobs?: ArrayLike<number>;
}

export interface PolicyLossInputs extends TokenInputs {
  /** Row-major [T, V]. */
  logits: ArrayLike<number>;
  vocabSize: number;
}

export interface FusedLinearPolicyLossInputs extends TokenInputs {
  /** Row-major [T, H]: the model's final hidden states. */
  hidden: ArrayLike<number>;
  hiddenSize: number;
  /** Row-major [V, H]: the LM head (or the tied embedding). */
  weight: ArrayLike<number>;
  vocabSize: number;
}

export type PolicyLossStats = NativeLossStats;

export interface PolicyLossResult {
  /** sum_t w_t L_t, plus the entropy and KL terms when on. */
  loss: number;
  /** l_t = log softmax(z_t / tau)[y_t], per token. */
  logprobs: Float32Array;
  /** H_t of softmax(z_t / tau), per token. */
  entropy: Float32Array;
  stats: PolicyLossStats;
}

/** The largest |entropyCoef| and kl.coef taken. */
export const MAX_COEF = 100;
/** The largest tile side (chunkSize.tokens, chunkSize.vocab): GEMM sizes are int32. */
const MAX_CHUNK = 2 ** 31 - 1;

/**
 * The loss's own fields, one schema for every place that takes them (the loss API here, the
 * training config's algorithm section), with the bounds native/src/loss/loss.cc checks again.
 * Their defaults are LOSS_DEFAULTS, the one table both take them from.
 */
export const LOSS_FIELDS = {
  /** epsilon_low of the ratio clip. */
  clipLow: { type: 'number', minimum: 0, exclusiveMaximum: 1 },
  /** epsilon_high (GRPO++'s clip-higher); Infinity or null = no upper clip. */
  clipHigh: { type: ['number', 'null'], minimum: 0 },
  /** Dual clip constant c > 1 for negative advantages (null = off). */
  dualClip: { type: ['number', 'null'], exclusiveMinimum: 1 },
  /** eta: adds -eta * sum_t w_t H_t. Real coefficients are ~1e-3; past the bounds a value can only be a typo (1e308 made NaN). */
  entropyCoef: { type: 'number', minimum: -MAX_COEF, maximum: MAX_COEF },
  /** beta * sum_t w_t KL_t against reference logprobs (inputs.refLogprobs); default none. */
  kl: {
    type: 'object',
    additionalProperties: false,
    required: ['coef'],
    properties: {
      coef: { type: 'number', minimum: 0, maximum: MAX_COEF },
      kind: { type: 'string', enum: ['k1', 'k2', 'k3'], default: 'k3' },
    },
  },
} as const;

/** The loss fields' defaults (DeepSWE's GRPO++: clip-higher 0.2/0.28, no dual clip, no entropy bonus). */
export const LOSS_DEFAULTS = { clipLow: 0.2, clipHigh: 0.28, dualClip: null, entropyCoef: 0 } as const;

const POLICY_LOSS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    /**
     * 'policy-gradient' (default): the clipped surrogate -A r_t. 'nll': the negative
     * log-likelihood -l_t of each weighted token (SFT, rejection fine-tuning); advantages and
     * the clip play no part, old logprobs only feed the ratio statistics.
     */
    objective: { type: 'string', enum: ['policy-gradient', 'nll'], default: 'policy-gradient' },
    clipLow: { ...LOSS_FIELDS.clipLow, default: LOSS_DEFAULTS.clipLow },
    clipHigh: { ...LOSS_FIELDS.clipHigh, default: LOSS_DEFAULTS.clipHigh },
    dualClip: { ...LOSS_FIELDS.dualClip, default: LOSS_DEFAULTS.dualClip },
    /** Sampling temperature the logits are divided by (never 0 here: the loss needs softmax(z / T)); bounds as sampling's. */
    temperature: { type: 'number', minimum: 0.01, maximum: 10, default: 1 },
    entropyCoef: { ...LOSS_FIELDS.entropyCoef, default: LOSS_DEFAULTS.entropyCoef },
    kl: LOSS_FIELDS.kl,
    /**
     * Tile of the fused loss: tokens x vocabulary entries per step (default DEFAULT_CHUNK_SIZE:
     * 1024 x 4096 on the CPU, 2048 x 16384 on CUDA, where bigger GEMMs keep the tensor cores
     * busy). A tile holds tokens x vocab scores, and both index int32 GEMMs.
     */
    chunkSize: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        tokens: { type: 'integer', minimum: 1, maximum: MAX_CHUNK },
        vocab: { type: 'integer', minimum: 1, maximum: MAX_CHUNK },
      },
    },
    /**
     * Bitwise reproducible reductions (default true). false lets the CUDA kernels add the loss
     * sums with atomics. The CPU twin is deterministic either way, as far as libtorch's CPU GEMMs
     * are: bitwise on libtorch 1.x; 2.x's 16-bit GEMMs (oneDNN) may differ in the last bits.
     */
    deterministic: { type: 'boolean', default: true },
  },
} as const;
export type PolicyLossOptions = Input<typeof POLICY_LOSS_SCHEMA>;

/** Where fusedLinearPolicyLoss runs, and the precision of its operands. */
const FUSED_SCHEMA = {
  type: 'object',
  properties: {
    /**
     * hidden and weight are rounded to this before the loss (default float32); gradHidden is
     * computed in it too, gradWeight is accumulated in float32.
     */
    dtype: { type: 'string', enum: ['float32', 'bfloat16', 'float16'], default: 'float32' },
    /** 'cuda' runs the CUDA kernels (an addon built with CUDA); default 'cpu'. */
    device: { type: 'string', enum: ['cpu', 'cuda'], default: 'cpu' },
  },
} as const;
export type FusedLinearPolicyLossOptions = PolicyLossOptions & Input<{ type: 'object'; properties: (typeof FUSED_SCHEMA)['properties'] }>;

const parseOptions = optionsParser(POLICY_LOSS_SCHEMA);
const parseFusedOptions = optionsParser(FUSED_SCHEMA);

/**
 * Loss options checked and defaulted (resolveLossOptions), flat as the native core takes them.
 * Callers that run many steps resolve once and pass these: NativePolicy.trainStep takes them as
 * they are.
 */
export type ResolvedLossOptions = Readonly<NativeLossOptions>;

const RESOLVED = new WeakSet<object>();

/** Whether `options` came from resolveLossOptions (and so needs no checking again). */
export function isResolvedLossOptions(options: unknown): options is ResolvedLossOptions {
  return typeof options === 'object' && options !== null && RESOLVED.has(options);
}

/**
 * Validates and fully defaults loss options into what the native core reads; device picks the
 * default tile (a policy on 'cuda:1' is 'cuda').
 */
export function resolveLossOptions(options: PolicyLossOptions = {}, field = 'options', device = 'cpu'): ResolvedLossOptions {
  const withInfinity = { ...options };
  if (withInfinity.clipHigh === Infinity) withInfinity.clipHigh = null;  // JSON has no Infinity
  const o = parseOptions(withInfinity, field);
  const chunkDevice = device.startsWith('cuda') ? 'cuda' : 'cpu';
  const out: NativeLossOptions = {
    objective: o.objective,
    clipLow: o.clipLow,
    clipHigh: o.clipHigh ?? Infinity,
    dualClip: o.dualClip ?? 0,
    temperature: o.temperature,
    entropyCoef: o.entropyCoef,
    klCoef: o.kl?.coef ?? 0,
    klKind: o.kl?.kind ?? 'k3',
    chunkTokens: o.chunkSize.tokens ?? DEFAULT_CHUNK_SIZE[chunkDevice].tokens,
    chunkVocab: o.chunkSize.vocab ?? DEFAULT_CHUNK_SIZE[chunkDevice].vocab,
    deterministic: o.deterministic,
  };
  RESOLVED.add(Object.freeze(out));
  return out;
}

function tokenInputs(inputs: TokenInputs, vocabSize: number, options: NativeLossOptions, where: string): NativeTokenInputs {
  if (!inputs.targets || inputs.targets.length < 1) {
    throw invalidArg(`${where}.targets`, 'is empty', 'a loss needs at least one token');
  }
  const targets = int32Array(inputs.targets, `${where}.targets`, {
    min: 0,
    max: vocabSize - 1,
    rangeHint: `vocabSize is ${vocabSize}`,
  });
  const T = { length: targets.length, lengthOf: 'T = targets.length' };
  const out: NativeTokenInputs = {
    targets,
    oldLogprobs: float32Array(inputs.oldLogprobs, `${where}.oldLogprobs`, { ...T, logprob: true }),
    advantages: float32Array(inputs.advantages, `${where}.advantages`, T),
    weights: float32Array(inputs.weights, `${where}.weights`, { ...T, nonNegative: true }),
  };
  if (options.klCoef !== 0) {
    if (inputs.refLogprobs === undefined) {
      throw invalidArg(`${where}.refLogprobs`, 'is required when options.kl is set', 'pass the reference policy logprobs');
    }
    out.refLogprobs = float32Array(inputs.refLogprobs, `${where}.refLogprobs`, { ...T, logprob: true });
  }
  return out;
}

function inputsObject(inputs: unknown, name: string): void {
  if (typeof inputs !== 'object' || inputs === null) throw invalidArg(name, 'must be an object');
}

/** Loss, per-token logprobs/entropy, stats, and dLoss/dlogits [T, V], in one call. */
export async function policyLoss(
  inputs: PolicyLossInputs,
  options: PolicyLossOptions = {},
): Promise<PolicyLossResult & { gradLogits: Float32Array }> {
  inputsObject(inputs, 'policyLoss inputs');
  const resolved = resolveLossOptions(options, 'policyLoss options');
  const vocabSize = positiveInteger(inputs.vocabSize, 'policyLoss inputs.vocabSize');
  const tokens = tokenInputs(inputs, vocabSize, resolved, 'policyLoss inputs');
  const logits = float32Array(inputs.logits, 'policyLoss inputs.logits', {
    length: tokens.targets.length * vocabSize,
    lengthOf: 'T x vocabSize',
  });
  // The native core checks what it hands back: a non-finite loss, logprob, stat or gradient is
  // ERR_SWERL_NUMERIC naming it (native/src/loss/loss.h).
  return native().policyLoss({ ...tokens, logits, vocabSize }, resolved);
}

/**
 * The same loss over hidden [T, H] and weight [V, H] (logits = hidden weight^T), with
 * dLoss/dhidden and dLoss/dweight, streaming tiles so the T x V logits never exist.
 */
export async function fusedLinearPolicyLoss(
  inputs: FusedLinearPolicyLossInputs,
  options: FusedLinearPolicyLossOptions = {},
): Promise<PolicyLossResult & { gradHidden: Float32Array; gradWeight: Float32Array }> {
  inputsObject(inputs, 'fusedLinearPolicyLoss inputs');
  const field = 'fusedLinearPolicyLoss options';
  const { dtype, device, ...lossOptions } = options ?? {};
  const placement = parseFusedOptions({ dtype, device }, field);
  if (placement.device === 'cuda' && !native().buildInfo().cuda) {
    throw invalidArg(`${field}.device`, "is 'cuda' but the native addon was built without CUDA", 'use device "cpu", or build swerl against a CUDA libtorch with nvcc on PATH');
  }
  const resolved = { ...resolveLossOptions(lossOptions, field, placement.device), ...placement };
  const where = 'fusedLinearPolicyLoss inputs';
  const vocabSize = positiveInteger(inputs.vocabSize, `${where}.vocabSize`);
  const hiddenSize = positiveInteger(inputs.hiddenSize, `${where}.hiddenSize`);
  const tokens = tokenInputs(inputs, vocabSize, resolved, where);
  // Operands are rounded to dtype in the core: a value past its range would become Infinity.
  const range = {
    range: {
      max: DTYPE_MAX[placement.dtype],
      of: placement.dtype,
      fix: `use dtype ${placement.dtype === 'float16' ? '"bfloat16" or "float32"' : '"float32"'}, or scale the values down`,
    },
  };
  const hidden = float32Array(inputs.hidden, `${where}.hidden`, {
    length: tokens.targets.length * hiddenSize,
    lengthOf: 'T x hiddenSize',
    ...range,
  });
  const weight = float32Array(inputs.weight, `${where}.weight`, {
    length: vocabSize * hiddenSize,
    lengthOf: 'vocabSize x hiddenSize',
    ...range,
  });
  // The core checks what it hands back, on the operands' device: the loss, stats, logprobs and
  // gradHidden always, gradWeight when its bound cannot rule out an overflow (float16 past
  // 65504 included); any non-finite value is ERR_SWERL_NUMERIC naming it (native/src/loss/loss.h).
  return native().fusedLinearPolicyLoss({ ...tokens, hidden, weight, hiddenSize, vocabSize }, resolved);
}

/** For tests and diagnostics of the C++ autograd path (see NativeAddon.projectedPolicyLoss). */
export async function projectedPolicyLoss(
  inputs: TokenInputs & {
    input: ArrayLike<number>;
    projection: ArrayLike<number>;
    weight: ArrayLike<number>;
    inputSize: number;
    hiddenSize: number;
    vocabSize: number;
    fused: boolean;
  },
  options: PolicyLossOptions = {},
): Promise<PolicyLossResult & { gradProjection: Float32Array; gradWeight: Float32Array }> {
  const where = 'projectedPolicyLoss inputs';
  inputsObject(inputs, where);
  const resolved = resolveLossOptions(options, 'projectedPolicyLoss options');
  const vocabSize = positiveInteger(inputs.vocabSize, `${where}.vocabSize`);
  const hiddenSize = positiveInteger(inputs.hiddenSize, `${where}.hiddenSize`);
  const inputSize = positiveInteger(inputs.inputSize, `${where}.inputSize`);
  const tokens = tokenInputs(inputs, vocabSize, resolved, where);
  return native().projectedPolicyLoss(
    {
      ...tokens,
      input: float32Array(inputs.input, `${where}.input`, { length: tokens.targets.length * inputSize }),
      projection: float32Array(inputs.projection, `${where}.projection`, { length: inputSize * hiddenSize }),
      weight: float32Array(inputs.weight, `${where}.weight`, { length: vocabSize * hiddenSize }),
      inputSize,
      hiddenSize,
      vocabSize,
      fused: inputs.fused === true,
    },
    resolved,
  );
}
