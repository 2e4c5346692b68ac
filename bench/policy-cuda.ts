/**
 * npm run bench:policy-cuda — the native policy on a CUDA GPU, for a random Qwen3-0.6B-shaped
 * model (bf16 compute, fp32 masters): train-step tokens/s and MFU at 4k and 16k tokens per
 * sequence, and generation tokens/s at 1, 16 and 64 concurrent requests beside transformers'
 * generate on the same shape in the same run (bench/hf_generate.py, where python3 has
 * transformers). Prints a table and writes bench/results/policy-cuda.json.
 *
 *   node dist/bench/policy-cuda.js [--repeats 3] [--prompt 128] [--new 128] [--out FILE] [--no-hf]
 *                                  [--quick]   (a tiny model, short shapes, on --device cpu too: a smoke run)
 *
 * MFU counts the model's own FLOPs: 6 x parameters (the LM head included) per token, plus causal
 * attention's 6 x layers x heads x head_dim x T^2 per sequence; the fused loss's recompute of the
 * logits in the backward is not counted. Peak: 989 TFLOP/s, the H100/H200 SXM dense bf16 figure.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { native, packageRoot } from '../lib/native.js';
import { NativePolicy } from '../lib/model/native-policy.js';
import { parameterCount, resolveModelConfig, type HfModelConfig } from '../lib/model/model-config.js';
import { writeJsonAtomic } from '../lib/util/atomic.js';
import { mulberry32 } from '../lib/util/random.js';
import { count, flag } from './args.js';
import { median } from './stats.js';

const PEAK_BF16_FLOPS = 989e12;
const repeats = count('--repeats', 3);
const promptTokens = count('--prompt', 128);
const newTokens = count('--new', 128);
const out = flag('--out') ?? path.join(packageRoot(), 'bench', 'results', 'policy-cuda.json');
const quick = process.argv.includes('--quick');
const deviceName = flag('--device') ?? 'cuda';
const BATCHES = quick ? [1, 2] : [1, 16, 64];
const TRAIN_SHAPES = quick
  ? [{ sequences: 2, length: 64 }]
  : [
      { sequences: 4, length: 4096 },
      { sequences: 1, length: 16384 },
    ];

const QWEN3_06B: HfModelConfig = {
  architectures: ['Qwen3ForCausalLM'], model_type: 'qwen3', vocab_size: 151936, hidden_size: 1024, intermediate_size: 3072,
  num_hidden_layers: 28, num_attention_heads: 16, num_key_value_heads: 8, head_dim: 128, max_position_embeddings: 40960,
  rope_theta: 1e6, rms_norm_eps: 1e-6, tie_word_embeddings: true, hidden_act: 'silu',
};

const QWEN3_TINY: HfModelConfig = { ...QWEN3_06B, vocab_size: 512, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16 };
const MODEL = quick ? QWEN3_TINY : QWEN3_06B;

if (deviceName !== 'cpu' && !native().buildInfo().cuda) throw new Error('bench:policy-cuda needs the addon built with CUDA (buildInfo().cuda is false)');
const random = mulberry32(1234);
const tokens = (n: number) => Int32Array.from({ length: n }, () => Math.floor(random() * MODEL.vocab_size));

const config = resolveModelConfig(MODEL).native;
const params = parameterCount(config);
const policy = await NativePolicy.load(MODEL, { device: deviceName, computeDtype: deviceName === 'cpu' ? 'float32' : 'bfloat16', seed: 1, microBatchTokens: 16384, optimizer: { lr: 1e-6 } });

const train = [];
for (const shape of TRAIN_SHAPES) {
  const seqs = Array.from({ length: shape.sequences }, () => tokens(shape.length));
  const weights = new Float32Array(shape.length).fill(1 / (shape.sequences * (shape.length - 1)));
  weights[0] = 0;
  const old = await policy.logprobs(seqs);
  const batch = { sequences: seqs.map((t, i) => ({ tokens: t, weights, oldLogprobs: old[i]!, advantage: i % 2 ? -1 : 1 })) };
  await policy.trainStep(batch); // warm-up: AdamW state, allocator
  const times: number[] = [];
  for (let i = 0; i < repeats; ++i) times.push((await policy.trainStep(batch)).seconds);
  const seconds = median(times);
  const total = shape.sequences * shape.length;
  const flops = 6 * params * total + 6 * config.numLayers * config.numHeads * config.headDim * shape.length ** 2 * shape.sequences;
  train.push({ ...shape, tokens: total, seconds, times, tokensPerSecond: total / seconds, tflops: flops / seconds / 1e12, mfu: flops / seconds / PEAK_BF16_FLOPS });
}

const generation = [];
for (const batch of BATCHES) {
  const once = async () => {
    const prompts = Array.from({ length: batch }, () => tokens(promptTokens));
    const t0 = performance.now();
    const results = await Promise.all(prompts.map((prompt) => policy.generate({ prompt, maxTokens: newTokens, stopTokens: [], temperature: 1 })));
    for (const r of results) if (r.tokens.length !== newTokens) throw new Error(`a request sampled ${r.tokens.length} tokens, expected ${newTokens}`);
    return (performance.now() - t0) / 1000;
  };
  await once();
  const times: number[] = [];
  for (let i = 0; i < repeats; ++i) times.push(await once());
  const seconds = median(times);
  generation.push({ batch, promptTokens, newTokens, seconds, times, tokensPerSecond: (batch * newTokens) / seconds });
}
policy.dispose();

let transformers: { rows: { batch: number; tokensPerSecond: number }[]; transformers?: string; device?: string } | undefined;
if (!process.argv.includes('--no-hf') && deviceName !== 'cpu') {
  const file = path.join(os.tmpdir(), `swerl-hf-generate-${process.pid}.json`);
  const script = path.join(packageRoot(), 'bench', 'hf_generate.py');
  const run = spawnSync(process.env.SWERL_PYTHON ?? 'python3', [script, file, '--batches', BATCHES.join(','), '--prompt', String(promptTokens), '--new', String(newTokens), '--repeats', String(repeats)], { encoding: 'utf8', stdio: ['ignore', 'inherit', 'pipe'] });
  if (run.status === 0 && existsSync(file)) transformers = JSON.parse(readFileSync(file, 'utf8'));
  else console.error(`transformers baseline did not run (exit ${run.status}): ${run.stderr?.slice(-1500)}`);
  rmSync(file, { force: true });
}

const smi = deviceName === 'cpu' ? { status: 1, stdout: '' } : spawnSync('nvidia-smi', ['--query-gpu=name', '--format=csv,noheader'], { encoding: 'utf8' });
const device = smi.status === 0 ? smi.stdout.trim().split('\n')[0]! : deviceName;
console.log(`\n${quick ? 'Tiny' : 'Qwen3-0.6B-shaped'} random model (${(params / 1e6).toFixed(0)}M parameters) on ${device}, bf16 compute, fp32 masters`);
console.log('\ntrain step      tokens   seconds   tokens/s   TFLOP/s   MFU');
for (const r of train)
  console.log(`${r.sequences} x ${String(r.length).padEnd(7)} ${String(r.tokens).padStart(8)} ${r.seconds.toFixed(3).padStart(9)} ${r.tokensPerSecond.toFixed(0).padStart(10)} ${r.tflops.toFixed(1).padStart(9)} ${(r.mfu * 100).toFixed(1).padStart(5)}%`);
console.log(`\ngeneration (prompt ${promptTokens}, ${newTokens} new)   swerl tokens/s   transformers tokens/s   ratio`);
for (const r of generation) {
  const hf = transformers?.rows.find((h) => h.batch === r.batch)?.tokensPerSecond;
  console.log(`batch ${String(r.batch).padEnd(30)} ${r.tokensPerSecond.toFixed(1).padStart(14)} ${(hf?.toFixed(1) ?? '-').padStart(23)} ${(hf ? (r.tokensPerSecond / hf).toFixed(2) + 'x' : '-').padStart(7)}`);
}
await writeJsonAtomic(out, { device, torch: native().buildInfo().torchVersion, params, model: MODEL, train, generation, transformers, date: new Date().toISOString() });
console.log(`\nwrote ${out}`);
