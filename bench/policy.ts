/**
 * npm run bench:policy — the native policy on CPU: generation throughput at 1, 16 and 64
 * concurrent requests (continuous batching), and train-step throughput (forward + fused loss +
 * backward + AdamW), for the qwen3-tiny preset (byte vocabulary) and a ~50M-parameter Qwen3.
 * Prints a table per section and writes bench/results/policy.json.
 *
 *   node dist/bench/policy.js [--quick] [--repeats N] [--min-seconds S] [--models tiny,50m] [--out FILE]
 *
 * Every cell runs one warm-up, then at least N timed repeats, and more while its timed runs
 * total under S seconds (at most 50), so the sub-second cells of the tiny model get a stable median.
 */
import os from 'node:os';
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { blasKernels, native, packageRoot } from '../lib/native.js';
import { NativePolicy } from '../lib/model/native-policy.js';
import { parameterCount, presetConfig, resolveModelConfig, type HfModelConfig, type ModelPreset } from '../lib/model/model-config.js';
import { writeJsonAtomic } from '../lib/util/atomic.js';
import { mulberry32 } from '../lib/util/random.js';
import { flag } from './args.js';

const quick = process.argv.includes('--quick');
const repeats = Number(flag('--repeats') ?? (quick ? 1 : 3));
if (!Number.isInteger(repeats) || repeats < 1) throw new Error(`--repeats must be an integer >= 1 (got ${flag('--repeats')})`);
const minSeconds = Number(flag('--min-seconds') ?? (quick ? 0 : 2));
if (!(minSeconds >= 0)) throw new Error(`--min-seconds must be a number >= 0 (got ${flag('--min-seconds')})`);
const MAX_REPEATS = 50;
/** Whether a cell with these timed runs (seconds) needs another. */
const more = (times: number[]) => times.length < repeats || (times.length < MAX_REPEATS && times.reduce((a, b) => a + b, 0) < minSeconds);
const out = flag('--out') ?? path.join(packageRoot(), 'bench', 'results', quick ? 'policy-quick.json' : 'policy.json');
const only = flag('--models')?.split(',');
const BATCHES = [1, 16, 64];
const SEED = 1234;

interface ModelSpec {
  name: string;
  preset: ModelPreset;
  vocabSize: number;
  /** Prompt tokens and sampled tokens per request. */
  promptTokens: number;
  newTokens: number;
  /** Train batch: sequences x length. */
  trainSequences: number;
  trainLength: number;
}

const MODELS: ModelSpec[] = quick
  ? [
      { name: 'tiny', preset: 'qwen3-tiny', vocabSize: 265, promptTokens: 64, newTokens: 16, trainSequences: 16, trainLength: 256 },
      { name: '50m', preset: 'qwen3-50m', vocabSize: 32000, promptTokens: 64, newTokens: 4, trainSequences: 2, trainLength: 128 },
    ]
  : [
      { name: 'tiny', preset: 'qwen3-tiny', vocabSize: 265, promptTokens: 64, newTokens: 64, trainSequences: 16, trainLength: 256 },
      { name: '50m', preset: 'qwen3-50m', vocabSize: 32000, promptTokens: 64, newTokens: 64, trainSequences: 8, trainLength: 256 },
    ];

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

function randomTokens(random: () => number, length: number, vocab: number): Int32Array {
  const t = new Int32Array(length);
  for (let i = 0; i < length; ++i) t[i] = Math.floor(random() * vocab);
  return t;
}

interface GenerationRow {
  model: string;
  batch: number;
  promptTokens: number;
  newTokens: number;
  /** Wall seconds for all `batch` requests sampling newTokens each (median of repeats). */
  seconds: number;
  times: number[];
  /** Sampled tokens per wall second, all requests together. */
  tokensPerSecond: number;
  /** Each request's wall time / newTokens: what one request sees per token, prefill included. */
  msPerTokenPerRequest: number;
  /** The same batch with maxTokens 1: prefill of every prompt + one sample (median). */
  prefillSeconds: number;
  prefillTimes: number[];
  /** Prompt tokens prefilled per second in that run. */
  prefillTokensPerSecond: number;
  /** prefillSeconds / seconds. */
  prefillShare: number;
  /** (seconds - prefillSeconds) / (newTokens - 1): one decode step of the whole batch. */
  decodeStepMs: number;
  /** batch / decodeStepMs: sampled tokens per second in the decode phase alone. */
  decodeTokensPerSecond: number;
  /** Share of the cores other processes used during the cell (0 = quiet). */
  otherCpuShare: number;
}

/** Wall seconds for `batch` concurrent requests of maxTokens each, checking every one ran to its limit. */
async function generateOnce(policy: NativePolicy, spec: ModelSpec, batch: number, maxTokens: number, random: () => number): Promise<number> {
  const prompts = Array.from({ length: batch }, () => randomTokens(random, spec.promptTokens, spec.vocabSize));
  const t0 = performance.now();
  const results = await Promise.all(prompts.map((prompt) => policy.generate({ prompt, maxTokens, stopTokens: [], temperature: 1 })));
  const seconds = (performance.now() - t0) / 1000;
  for (const r of results)
    if (r.tokens.length !== maxTokens || r.finishReason !== 'length')
      throw new Error(`a request sampled ${r.tokens.length} tokens (${r.finishReason}), expected ${maxTokens} (length)`);
  return seconds;
}

async function benchGeneration(policy: NativePolicy, spec: ModelSpec, batch: number): Promise<GenerationRow> {
  const random = mulberry32(SEED + batch);
  const N = spec.newTokens;
  const cpu0 = cpuSnapshot();
  await generateOnce(policy, spec, batch, N, random); // warm-up: allocator, KV cache growth, threads
  const times: number[] = [];
  const prefillTimes: number[] = [];
  while (more(times)) times.push(await generateOnce(policy, spec, batch, N, random));
  while (more(prefillTimes)) prefillTimes.push(await generateOnce(policy, spec, batch, 1, random));
  const seconds = median(times);
  const prefillSeconds = median(prefillTimes);
  const decodeStep = N > 1 ? (seconds - prefillSeconds) / (N - 1) : NaN;
  return {
    model: spec.name,
    batch,
    promptTokens: spec.promptTokens,
    newTokens: N,
    seconds,
    times,
    tokensPerSecond: (batch * N) / seconds,
    msPerTokenPerRequest: (seconds / N) * 1000,
    prefillSeconds,
    prefillTimes,
    prefillTokensPerSecond: (batch * spec.promptTokens) / prefillSeconds,
    prefillShare: prefillSeconds / seconds,
    decodeStepMs: decodeStep * 1000,
    decodeTokensPerSecond: batch / decodeStep,
    otherCpuShare: otherShare(cpu0),
  };
}

interface TrainRow {
  model: string;
  sequences: number;
  length: number;
  tokens: number;
  microBatches: number;
  /** The step's own timing (native), median of repeats. */
  seconds: number;
  times: number[];
  /** Around trainStep() from JavaScript, median. */
  wallSeconds: number;
  tokensPerSecond: number;
  /** 6 x parameters x tokens / seconds (attention's T^2 work not counted). */
  gflops: number;
  /** policy.logprobs over the same batch (forward only), median. */
  scoreSeconds: number;
  scoreTokensPerSecond: number;
  /** A step over one 16-token sequence (median): the per-step cost that does not scale with tokens (optimizer, gradient norm, buffers). */
  fixedSeconds: number;
  /** (seconds - fixedSeconds) / tokens. */
  msPerToken: number;
  /** Share of the cores other processes used during the cell (0 = quiet). */
  otherCpuShare: number;
}

async function benchTrain(policy: NativePolicy, spec: ModelSpec, params: number): Promise<TrainRow> {
  const random = mulberry32(SEED);
  const cpu0 = cpuSnapshot();
  const S = spec.trainSequences, L = spec.trainLength;
  const tokens = Array.from({ length: S }, () => randomTokens(random, L, spec.vocabSize));
  const weights = new Float32Array(L).fill(1 / (S * (L - 1)));
  weights[0] = 0;
  // Old logprobs from the policy itself (ratio ~1: every token inside the clip range, so every
  // token is active in the backward), timed as the forward-only score.
  const scoreTimes: number[] = [];
  let old: Float32Array[] = [];
  old = await policy.logprobs(tokens); // warm-up
  while (more(scoreTimes)) {
    const t0 = performance.now();
    old = await policy.logprobs(tokens);
    scoreTimes.push((performance.now() - t0) / 1000);
  }
  const batch = { sequences: tokens.map((t, i) => ({ tokens: t, weights, oldLogprobs: old[i]!, advantage: i % 2 === 0 ? 1 : -1 })) };
  const times: number[] = [];
  const walls: number[] = [];
  let microBatches = 0;
  let warm = false; // the first step is the warm-up (it also allocates AdamW's state)
  while (!warm || more(times)) {
    const t0 = performance.now();
    const result = await policy.trainStep(batch);
    const wall = (performance.now() - t0) / 1000;
    if (!Number.isFinite(result.loss)) throw new Error(`train step loss is ${result.loss}`);
    microBatches = result.microBatches;
    if (!warm) {
      warm = true;
      continue;
    }
    times.push(result.seconds);
    walls.push(wall);
  }
  // The fixed per-step cost: the same step over one 16-token sequence.
  const small = randomTokens(random, 16, spec.vocabSize);
  const smallWeights = new Float32Array(16).fill(1 / 15);
  smallWeights[0] = 0;
  const [smallOld] = await policy.logprobs([small]);
  const fixedTimes: number[] = [];
  while (more(fixedTimes))
    fixedTimes.push((await policy.trainStep({ sequences: [{ tokens: small, weights: smallWeights, oldLogprobs: smallOld!, advantage: 1 }] })).seconds);
  const fixedSeconds = median(fixedTimes);
  const seconds = median(times);
  const scoreSeconds = median(scoreTimes);
  return {
    model: spec.name,
    sequences: S,
    length: L,
    tokens: S * L,
    microBatches,
    seconds,
    times,
    wallSeconds: median(walls),
    tokensPerSecond: (S * L) / seconds,
    gflops: (6 * params * S * L) / seconds / 1e9,
    scoreSeconds,
    scoreTokensPerSecond: (S * L) / scoreSeconds,
    fixedSeconds,
    msPerToken: ((seconds - fixedSeconds) / (S * L)) * 1000,
    otherCpuShare: otherShare(cpu0),
  };
}

function cpuModel(): string {
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8').split('\n').find((l) => l.startsWith('model name'));
    if (line) return line.split(':')[1]!.trim();
  } catch {
    // not Linux
  }
  return os.cpus()[0]?.model ?? 'unknown CPU';
}

/**
 * CPU seconds the machine spent busy, from /proc/stat (all cores), and this process's own:
 * their difference over a cell is other work competing for the cores.
 */
function cpuSnapshot(): { busy: number; own: number; at: number } {
  let busy = NaN;
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const idle = fields[3]! + (fields[4] ?? 0); // idle + iowait
    busy = (fields.slice(0, 8).reduce((a, b) => a + b, 0) - idle) / 100; // USER_HZ = 100 on Linux
  } catch {
    // not Linux
  }
  const u = process.cpuUsage();
  return { busy, own: (u.user + u.system) / 1e6, at: performance.now() / 1000 };
}

/** Share of the machine's cores other processes kept busy since `from` (0 = a quiet machine). */
function otherShare(from: ReturnType<typeof cpuSnapshot>): number {
  const to = cpuSnapshot();
  const other = to.busy - from.busy - (to.own - from.own);
  return Math.max(0, other / ((to.at - from.at) * os.cpus().length));
}

const pad = (cells: (string | number)[], widths: number[]) => cells.map((c, i) => String(c).padStart(widths[i]!)).join(' ');

async function main(): Promise<void> {
  const started = performance.now();
  const loadBefore = os.loadavg();
  const info = native().buildInfo();
  const blas = blasKernels();
  const cpu = cpuModel();
  const cores = os.cpus().length;
  console.log(
    `swerl policy benchmark: ${cpu}, ${cores} cores, ${info.threads} libtorch threads, libtorch ${info.torchVersion} (${info.torchSource}), ` +
      `BLAS kernels ${blas.core ?? 'not OpenBLAS'} (chosen by ${blas.chosenBy}), ` +
      `fp32, ${repeats} repeats + 1 warm-up${quick ? ' (quick)' : ''}\n`,
  );
  const quiet0 = cpuSnapshot();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const busyBefore = otherShare(quiet0);
  if (busyBefore > 0.1) console.error(`warning: other processes kept ${(100 * busyBefore).toFixed(0)}% of the cores busy just before the run; the numbers will be low\n`);

  const models = MODELS.filter((m) => !only || only.includes(m.name));
  const configs: Record<string, { preset: ModelPreset; config: HfModelConfig; parameters: number; spec: ModelSpec }> = {};
  const generation: GenerationRow[] = [];
  const train: TrainRow[] = [];
  for (const spec of models) {
    const config = presetConfig(spec.preset, spec.vocabSize);
    const params = parameterCount(resolveModelConfig(config).native);
    configs[spec.name] = { preset: spec.preset, config, parameters: params, spec };
    console.error(`${spec.name}: ${spec.preset}, vocabulary ${spec.vocabSize}, ${(params / 1e6).toFixed(2)} M parameters`);
    const policy = await NativePolicy.load(config, { seed: SEED, maxBatchSize: Math.max(...BATCHES), microBatchTokens: 8192 });
    try {
      for (const batch of BATCHES) {
        const row = await benchGeneration(policy, spec, batch);
        generation.push(row);
        console.error(`  generate batch ${batch}: ${row.tokensPerSecond.toFixed(0)} tokens/s (${row.seconds.toFixed(2)} s)`);
      }
      const row = await benchTrain(policy, spec, params);
      train.push(row);
      console.error(`  train ${row.sequences}x${row.length}: ${row.tokensPerSecond.toFixed(0)} tokens/s (${row.seconds.toFixed(2)} s)`);
    } finally {
      policy.dispose();
    }
  }

  console.log(`\ngeneration (temperature 1, no stop tokens; tokens/s = sampled tokens per wall second, all requests)`);
  const gw = [6, 10, 6, 4, 4, 8, 9, 11, 10, 10, 9, 12, 8];
  console.log(pad(['model', 'params M', 'batch', 'P', 'N', 'wall s', 'tokens/s', 'ms/tok/req', 'prefill s', 'prefill %', 'step ms', 'decode tok/s', 'other %'], gw));
  for (const r of generation)
    console.log(
      pad(
        [
          r.model,
          (configs[r.model]!.parameters / 1e6).toFixed(2),
          r.batch,
          r.promptTokens,
          r.newTokens,
          r.seconds.toFixed(2),
          r.tokensPerSecond.toFixed(0),
          r.msPerTokenPerRequest.toFixed(1),
          r.prefillSeconds.toFixed(3),
          (100 * r.prefillShare).toFixed(0),
          r.decodeStepMs.toFixed(1),
          r.decodeTokensPerSecond.toFixed(0),
          (100 * r.otherCpuShare).toFixed(0),
        ],
        gw,
      ),
    );

  console.log('\ntrain step (fp32, fused loss, AdamW; microBatchTokens 8192)');
  const tw = [6, 10, 5, 5, 7, 7, 8, 9, 8, 10, 8, 12, 8];
  console.log(pad(['model', 'params M', 'S', 'L', 'tokens', 'step s', 'tokens/s', 'GFLOP/s', 'fixed s', 'ms/token', 'score s', 'score tok/s', 'other %'], tw));
  for (const r of train)
    console.log(
      pad(
        [
          r.model,
          (configs[r.model]!.parameters / 1e6).toFixed(2),
          r.sequences,
          r.length,
          r.tokens,
          r.seconds.toFixed(3),
          r.tokensPerSecond.toFixed(0),
          r.gflops.toFixed(1),
          r.fixedSeconds.toFixed(3),
          r.msPerToken.toFixed(3),
          r.scoreSeconds.toFixed(3),
          r.scoreTokensPerSecond.toFixed(0),
          (100 * r.otherCpuShare).toFixed(0),
        ],
        tw,
      ),
    );

  const totalSeconds = (performance.now() - started) / 1000;
  const loadAfter = os.loadavg();
  const contended = [...generation, ...train].filter((r) => r.otherCpuShare > 0.05);
  console.log(
    contended.length === 0
      ? '\nother processes used < 5% of the cores during every cell'
      : `\nwarning: other processes competed for the cores in ${contended.length} cells (up to ${(100 * Math.max(...contended.map((r) => r.otherCpuShare))).toFixed(0)}% of them; otherCpuShare in the JSON): rerun on a quiet machine`,
  );
  await writeJsonAtomic(out, {
    benchmark: 'native policy on CPU: generation throughput (continuous batching) and train-step throughput',
    date: new Date().toISOString(),
    quick,
    device: {
      cpu,
      logicalCores: cores,
      threads: info.threads,
      torch: info.torchVersion,
      torchSource: info.torchSource,
      parallelInfo: info.parallelInfo,
      /** OpenBLAS's kernel set (null: another BLAS) and who chose it (SWERL_BLAS_TUNING=0: OpenBLAS itself). */
      blas,
      kernel: os.release(),
      node: process.version,
      /** 1, 5 and 15-minute load averages: anything else running on the cores shows here. */
      loadAverageBefore: loadBefore,
      loadAverageAfter: loadAfter,
      /** Share of the cores other processes used in the second before the run. */
      otherCpuShareBefore: busyBefore,
    },
    method:
      `every cell: 1 warm-up, then at least ${repeats} timed repeats and more (at most ${MAX_REPEATS}) while they total under ${minSeconds} s; ` +
      'the median is reported and every time is kept. generation: each repeat submits `batch` concurrent generate() calls with fresh ' +
      'random prompts of P tokens, maxTokens N, stopTokens [], temperature 1, and times until all resolve; every request is checked to have ' +
      'sampled exactly N tokens. tokens/s = batch*N / wall. The prefill run is the same with maxTokens 1 (prefill of all prompts + one sample); ' +
      'decode step = (wall - prefill wall) / (N - 1). train: S random sequences of length L, weights 1/(S*(L-1)) on every token but the first, ' +
      'old logprobs from policy.logprobs (ratio ~1), advantage +1/-1 alternating, default options (fp32, microBatchTokens 8192, AdamW lr 1e-6); ' +
      `median of the step's own seconds; GFLOP/s = 6*params*tokens/seconds (no attention term). ` +
      'fixed = median step over one 16-token sequence (the cost that does not scale with tokens); ms/token = (step - fixed) / tokens. ' +
      'score = policy.logprobs over the same batch (forward only).',
    repeats,
    minSeconds,
    seed: SEED,
    models: configs,
    generation,
    train,
    totalSeconds,
  });
  console.log(`\nwrote ${out} (${totalSeconds.toFixed(0)} s)`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
