/**
 * The native addon: the one place that loads it and the one interface that describes every
 * function it exports. Everything here takes arguments already validated and fully defaulted
 * by the TypeScript wrappers (lib/math/*); call those, not this.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { packageInfo } from './util/package-info.js';
import { SwerlError } from './errors.js';

export interface NativeBuildInfo {
  torchVersion: string;
  /** Where CMake found libtorch: LIBTORCH, Torch_DIR, PyTorch, or Debian libtorch-dev. */
  torchSource: string;
  torchDir: string;
  torchLibDir: string;
  cuda: boolean;
  /** Whether the addon was built with c10d's Gloo process group (data parallelism on CPU ranks; Debian's libgloo-dev). */
  processGroups: boolean;
  /** NCCL process groups (CUDA ranks): a CUDA build against a libtorch with NCCL. */
  nccl: boolean;
  parallelInfo: string;
  threads: number;
  /** Whether the addon tuned glibc's allocator when it loaded (SWERL_MALLOC_TUNING=0: not). */
  allocatorTuned: boolean;
  /** OpenBLAS's kernel set in this process (SkylakeX, Haswell, Prescott, ...; see blasKernels); null where libblas.so.3 is not OpenBLAS. */
  blasCore: string | null;
}

export interface NativeLossOptions {
  objective: 'policy-gradient' | 'nll';
  clipLow: number;
  clipHigh: number;
  /** 0 = off. */
  dualClip: number;
  temperature: number;
  entropyCoef: number;
  /** 0 = no KL term. */
  klCoef: number;
  klKind: 'k1' | 'k2' | 'k3';
  chunkTokens: number;
  chunkVocab: number;
  deterministic: boolean;
}

/** fusedLinearPolicyLoss's placement: operand precision and device. */
export interface NativeFusedPlacement {
  dtype: 'float32' | 'bfloat16' | 'float16';
  device: 'cpu' | 'cuda';
}

export interface NativeTokenInputs {
  targets: Int32Array;
  oldLogprobs: Float32Array;
  advantages: Float32Array;
  weights: Float32Array;
  /** Required when klCoef != 0. */
  refLogprobs?: Float32Array;
}

export interface NativeLossStats {
  approxKl: number;
  clipFracLow: number;
  clipFracHigh: number;
  ratioMean: number;
  ratioMax: number;
  entropyMean: number;
  maskedTokens: number;
}

export interface NativeLossResult {
  loss: number;
  logprobs: Float32Array;
  entropy: Float32Array;
  stats: NativeLossStats;
}

export interface NativeBenchResult {
  timesMs: number[];
  /** Peak resident memory above what was resident before the call, gradients included. */
  peakExtraBytes: number;
  /** Bytes of the gradients every path must produce: (T + V) x H x 4. */
  gradientBytes: number;
  loss: number;
}

/** The decoder's architecture, fully resolved (lib/model/model-config.ts). */
/** Long-context rotary scaling, every field resolved by lib/model/rope-scaling.ts. */
export type NativeRopeScaling =
  | { kind: 'none' }
  | {
      kind: 'yarn' | 'llama3';
      factor: number;
      /** The context length before scaling. */
      originalMaxPositions: number;
      /** Multiplies cos and sin (YaRN's mscale; 1 for Llama 3.1). */
      attentionFactor: number;
      betaFast: number;
      betaSlow: number;
      truncate: boolean;
      lowFreqFactor: number;
      highFreqFactor: number;
    };

export interface NativeModelConfig {
  vocabSize: number;
  hiddenSize: number;
  intermediateSize: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  ropeTheta: number;
  rmsNormEps: number;
  tieWordEmbeddings: boolean;
  /** Qwen3's per-head RMSNorm on q and k. */
  qkNorm: boolean;
  /** Qwen2's biases on the q, k and v projections. */
  attentionBias: boolean;
  /** Long-context rotary scaling, resolved (lib/model/rope-scaling.ts); absent: plain RoPE. */
  ropeScaling?: NativeRopeScaling;
}

/** A parameter as Hugging Face checkpoints name it. */
export interface NativeParameterSpec {
  name: string;
  shape: number[];
}

/** Floating-point dtypes of weights crossing the boundary, in safetensors' spelling. */
export type NativeDtype = 'F32' | 'BF16' | 'F16';
export type NativeStateKind = 'parameter' | 'exp_avg' | 'exp_avg_sq';

/** The generator's prefix cache (native/src/model/prefix_cache.h), counted since the policy was made. */
export interface NativePrefixCacheStats {
  /** Prompts admitted while the cache was on, and those that reused a stored prefix. */
  lookups: number;
  hits: number;
  /** Positions copied from the cache, and positions prefilled. */
  reusedTokens: number;
  prefilledTokens: number;
  evictions: number;
  entries: number;
  bytes: number;
}

export interface NativeGenerationRequest {
  id: number;
  prompt: Int32Array;
  /** 0 = greedy. */
  temperature: number;
  /** 0 = off. */
  topK: number;
  /** 1 = off. */
  topP: number;
  seed: number;
}

/** Sequences packed end to end: sequence i is tokens[offsets[i], offsets[i + 1]). */
export interface NativePackedSequences {
  tokens: Int32Array;
  offsets: Int32Array;
}

/** Per-token arrays aligned with tokens (entry j is token j, predicted from those before it). */
export interface NativeTrainBatch extends NativePackedSequences {
  weights: Float32Array;
  oldLogprobs: Float32Array;
  advantages: Float32Array;
  refLogprobs?: Float32Array;
}

export interface NativeTrainOptions extends NativeLossOptions {
  microBatchTokens: number;
  packSequences: boolean;
  activationCheckpointing: boolean;
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  /** 0 = no clipping. */
  maxGradNorm: number;
  applyUpdate: boolean;
  returnGradients: boolean;
  lossPath: 'fused' | 'autograd';
}

export interface NativeTrainResult {
  loss: number;
  gradNorm: number;
  stats: NativeLossStats;
  tokens: number;
  microBatches: number;
  seconds: number;
  /** fp32 gradients by parameter name, when returnGradients. */
  gradients?: Record<string, Float32Array>;
}

export interface NativePolicyHandle {
  parameterSpecs(): NativeParameterSpec[];
  initRandom(init: { std: number; seed: number }): void;
  /** Little-endian bytes of the spec's shape in `dtype`. */
  setState(kind: NativeStateKind, index: number, dtype: NativeDtype, bytes: Uint8Array): void;
  getState(kind: NativeStateKind, index: number, dtype: NativeDtype): Uint8Array;
  hasOptimizerState(): boolean;
  optimizerStep(): number;
  setOptimizerStep(step: number): void;
  /** Releases, admits (prefills), then samples one token for every sequence in the batch. */
  generateStep(step: {
    release: Float64Array;
    admit: NativeGenerationRequest[];
  }): Promise<{ ids: Float64Array; tokens: Int32Array; logprobs: Float32Array; prefixCache: NativePrefixCacheStats }>;
  logprobs(sequences: NativePackedSequences & { temperature: number; microBatchTokens: number; packSequences: boolean }): Promise<Float32Array>;
  trainStep(batch: NativeTrainBatch, options: NativeTrainOptions): Promise<NativeTrainResult>;
  /** The rendezvous (every rank must call it), then rank 0's weights broadcast to all. */
  joinGroup(group: { backend: 'gloo' | 'nccl'; masterAddr: string; masterPort: number; rank: number; worldSize: number; timeoutMs: number; bucketBytes: number }): Promise<void>;
  /** Sums over the group's ranks. */
  allReduce(values: Float64Array): Promise<Float64Array>;
  groupInfo(): { rank: number; worldSize: number } | null;
  /** Each fp32 master tensor's sum and sum of squares, in float64. */
  weightsFingerprint(): Float64Array;
  dispose(): void;
}

/** An opaque process group made by groupJoin. */
export type NativeGroupHandle = { readonly __nativeGroup: unique symbol };

export interface NativeAddon {
  PolicyHandle: new (
    config: NativeModelConfig,
    options: { device: string; computeDtype: NativeDtype; prefixCacheBytes?: number; prefillChunkTokens?: number; decodeGraphs?: boolean },
  ) => NativePolicyHandle;
  parameterSpecs(config: NativeModelConfig): NativeParameterSpec[];

  /** A process group outside any policy (Gloo): the rendezvous, then sums over its ranks. */
  groupJoin(group: { masterAddr: string; masterPort: number; rank: number; worldSize: number; timeoutMs: number }): Promise<NativeGroupHandle>;
  groupAllReduce(group: NativeGroupHandle, values: Float64Array): Promise<Float64Array>;
  groupClose(group: NativeGroupHandle): void;

  setErrorClass(errorClass: typeof SwerlError): void;
  buildInfo(): NativeBuildInfo;
  /** 0 = the machine's core count. Returns the count in effect. */
  setNumThreads(threads: number): number;
  /** OpenBLAS's thread count (>= 1); returns the count in effect, -1 where libblas.so.3 is not OpenBLAS. */
  setBlasThreads(threads: number): number;
  /** OpenBLAS's thread count, -1 where libblas.so.3 is not OpenBLAS. */
  blasThreads(): number;

  computeAdvantages(args: {
    rewards: Float32Array;
    groups: Int32Array;
    estimator: 'grpo' | 'drgrpo' | 'rloo' | 'maxrl';
  }): Float32Array;
  tokenWeights(args: {
    mask: Uint8Array;
    sequenceIds: Int32Array;
    numSequences: number;
    aggregation: 'token-mean' | 'seq-mean-token-mean' | 'seq-mean-token-sum-norm';
    maxLength: number;
    /** 0 = this batch's own count. */
    globalSequences: number;
    globalMaskedTokens: number;
  }): Float32Array;
  compactFilter(args: {
    rewards: Float32Array;
    terminations: Uint8Array;
    mask?: Uint8Array;
    sequenceIds?: Int32Array;
  }): { rewards: Float32Array; filtered: Uint8Array; mask?: Uint8Array };
  turnPenalty(args: {
    rewards: Float32Array;
    turns: Int32Array;
    threshold: number;
    maxTurns: number;
  }): Float32Array;
  overlongPenalty(args: {
    rewards: Float32Array;
    lengths: Int32Array;
    maxLength: number;
    bufferLength: number;
  }): Float32Array;
  keepInformativeGroups(args: { rewards: Float32Array; groups: Int32Array }): Uint8Array;
  keepNonzeroAdvantages(args: { advantages: Float32Array }): Uint8Array;

  policyLoss(
    inputs: NativeTokenInputs & { logits: Float32Array; vocabSize: number },
    options: NativeLossOptions,
  ): Promise<NativeLossResult & { gradLogits: Float32Array }>;
  fusedLinearPolicyLoss(
    inputs: NativeTokenInputs & {
      hidden: Float32Array;
      weight: Float32Array;
      hiddenSize: number;
      vocabSize: number;
    },
    options: NativeLossOptions & NativeFusedPlacement,
  ): Promise<NativeLossResult & { gradHidden: Float32Array; gradWeight: Float32Array }>;
  /**
   * Diagnostic: a one-layer model (hidden = input x projection, [T, D] x [D, H]) ending in the
   * libtorch autograd loss, fused or over materialized logits; returns the gradients that
   * autograd carried back to projection and weight.
   */
  projectedPolicyLoss(
    inputs: NativeTokenInputs & {
      input: Float32Array;
      projection: Float32Array;
      weight: Float32Array;
      inputSize: number;
      hiddenSize: number;
      vocabSize: number;
      fused: boolean;
    },
    options: NativeLossOptions,
  ): Promise<NativeLossResult & { gradProjection: Float32Array; gradWeight: Float32Array }>;

  /** Times the loss on random inputs of this shape, with these (resolved) loss options. */
  benchPolicyLoss(
    config: NativeLossOptions & {
      tokens: number;
      hiddenSize: number;
      vocabSize: number;
      path: 'fused' | 'materialized';
      repeats: number;
      warmup: number;
      seed: number;
    },
  ): Promise<NativeBenchResult>;
}

const require = createRequire(import.meta.url);

/** The folder holding swerl's package.json (lib/ in a checkout, dist/lib/ when built). */
export function packageRoot(): string {
  return packageInfo().root;
}

interface BuildRecord {
  torchVersion?: string;
  torchSource?: string;
  torchLibDir?: string;
}

function readBuildRecord(root: string): BuildRecord | undefined {
  try {
    return JSON.parse(readFileSync(join(root, 'build', 'swerl_build.json'), 'utf8')) as BuildRecord;
  } catch {
    return undefined;
  }
}

const REBUILD = 'npm rebuild swerl (in a checkout of swerl: npm run build:native)';
const INSTALL_TORCH =
  'install libtorch (Debian/Ubuntu: sudo apt-get install libtorch-dev libopenblas0-pthread; ' +
  'or PyTorch for python3; or export LIBTORCH=/path/to/libtorch)';

/** Turns a failure to load the addon into a SwerlError that says what was tried and the fix. */
export function explainLoadFailure(error: unknown, tried: string, build?: BuildRecord): SwerlError {
  const reason = error instanceof Error ? error.message : String(error);
  const builtWith = build?.torchVersion
    ? ` It was built against libtorch ${build.torchVersion} from ${build.torchSource} (${build.torchLibDir}).`
    : '';
  let advice: string;
  const missingLibrary = /([^\s:]+\.so[^\s:]*): cannot open shared object file/.exec(reason);
  if (/Could not locate the bindings file|Cannot find module/.test(reason)) {
    advice = `The native addon is not built. Fix: ${INSTALL_TORCH}, then ${REBUILD}.`;
  } else if (missingLibrary) {
    advice =
      `A shared library the addon needs is missing: ${missingLibrary[1]}.${builtWith} ` +
      `Fix: reinstall that libtorch, or ${INSTALL_TORCH} and ${REBUILD}.`;
  } else if (/undefined symbol|version `[^']+' not found/.test(reason)) {
    advice =
      `The addon and the libtorch it loaded disagree (ABI mismatch: another libtorch version or ` +
      `C++ ABI than the one it was built with).${builtWith} Fix: ${REBUILD} against the libtorch you have.`;
  } else if (/NODE_MODULE_VERSION|did not self-register|invalid ELF header|wrong ELF class/.test(reason)) {
    advice = `The addon was built for another Node.js or machine. Fix: ${REBUILD}.`;
  } else {
    advice = `Fix: ${REBUILD}; if it persists, ${INSTALL_TORCH}.`;
  }
  return new SwerlError(
    'ERR_SWERL_NATIVE_LOAD',
    `swerl could not load its native addon (tried ${tried}): ${reason.split('\n')[0]}\n${advice}`,
  );
}

/**
 * The OpenBLAS kernel set for a CPU, by the instruction sets it has: SkylakeX (AVX-512), Haswell
 * (AVX2 and FMA), or undefined (leave OpenBLAS's choice). OpenBLAS picks its kernels by the CPU's
 * model number when it loads, and a release older than the CPU falls back to its SSE3 kernels:
 * Debian 12's 0.3.21 takes an Intel Xeon of model 207 (Emerald Rapids, AVX-512) for a Prescott,
 * and SFT on the demo's reader ran 2.8 times slower for it (bench/README.md). On the CPUs it does
 * know these are the kernels it picks for fp32 GEMM (Zen's are Haswell's).
 */
export function blasCoreFor(cpuinfo: string): string | undefined {
  const flags = new Set(/^flags\s*:(.*)$/m.exec(cpuinfo)?.[1]?.trim().split(/\s+/) ?? []);
  if (['avx512f', 'avx512bw', 'avx512vl', 'avx512dq', 'avx512cd'].every((f) => flags.has(f))) return 'SkylakeX';
  if (flags.has('avx2') && flags.has('fma')) return 'Haswell';
  return undefined;
}

let blasCoreChosen: string | undefined;

/**
 * Names OpenBLAS's kernels by the CPU's instruction sets (blasCoreFor) before the addon loads
 * OpenBLAS, through OPENBLAS_CORETYPE, which OpenBLAS reads once, at load. A setting of the
 * user's own wins; SWERL_BLAS_TUNING=0 leaves OpenBLAS to its own choice. Child processes
 * inherit the variable (a sandbox's numpy gets the same kernels).
 */
function chooseBlasKernels(): void {
  if (process.platform !== 'linux' || process.arch !== 'x64') return;
  if (process.env.OPENBLAS_CORETYPE !== undefined || process.env.SWERL_BLAS_TUNING === '0') return;
  let cpuinfo: string;
  try {
    cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    return;
  }
  blasCoreChosen = blasCoreFor(cpuinfo);
  if (blasCoreChosen) process.env.OPENBLAS_CORETYPE = blasCoreChosen;
}

/** Which BLAS kernels this process runs and who chose them: swerl (blasCoreFor), the environment (OPENBLAS_CORETYPE), or OpenBLAS itself. */
export function blasKernels(): { core: string | null; chosenBy: 'swerl' | 'environment' | 'openblas' } {
  const core = native().buildInfo().blasCore;
  const chosenBy = blasCoreChosen !== undefined ? 'swerl' : process.env.OPENBLAS_CORETYPE !== undefined ? 'environment' : 'openblas';
  return { core, chosenBy };
}

function load(): NativeAddon {
  const root = packageRoot();
  chooseBlasKernels();
  const override = process.env.SWERL_NATIVE_PATH;
  let addon: NativeAddon;
  try {
    addon = override
      ? (require(override) as NativeAddon)
      : (require('bindings')({ bindings: 'swerl_native', module_root: root }) as NativeAddon);
  } catch (error) {
    const tried = override
      ? `SWERL_NATIVE_PATH=${override}`
      : `build/Release/swerl_native.node and the other locations of the 'bindings' package under ${root}`;
    throw explainLoadFailure(error, tried, readBuildRecord(root));
  }
  addon.setErrorClass(SwerlError);
  return addon;
}

let cached: NativeAddon | undefined;

/** The loaded addon (loaded on first use). */
export function native(): NativeAddon {
  cached ??= load();
  return cached;
}

/**
 * One OpenBLAS thread, for a process whose policy computes while sandbox commands are spawned
 * (training or evaluating on SWE tasks): OpenBLAS's fork handler shuts its thread pool down
 * under a multi-threaded GEMM running on another thread, which then waits forever. libtorch's
 * own threads still split the work above BLAS. Nothing to do where libblas.so.3 is not OpenBLAS.
 */
export function pinBlasToOneThread(): void {
  native().setBlasThreads(1);
}
