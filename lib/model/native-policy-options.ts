/** The option sections of NativePolicy, one ajv schema each, validated and fully defaulted. */
import os from 'node:os';

import { invalidArg } from '../errors.js';
import { optionsParser, type Infer, type Input } from '../schema.js';
import { LR_SCHEDULE_SCHEMA } from './schedule.js';

/**
 * A sampling temperature: 0 is greedy; below MIN_TEMPERATURE, z / T overflows float32 (1e-300
 * gave NaN logprobs after a whole step of rollouts); above MAX_TEMPERATURE it can only be a typo.
 */
export const MIN_TEMPERATURE = 0.01;
export const MAX_TEMPERATURE = 10;
export const TEMPERATURE_SCHEMA = { type: 'number', minimum: 0, maximum: MAX_TEMPERATURE, zeroOrAtLeast: MIN_TEMPERATURE } as const;

/** Past this an AdamW learning rate can only be a typo (1e30 left a dead model and exit 0). */
export const MAX_LR = 1;

/** AdamW's fields, one schema for the policy's options and the training config's optimizer section. */
export const ADAMW_FIELDS = {
  /** Peak learning rate (DeepSWE: 1e-6). */
  lr: { type: 'number', minimum: 0, maximum: MAX_LR, default: 1e-6 },
  betas: {
    type: 'array',
    items: [
      { type: 'number', minimum: 0, exclusiveMaximum: 1 },
      { type: 'number', minimum: 0, exclusiveMaximum: 1 },
    ],
    minItems: 2,
    maxItems: 2,
    default: [0.9, 0.999],
  },
  eps: { type: 'number', exclusiveMinimum: 0, maximum: 1, default: 1e-8 },
  /** Decoupled weight decay on matrices (not on norms and biases). */
  weightDecay: { type: 'number', minimum: 0, maximum: 10, default: 0.01 },
} as const;

/**
 * libtorch threads past a few per core only contend (256 on 2 cores never finished the
 * warm-up); 0 = every core.
 */
export const MAX_THREADS = os.availableParallelism() * 4;

/** The model fields the policy's options and the training config's model section share. */
export const MODEL_FIELDS = {
  /** 'cpu', 'cuda' or 'cuda:N'. */
  device: { type: 'string', pattern: '^(cpu|cuda(:[0-9]+)?)$', default: 'cpu' },
  /** Dtype of the forward and backward; master weights and optimizer state stay fp32. Default: float32 on CPU, bfloat16 on CUDA. */
  computeDtype: { type: 'string', enum: ['float32', 'bfloat16', 'float16'] },
  /** Standard deviation of random initialization (Hugging Face's initializer_range is 0.02; 1e10 left a model whose entropy stayed at ln V). */
  initStd: { type: 'number', exclusiveMinimum: 0, maximum: 0.2, default: 0.02 },
  /** Tokens per forward pass in trainStep and logprobs (unpacked: rows x the longest sequence). */
  microBatchTokens: { type: 'integer', minimum: 1, maximum: 2 ** 24, default: 8192 },
  /**
   * Several sequences end to end in one row of a forward, each attending to itself only with
   * its own positions (varlen), instead of a row each padded to the longest.
   */
  packSequences: { type: 'boolean', default: true },
  /** Sequences decoded together at most. */
  maxBatchSize: { type: 'integer', minimum: 1, maximum: 4096, default: 64 },
  /**
   * Finished sequences' keys and values kept for prompts that extend them (an agent's next
   * turn prefills only its new tokens), least recently used first out; 0 turns it off.
   * 1 GiB: an 8k-token conversation of Qwen3-0.6B (bf16) takes 0.9 GB; the small presets, MBs.
   */
  prefixCacheBytes: { type: 'integer', minimum: 0, maximum: 2 ** 50, default: 2 ** 30 },
  /**
   * Prompt tokens prefilled in one forward at most: a longer prompt goes a chunk at a time,
   * so its activations take a chunk's memory whatever its length.
   */
  prefillChunkTokens: { type: 'integer', minimum: 1, maximum: 2 ** 24, default: 8192 },
  /**
   * CUDA: decode steps replayed as captured CUDA graphs, one per batch bucket (attention over
   * the KV cache's whole capacity, masked; the batch padded to a power of two), instead of
   * ~2,300 kernels launched one by one from the host. No effect on the CPU.
   */
  decodeGraphs: { type: 'boolean', default: true },
  /** Recompute each layer's activations in the backward instead of keeping them. */
  activationCheckpointing: { type: 'boolean', default: false },
  /** libtorch intra-op threads; 0 = every core. */
  threads: { type: 'integer', minimum: 0, maximum: MAX_THREADS },
  /** Global gradient-norm clipping; 0 = off. */
  maxGradNorm: { type: 'number', minimum: 0, maximum: 1e6, default: 1 },
} as const;

const POLICY_OPTIONS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...MODEL_FIELDS,
    /** Seeds random initialization and the default seeds of generate(). */
    seed: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 },
    /** 'auto': the directory's tokenizer.json if it has one, else the byte tokenizer. */
    tokenizer: { type: 'string', enum: ['auto', 'byte'], default: 'auto' },
    optimizer: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: { ...ADAMW_FIELDS, schedule: LR_SCHEDULE_SCHEMA },
    },
    /** Restore optimizer.safetensors when the directory has it (resume). */
    loadOptimizerState: { type: 'boolean', default: true },
  },
} as const;
export type NativePolicyOptions = Infer<typeof POLICY_OPTIONS_SCHEMA>;
export type OptimizerOptions = NativePolicyOptions['optimizer'];
/** What NativePolicy.load takes: every field optional, nested sections too. */
export type NativePolicyLoadOptions = Input<typeof POLICY_OPTIONS_SCHEMA>;

const parsePolicyOptionsSchema = optionsParser(POLICY_OPTIONS_SCHEMA);

export function parsePolicyOptions(value: unknown, field: string): NativePolicyOptions {
  const options = parsePolicyOptionsSchema(value, field);
  const schedule = options.optimizer.schedule;
  if (schedule.kind === 'cosine' && schedule.totalSteps === undefined)
    throw invalidArg(`${field}.optimizer.schedule.totalSteps`, 'is required by the cosine schedule', 'set it to the run\'s optimizer steps');
  return options;
}

const GENERATE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['maxTokens'],
  properties: {
    /** Most tokens to sample (the stop token included). */
    maxTokens: { type: 'integer', minimum: 0, maximum: 2 ** 24 },
    /** Ids that end the generation (kept as its last token). Default: the tokenizer's end-of-turn ids. */
    stopTokens: { type: 'array', items: { type: 'integer', minimum: 0 } },
    /** 0 = greedy. Default 1: pure sampling, what RL needs. */
    temperature: { ...TEMPERATURE_SCHEMA, default: 1 },
    /** Restrict sampling to the k most likely tokens (0 = off). */
    topK: { type: 'integer', minimum: 0, default: 0 },
    /** Restrict sampling to the smallest set of mass >= p (1 = off). */
    topP: { type: 'number', exclusiveMinimum: 0, maximum: 1, default: 1 },
    /** Seed of this request's random stream; default: drawn from the policy's seed. */
    seed: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
  },
} as const;
export type GenerateOptions = Infer<typeof GENERATE_SCHEMA>;

export const parseGenerateOptions = optionsParser(GENERATE_SCHEMA);

const SAVE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    /**
     * Dtype of the model files (the fp32 master weights go to optimizer.safetensors when
     * narrower). Default: config.json's torch_dtype, float32 when it has none.
     */
    dtype: { type: 'string', enum: ['float32', 'bfloat16', 'float16'] },
    maxShardBytes: { type: 'integer', minimum: 1, default: 5e9 },
    /** Save AdamW's state and the master weights too, so training resumes exactly. */
    optimizer: { type: 'boolean', default: true },
  },
} as const;
export type SaveOptions = Input<typeof SAVE_SCHEMA>;

export const parseSaveOptions = optionsParser(SAVE_SCHEMA);

const PROCESS_GROUP_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['rank', 'worldSize'],
  properties: {
    /** 'nccl' (CUDA ranks, a device each) or 'gloo' (TCP; CPU). Default: nccl for a CUDA policy where the addon has it, else gloo. */
    backend: { enum: ['gloo', 'nccl'] },
    rank: { type: 'integer', minimum: 0 },
    worldSize: { type: 'integer', minimum: 1 },
    /** Where rank 0 serves the rendezvous (torchrun's default). */
    masterAddr: { type: 'string', minLength: 1, default: '127.0.0.1' },
    masterPort: { type: 'integer', minimum: 1, maximum: 65535, default: 29500 },
    /** The rendezvous, and each collective, at most this long. */
    timeoutMs: { type: 'integer', minimum: 1, default: 300_000 },
    /** Gradients are all-reduced in flat buckets of at most this many bytes (PyTorch DDP's 25 MiB). */
    bucketBytes: { type: 'integer', minimum: 1024, default: 25 * 1024 * 1024 },
  },
} as const;
/** A process group's options, checked and defaulted. */
export type ProcessGroupOptions = Infer<typeof PROCESS_GROUP_SCHEMA>;
/** What joining a process group takes: rank and worldSize, the rest defaulted. */
export type ProcessGroupInput = Input<typeof PROCESS_GROUP_SCHEMA>;

export const parseProcessGroupOptions = optionsParser(PROCESS_GROUP_SCHEMA);
