/**
 * The policy being trained, in this process: a Qwen3-family transformer in the native core
 * that loads Hugging Face checkpoints, samples with its exact logprobs (continuous batching,
 * off the event loop), scores sequences, takes GRPO++ training steps through the fused loss,
 * and saves directories transformers and vLLM can load.
 */
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

import { SwerlError, invalidArg } from '../errors.js';
import { isResolvedLossOptions, resolveLossOptions, type PolicyLossOptions, type PolicyLossStats, type ResolvedLossOptions } from '../math/policy-loss.js';
import { float32Array, int32Array } from '../math/validate.js';
import { native, type NativeDtype, type NativePolicyHandle, type NativePrefixCacheStats, type NativeTrainBatch } from '../native.js';
import { loadCheckpoint, saveCheckpoint } from './checkpoint.js';
import { checkpointError } from './safetensors.js';
import { GenerationScheduler } from './generation.js';
import type { Generation } from '../types/policy.js';
import { resolveModelConfig, type HfModelConfig, type ResolvedModelConfig } from './model-config.js';
import {
  parseGenerateOptions,
  parsePolicyOptions,
  parseSaveOptions,
  type GenerateOptions,
  type ProcessGroupInput,
  type NativePolicyLoadOptions,
  type NativePolicyOptions,
  type SaveOptions,
} from './native-policy-options.js';
import { assertBackendBuilt, groupOptions } from './process-group.js';
import { learningRate } from './schedule.js';
import { ByteTokenizer } from './byte-tokenizer.js';
import { loadTokenizer } from './hf-tokenizer.js';
import type { Tokenizer } from '../types/tokenizer.js';

export interface GenerateRequest extends Partial<GenerateOptions> {
  /** Prompt token ids (rendered by the chat template; never text). */
  prompt: ArrayLike<number>;
  maxTokens: number;
  /** Cancels the request; it resolves with finishReason 'cancelled' and what it has so far. */
  signal?: AbortSignal;
  /** Called with each token as it is sampled (streaming), before the promise resolves. */
  onToken?: (token: number, logprob: number) => void;
}

/** One sequence of a training batch. Per-token arrays are aligned with tokens. */
export interface TrainSequence {
  tokens: ArrayLike<number>;
  /** w_t >= 0 (token-weights.ts); 0 on prompt/observation tokens and on the first token. */
  weights: ArrayLike<number>;
  /** The sampler's logprobs of the tokens (any value where the weight is 0). */
  oldLogprobs: ArrayLike<number>;
  /** The sequence's advantage, or one per token. */
  advantage?: number;
  advantages?: ArrayLike<number>;
  /** Reference logprobs, when the loss has a KL term. */
  refLogprobs?: ArrayLike<number>;
}

export interface TrainStepBatch {
  sequences: TrainSequence[];
  /** The loss's options, or ones resolveLossOptions resolved once for many steps. */
  loss?: PolicyLossOptions | ResolvedLossOptions;
  /** Overrides the schedule's learning rate for this step. */
  lr?: number;
}

export interface TrainStepResult {
  loss: number;
  /** Global gradient norm before clipping. */
  gradNorm: number;
  /** Means over the tokens with weight > 0. */
  entropy: number;
  approxKl: number;
  clipFracLow: number;
  clipFracHigh: number;
  ratioMean: number;
  ratioMax: number;
  /** Tokens with weight > 0. */
  lossTokens: number;
  /** Every token of the batch (all went through the forward). */
  tokens: number;
  tokensPerSecond: number;
  microBatches: number;
  seconds: number;
  lr: number;
  /** Optimizer steps taken so far, this one included. */
  step: number;
}

const NATIVE_DTYPE: Record<string, NativeDtype> = { float32: 'F32', bfloat16: 'BF16', float16: 'F16' };

async function readJson(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    throw checkpointError(`cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw checkpointError(`${file} is not valid JSON: ${(error as Error).message}`);
  }
}

export class NativePolicy {
  #handle: NativePolicyHandle | undefined;
  readonly #scheduler: GenerationScheduler;
  #requests = 0;
  #weightVersion = 0;
  #weightSource: string | undefined;

  private constructor(
    handle: NativePolicyHandle,
    readonly config: ResolvedModelConfig,
    readonly tokenizer: Tokenizer,
    readonly options: NativePolicyOptions,
    /** Extra files of the source directory to carry into saves (generation_config.json). */
    private readonly carriedFiles: Record<string, string>,
  ) {
    this.#handle = handle;
    this.#scheduler = new GenerationScheduler(() => this.handle, options.maxBatchSize);
  }

  /** The model's output rows (its vocabulary, padded or not): the ids it samples. */
  get vocabSize(): number {
    return this.config.native.vocabSize;
  }

  /**
   * A Hugging Face model directory (config.json, safetensors, tokenizer.json), or a
   * config.json object for a model trained from scratch (random weights from options.seed),
   * reading `tokenizerForConfig` (default: the byte tokenizer).
   */
  static async load(dirOrConfig: string | HfModelConfig, options: NativePolicyLoadOptions = {}, tokenizerForConfig?: Tokenizer): Promise<NativePolicy> {
    const opts = parsePolicyOptions(options, 'options');
    if (opts.threads !== undefined) native().setNumThreads(opts.threads);
    const fromDir = typeof dirOrConfig === 'string';
    const dir = fromDir ? path.resolve(dirOrConfig) : undefined;
    if (dir !== undefined && !existsSync(path.join(dir, 'config.json')))
      throw checkpointError(`${dir} has no config.json; point NativePolicy.load at a Hugging Face model directory`);
    const config = dir ? resolveModelConfig(await readJson(path.join(dir, 'config.json')), path.join(dir, 'config.json')) : resolveModelConfig(dirOrConfig, 'config');

    const useHfTokenizer = dir !== undefined && opts.tokenizer === 'auto' && existsSync(path.join(dir, 'tokenizer.json'));
    if (dir !== undefined && tokenizerForConfig !== undefined)
      throw invalidArg('tokenizerForConfig', 'is given with a model directory', 'a directory reads its own tokenizer.json; pass a tokenizer only with a config.json object');
    const tokenizer = useHfTokenizer ? await loadTokenizer(dir!) : (tokenizerForConfig ?? new ByteTokenizer());
    if (tokenizer.vocabSize > config.native.vocabSize)
      throw invalidArg(
        'config.vocab_size',
        `(${config.native.vocabSize}) is smaller than the tokenizer's ${tokenizer.vocabSize} ids`,
        'make vocab_size at least the tokenizer size',
      );

    const computeDtype = opts.computeDtype ?? (opts.device === 'cpu' ? 'float32' : 'bfloat16');
    if (opts.device !== 'cpu' && !native().buildInfo().cuda)
      throw invalidArg('options.device', `is ${opts.device} but the native addon was built without CUDA`, 'use device "cpu", or build swerl against a CUDA libtorch with nvcc on PATH');
    const handle = new (native().PolicyHandle)(config.native, { device: opts.device, computeDtype: NATIVE_DTYPE[computeDtype]!, prefixCacheBytes: opts.prefixCacheBytes, prefillChunkTokens: opts.prefillChunkTokens, decodeGraphs: opts.decodeGraphs });

    const carried: Record<string, string> = {};
    try {
      if (dir) {
        await loadCheckpoint(handle, dir, { tiedEmbeddings: config.native.tieWordEmbeddings, optimizer: opts.loadOptimizerState });
        const generationConfig = path.join(dir, 'generation_config.json');
        if (existsSync(generationConfig)) carried['generation_config.json'] = await fs.readFile(generationConfig, 'utf8');
      } else {
        handle.initRandom({ std: opts.initStd, seed: opts.seed });
      }
    } catch (error) {
      handle.dispose();
      throw error;
    }
    return new NativePolicy(handle, config, tokenizer, { ...opts, computeDtype }, carried);
  }

  private get handle(): NativePolicyHandle {
    if (!this.#handle) throw new SwerlError('ERR_SWERL_DISPOSED', 'this NativePolicy was disposed; load a new one');
    return this.#handle;
  }

  /** Optimizer steps taken (restored with the optimizer state). */
  get step(): number {
    return this.handle.optimizerStep();
  }

  /** Sequences decoding now, and requests waiting to join the batch. */
  get load(): { running: number; waiting: number } {
    return this.#scheduler.load;
  }

  /** The prefix cache's counters as of the last generation step (hit rate = hits / lookups). */
  get prefixCache(): NativePrefixCacheStats {
    return this.#scheduler.prefixCache;
  }

  /**
   * Samples a continuation of `prompt`. Concurrent calls share decode batches. Pure
   * temperature sampling by default; top-k / top-p only when asked.
   */
  generate(request: GenerateRequest): Promise<Generation> {
    const vocab = this.config.native.vocabSize;
    if (typeof request !== 'object' || request === null) throw invalidArg('request', 'must be an object');
    const { prompt, signal, onToken, ...rest } = request;
    const o = parseGenerateOptions(rest, 'request');
    const ids = int32Array(prompt, 'request.prompt', { min: 0, max: vocab - 1, rangeHint: `the vocabulary has ${vocab} ids` });
    if (ids.length === 0) throw invalidArg('request.prompt', 'is empty', 'render at least one token (the chat template does)');
    for (const [i, t] of (o.stopTokens ?? []).entries())
      if (t >= vocab) throw invalidArg(`request.stopTokens[${i}]`, `(${t}) is outside the vocabulary [0, ${vocab})`);
    this.handle;  // throws when disposed
    const seed = o.seed ?? (this.options.seed * 1_000_003 + this.#requests) % Number.MAX_SAFE_INTEGER;
    ++this.#requests;
    return this.#scheduler.submit({
      prompt: ids,
      maxTokens: o.maxTokens,
      stopTokens: new Set(o.stopTokens ?? this.tokenizer.eosTokenIds),
      temperature: o.temperature,
      topK: o.topK,
      topP: o.topP,
      seed,
      signal,
      onToken,
    });
  }

  /**
   * Replaces the weights with a checkpoint's (a directory of this architecture: what save()
   * writes), between decode steps: running generations finish on the old weights, waiting ones
   * start on the new. The optimizer state is left as it is. Returns the new weight version.
   */
  async reloadWeights(dir: string): Promise<number> {
    const source = path.resolve(dir);
    await this.exclusive(() => loadCheckpoint(this.handle, source, { tiedEmbeddings: this.config.native.tieWordEmbeddings, optimizer: false }));
    this.#weightVersion += 1;
    this.#weightSource = source;
    return this.#weightVersion;
  }

  /** How many times reloadWeights() replaced the weights (0 = as loaded), and from where. */
  get weights(): { version: number; source: string | undefined } {
    return { version: this.#weightVersion, source: this.#weightSource };
  }

  /**
   * Forward-only logprobs: for each sequence, log softmax(z / temperature) of every token given
   * those before it (entry 0 is 0). To recompute old logprobs and to check the sampler.
   */
  async logprobs(sequences: ArrayLike<number>[], options: { temperature?: number } = {}): Promise<Float32Array[]> {
    const temperature = options.temperature ?? 1;
    if (!(temperature > 0)) throw invalidArg('options.temperature', 'must be > 0');
    const packed = this.pack(sequences, 'sequences');
    const out = await this.handle.logprobs({ ...packed, temperature, microBatchTokens: this.options.microBatchTokens, packSequences: this.options.packSequences });
    return sequences.map((_, i) => out.subarray(packed.offsets[i]!, packed.offsets[i + 1]!));
  }

  /**
   * One optimizer step over a batch: micro-batches by token budget, gradient accumulation,
   * global-norm clipping, AdamW at the schedule's learning rate. Waits for running
   * generations to finish first, so no sequence is sampled from two versions of the weights.
   */
  async trainStep(batch: TrainStepBatch): Promise<TrainStepResult> {
    const { native: nativeBatch, loss } = this.trainInputs(batch);
    const step = this.handle.optimizerStep();
    const o = this.options.optimizer;
    const lr = batch.lr ?? learningRate(o.lr, step, o.schedule);
    if (!(lr >= 0) || !Number.isFinite(lr)) throw invalidArg('batch.lr', 'must be a finite number >= 0');
    const result = await this.exclusive(() =>
      this.handle.trainStep(nativeBatch, {
        ...loss,
        ...this.forwardOptions(),
        lr,
        beta1: o.betas[0],
        beta2: o.betas[1],
        eps: o.eps,
        weightDecay: o.weightDecay,
        maxGradNorm: this.options.maxGradNorm,
        applyUpdate: true,
        returnGradients: false,
        lossPath: 'fused',
      }),
    );
    return this.stepResult(result, lr);
  }

  /** How a train step's forwards are cut and kept (the policy's own options). */
  private forwardOptions(): { microBatchTokens: number; packSequences: boolean; activationCheckpointing: boolean } {
    const { microBatchTokens, packSequences, activationCheckpointing } = this.options;
    return { microBatchTokens, packSequences, activationCheckpointing };
  }

  /**
   * Diagnostics: the batch's fp32 gradients by parameter name, without updating anything;
   * lossPath 'autograd' differentiates plain libtorch ops over materialized logits instead of
   * the fused loss (the independent check of the fused path).
   */
  async gradients(batch: TrainStepBatch, options: { lossPath?: 'fused' | 'autograd' } = {}): Promise<{ loss: number; gradients: Record<string, Float32Array> }> {
    const { native: nativeBatch, loss } = this.trainInputs(batch);
    const result = await this.exclusive(() =>
      this.handle.trainStep(nativeBatch, {
        ...loss,
        ...this.forwardOptions(),
        // No update: the optimizer's fields are unused.
        lr: 0,
        beta1: 0.9,
        beta2: 0.999,
        eps: 1e-8,
        weightDecay: 0,
        maxGradNorm: 0,
        applyUpdate: false,
        returnGradients: true,
        lossPath: options.lossPath ?? 'fused',
      }),
    );
    return { loss: result.loss, gradients: result.gradients! };
  }

  /**
   * Joins a data-parallel process group (PyTorch's c10d: a TCPStore rendezvous at
   * masterAddr:masterPort, served by rank 0, and Gloo over TCP). Every rank calls it; it
   * resolves once all have joined and hold rank 0's weights. From then on each trainStep sums
   * its gradients over the ranks before clipping and AdamW, so ranks that train on their
   * shares of a batch, with token weights of the global batch, take the step one process would
   * take on the whole batch, and keep identical weights.
   */
  async joinGroup(options: ProcessGroupInput): Promise<void> {
    const o = groupOptions(options);
    const build = native().buildInfo();
    const cuda = this.options.device !== 'cpu';
    const backend = o.backend ?? (cuda && build.nccl ? 'nccl' : 'gloo');
    if (backend === 'nccl' && !cuda) throw invalidArg('options.backend', 'is "nccl" and this policy is on the CPU', 'use "gloo" (the default on CPU)');
    assertBackendBuilt(backend);
    await this.exclusive(() => this.handle.joinGroup({ ...o, backend }));
  }

  /** The group this policy trains in ({rank, worldSize}), or null. */
  get group(): { rank: number; worldSize: number } | null {
    return this.handle.groupInfo();
  }

  /**
   * Each fp32 master tensor's sum and sum of squares, in float64: policies that hold the same
   * weights give the same bits (data-parallel ranks check that they stayed identical).
   */
  weightsFingerprint(): Float64Array {
    return this.handle.weightsFingerprint();
  }

  /** Sums `values` over the group's ranks (every rank calls it, in the same order as its other collectives). */
  async allReduce(values: ArrayLike<number>): Promise<Float64Array> {
    return this.exclusive(() => this.handle.allReduce(Float64Array.from(values)));
  }

  /**
   * Writes a Hugging Face model directory atomically: config.json, safetensors (sharded past
   * maxShardBytes), tokenizer files, and (optimizer: true) AdamW's state and fp32 master
   * weights so that loading it resumes training exactly.
   */
  async save(dir: string, options: Partial<SaveOptions> & { extra?: unknown } = {}): Promise<void> {
    const { extra, ...rest } = options;
    const o = parseSaveOptions(rest, 'options');
    const dtype = o.dtype ?? (this.config.hf.torch_dtype === 'bfloat16' || this.config.hf.torch_dtype === 'float16' ? this.config.hf.torch_dtype : 'float32');
    await this.exclusive(() =>
      saveCheckpoint(this.handle, dir, {
        config: this.config.hf,
        files: { ...this.carriedFiles, ...this.tokenizer.toFiles() },
        dtype: NATIVE_DTYPE[dtype]!,
        maxShardBytes: o.maxShardBytes,
        optimizer: o.optimizer,
        extra,
      }),
    );
  }

  /** Cancels pending generations and frees the model's memory. Idempotent. */
  dispose(): void {
    if (!this.#handle) return;
    this.#scheduler.cancelAll();
    this.#handle.dispose();
    this.#handle = undefined;
  }

  /** Runs fn with no generation in flight (new ones wait). */
  private async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    await this.#scheduler.pause();
    try {
      return await fn();
    } finally {
      this.#scheduler.resume();
    }
  }

  private pack(sequences: ArrayLike<number>[], field: string): { tokens: Int32Array; offsets: Int32Array } {
    if (!Array.isArray(sequences)) throw invalidArg(field, 'must be an array of token-id arrays');
    const vocab = this.config.native.vocabSize;
    const offsets = new Int32Array(sequences.length + 1);
    for (const [i, s] of sequences.entries()) offsets[i + 1] = offsets[i]! + (s?.length ?? 0);
    const tokens = new Int32Array(offsets[sequences.length]!);
    for (const [i, s] of sequences.entries())
      tokens.set(int32Array(s, `${field}[${i}]`, { min: 0, max: vocab - 1, rangeHint: `the vocabulary has ${vocab} ids` }), offsets[i]!);
    return { tokens, offsets };
  }

  private trainInputs(batch: TrainStepBatch): { native: NativeTrainBatch; loss: ResolvedLossOptions } {
    if (typeof batch !== 'object' || batch === null || !Array.isArray(batch.sequences))
      throw invalidArg('batch.sequences', 'must be an array of sequences');
    // In a process group a rank may have no share of a mini-batch: it still takes part in the step.
    if (batch.sequences.length === 0 && !((this.group?.worldSize ?? 1) > 1)) throw invalidArg('batch.sequences', 'is empty');
    const loss = isResolvedLossOptions(batch.loss) ? batch.loss : resolveLossOptions(batch.loss ?? {}, 'batch.loss', this.options.device);
    const seqs = batch.sequences;
    const packed = this.pack(seqs.map((s) => s.tokens), 'batch.sequences[].tokens');
    const n = packed.tokens.length;
    const weights = new Float32Array(n), oldLogprobs = new Float32Array(n), advantages = new Float32Array(n);
    const refLogprobs = loss.klCoef !== 0 ? new Float32Array(n) : undefined;
    for (const [i, s] of seqs.entries()) {
      const where = `batch.sequences[${i}]`;
      const at = packed.offsets[i]!;
      const T = { length: s.tokens.length, lengthOf: `${where}.tokens.length` };
      const w = float32Array(s.weights, `${where}.weights`, { ...T, nonNegative: true });
      if (w.length > 0 && w[0] !== 0) throw invalidArg(`${where}.weights[0]`, 'must be 0: the first token has nothing predicting it');
      weights.set(w, at);
      oldLogprobs.set(float32Array(s.oldLogprobs, `${where}.oldLogprobs`, T), at);
      if (s.advantages !== undefined) advantages.set(float32Array(s.advantages, `${where}.advantages`, T), at);
      else if (typeof s.advantage === 'number' && Number.isFinite(s.advantage)) advantages.fill(s.advantage, at, at + s.tokens.length);
      else throw invalidArg(`${where}.advantage`, 'must be a finite number (or pass advantages per token)');
      if (refLogprobs) {
        if (s.refLogprobs === undefined) throw invalidArg(`${where}.refLogprobs`, 'is required when batch.loss.kl is set');
        refLogprobs.set(float32Array(s.refLogprobs, `${where}.refLogprobs`, T), at);
      }
    }
    return { native: { ...packed, weights, oldLogprobs, advantages, refLogprobs }, loss };
  }

  private stepResult(r: Awaited<ReturnType<NativePolicyHandle['trainStep']>>, lr: number): TrainStepResult {
    const s: PolicyLossStats = r.stats;
    return {
      loss: r.loss,
      gradNorm: r.gradNorm,
      entropy: s.entropyMean,
      approxKl: s.approxKl,
      clipFracLow: s.clipFracLow,
      clipFracHigh: s.clipFracHigh,
      ratioMean: s.ratioMean,
      ratioMax: s.ratioMax,
      lossTokens: s.maskedTokens,
      tokens: r.tokens,
      tokensPerSecond: r.seconds > 0 ? r.tokens / r.seconds : 0,
      microBatches: r.microBatches,
      seconds: r.seconds,
      lr,
      step: this.handle.optimizerStep(),
    };
  }
}
