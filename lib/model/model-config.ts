/**
 * The decoder's architecture, read from a Hugging Face config.json (Qwen3; Qwen2/2.5 and
 * Llama by the same fields), validated and defaulted here so the native core gets plain,
 * complete fields. What the core cannot run (rope scalings other than YaRN and Llama 3.1's,
 * sliding windows, other activations) is refused with the field named rather than silently
 * computed wrong.
 */
import { SwerlError, invalidArg } from '../errors.js';
import type { NativeModelConfig } from '../native.js';
import { resolveRope } from './rope-scaling.js';

export type ModelType = 'qwen3' | 'qwen2' | 'llama';
const MODEL_TYPES: readonly ModelType[] = ['qwen3', 'qwen2', 'llama'];

/** A Hugging Face config.json object (the fields swerl reads; others are kept on save). */
export interface HfModelConfig {
  model_type: ModelType;
  vocab_size: number;
  hidden_size: number;
  intermediate_size: number;
  num_hidden_layers: number;
  num_attention_heads: number;
  num_key_value_heads?: number;
  head_dim?: number | null;
  rope_theta?: number;
  rms_norm_eps?: number;
  tie_word_embeddings?: boolean;
  attention_bias?: boolean;
  hidden_act?: string;
  rope_scaling?: unknown;
  /** transformers >= 5: rope_theta and the scaling in one object. */
  rope_parameters?: unknown;
  use_sliding_window?: boolean;
  mlp_bias?: boolean;
  max_position_embeddings?: number;
  torch_dtype?: string;
  bos_token_id?: number | null;
  eos_token_id?: number | number[] | null;
  [field: string]: unknown;
}

export interface ResolvedModelConfig {
  /** The config.json object, with swerl's defaults filled in (what save() writes). */
  hf: HfModelConfig;
  /** What the native core gets. */
  native: NativeModelConfig;
}

function integer(config: Record<string, unknown>, field: string, min: number, where: string): number {
  const value = config[field];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min)
    throw invalidArg(`${where}.${field}`, `must be an integer >= ${min} (got ${JSON.stringify(value)})`);
  return value;
}

function positive(config: Record<string, unknown>, field: string, fallback: number, where: string): number {
  const value = config[field] ?? fallback;
  if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value))
    throw invalidArg(`${where}.${field}`, `must be a finite number > 0 (got ${JSON.stringify(value)})`);
  return value;
}

function unsupported(where: string, field: string, value: unknown, fix: string): SwerlError {
  return invalidArg(`${where}.${field}`, `= ${JSON.stringify(value)} is not supported by swerl's native model`, fix);
}

/** Validates a config.json object; `where` names it in errors (a file path, say). */
export function resolveModelConfig(value: unknown, where = 'config'): ResolvedModelConfig {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalidArg(where, 'must be a Hugging Face config.json object');
  const config = value as Record<string, unknown>;
  const modelType = config.model_type;
  if (!MODEL_TYPES.includes(modelType as ModelType))
    throw invalidArg(
      `${where}.model_type`,
      `is ${JSON.stringify(modelType)}; swerl's native model runs ${MODEL_TYPES.join(', ')}`,
      'use a checkpoint of the Qwen3, Qwen2/2.5 or Llama family',
    );
  const type = modelType as ModelType;
  const vocabSize = integer(config, 'vocab_size', 1, where);
  const hiddenSize = integer(config, 'hidden_size', 1, where);
  const intermediateSize = integer(config, 'intermediate_size', 1, where);
  const numLayers = integer(config, 'num_hidden_layers', 0, where);
  const numHeads = integer(config, 'num_attention_heads', 1, where);
  const numKvHeads = config.num_key_value_heads == null ? numHeads : integer(config, 'num_key_value_heads', 1, where);
  if (numHeads % numKvHeads !== 0)
    throw invalidArg(`${where}.num_attention_heads`, `(${numHeads}) must be a multiple of num_key_value_heads (${numKvHeads})`);
  let headDim: number;
  if (config.head_dim == null) {
    if (hiddenSize % numHeads !== 0)
      throw invalidArg(`${where}.head_dim`, `is missing and hidden_size (${hiddenSize}) is not a multiple of num_attention_heads (${numHeads})`, 'set head_dim');
    headDim = hiddenSize / numHeads;
  } else {
    headDim = integer(config, 'head_dim', 2, where);
  }
  if (headDim % 2 !== 0) throw invalidArg(`${where}.head_dim`, `(${headDim}) must be even for rotary embeddings`);

  const hiddenAct = config.hidden_act ?? 'silu';
  if (hiddenAct !== 'silu') throw unsupported(where, 'hidden_act', hiddenAct, 'only "silu" (SwiGLU) is implemented');
  const maxPositions = config.max_position_embeddings == null ? undefined : integer(config, 'max_position_embeddings', 1, where);
  const { ropeTheta, ropeScaling } = resolveRope(config, maxPositions, where);
  if (config.use_sliding_window === true)
    throw unsupported(where, 'use_sliding_window', true, 'set use_sliding_window to false (full attention only)');
  if (config.mlp_bias === true) throw unsupported(where, 'mlp_bias', true, 'only bias-free MLPs are implemented');
  // Qwen2 always has q/k/v biases; Qwen3's and Llama's attention_bias also puts one on
  // o_proj, which the native model does not have.
  if (type !== 'qwen2' && config.attention_bias === true)
    throw unsupported(where, 'attention_bias', true, `only Qwen2's q/k/v biases are implemented`);
  if (config.tie_word_embeddings !== undefined && typeof config.tie_word_embeddings !== 'boolean')
    throw invalidArg(`${where}.tie_word_embeddings`, 'must be a boolean');

  const rmsNormEps = positive(config, 'rms_norm_eps', 1e-6, where);
  const tieWordEmbeddings = (config.tie_word_embeddings as boolean | undefined) ?? false;
  const native: NativeModelConfig = {
    vocabSize,
    hiddenSize,
    intermediateSize,
    numLayers,
    numHeads,
    numKvHeads,
    headDim,
    ropeTheta,
    rmsNormEps,
    tieWordEmbeddings,
    qkNorm: type === 'qwen3',
    attentionBias: type === 'qwen2',
    ropeScaling,
  };
  const hf: HfModelConfig = {
    ...(config as HfModelConfig),
    num_key_value_heads: numKvHeads,
    head_dim: headDim,
    rope_theta: ropeTheta,
    rms_norm_eps: rmsNormEps,
    tie_word_embeddings: tieWordEmbeddings,
    hidden_act: 'silu',
  };
  return { hf, native };
}

const ARCHITECTURES: Record<ModelType, string> = {
  qwen3: 'Qwen3ForCausalLM',
  qwen2: 'Qwen2ForCausalLM',
  llama: 'LlamaForCausalLM',
};

/** Built-in sizes for training from scratch, with the byte tokenizer (vocabulary 265) or one of model.tokenizer. */
export const MODEL_PRESETS = {
  /** ~0.1 M parameters: tests and the CPU demo. */
  'qwen3-tiny': { hidden_size: 64, intermediate_size: 192, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16 },
  /** ~2 M parameters. */
  'qwen3-small': { hidden_size: 256, intermediate_size: 768, num_hidden_layers: 4, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 64 },
  /** ~50 M parameters (with a 32k vocabulary). */
  'qwen3-50m': { hidden_size: 512, intermediate_size: 1536, num_hidden_layers: 10, num_attention_heads: 8, num_key_value_heads: 4, head_dim: 64 },
  /**
   * ~0.7 M parameters with a 2k domain vocabulary: the reader of models/swe-reader (examples/pretrain-swe.ts).
   * Heads of 64 and rope_theta 1e4, because copying needs sharp attention: heads of 16 (qwen3-tiny)
   * under QK-norm cap a score at 4, and theta 1e6 barely turns over a few hundred tokens; with
   * those, no copying formed in 20 CPU minutes, with these it forms in 2 (bench/README.md).
   */
  'qwen3-swe': { hidden_size: 128, intermediate_size: 384, num_hidden_layers: 2, num_attention_heads: 2, num_key_value_heads: 2, head_dim: 64, rope_theta: 10000 },
} as const;
export type ModelPreset = keyof typeof MODEL_PRESETS;
/** The presets' names, for a schema's enum. */
export const MODEL_PRESET_NAMES = Object.keys(MODEL_PRESETS) as ModelPreset[];

/** A complete Qwen3 config.json object for a preset size and vocabulary. */
export function presetConfig(preset: ModelPreset, vocabSize: number): HfModelConfig {
  const sizes = MODEL_PRESETS[preset];
  if (!sizes) throw invalidArg('preset', `is ${JSON.stringify(preset)}; known: ${Object.keys(MODEL_PRESETS).join(', ')}`);
  return {
    architectures: [ARCHITECTURES.qwen3],
    model_type: 'qwen3',
    vocab_size: vocabSize,
    rope_theta: 1000000,
    ...sizes,
    rms_norm_eps: 1e-6,
    tie_word_embeddings: true,
    attention_bias: false,
    hidden_act: 'silu',
    max_position_embeddings: 32768,
    torch_dtype: 'float32',
  };
}

/** The architectures entry Hugging Face expects for a model type. */
export function architectureOf(type: ModelType): string {
  return ARCHITECTURES[type];
}

/** Parameters of a config (embedding counted once when tied). */
export function parameterCount(native: NativeModelConfig): number {
  const { vocabSize: V, hiddenSize: H, intermediateSize: I, numLayers: L, numHeads, numKvHeads, headDim: D } = native;
  const attention = H * numHeads * D * 2 + H * numKvHeads * D * 2 + (native.attentionBias ? (numHeads + 2 * numKvHeads) * D : 0) + (native.qkNorm ? 2 * D : 0);
  const perLayer = attention + 3 * H * I + 2 * H;
  return V * H * (native.tieWordEmbeddings ? 1 : 2) + L * perLayer + H;
}
