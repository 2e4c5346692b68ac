/**
 * npm run bench:long-context — one train step on one sequence of T tokens (forward, fused
 * loss, backward, AdamW) on CPU, T from 2k to 32k, for the tiny and small presets: seconds and
 * the process's peak resident memory, each length in a fresh process (peak RSS only grows).
 * Attention memory should grow with T, not T² (blockwise causal attention past 2048 tokens).
 * Prints a table and writes bench/results/long-context.json.
 *
 *   node dist/bench/long-context.js [--models tiny,small] [--lengths 2048,4096,...] [--out FILE]
 */
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { NativePolicy } from '../lib/model/native-policy.js';
import { presetConfig, type ModelPreset } from '../lib/model/model-config.js';
import { native, packageRoot } from '../lib/native.js';
import { writeJsonAtomic } from '../lib/util/atomic.js';
import { mulberry32 } from '../lib/util/random.js';
import { flag } from './args.js';

const PRESETS: Record<string, ModelPreset> = { tiny: 'qwen3-tiny', small: 'qwen3-small' };

if (flag('--child') !== undefined) {
  // One measurement: the preset, T tokens, one train step.
  const [name, length] = [flag('--child')!, Number(flag('--length'))];
  const random = mulberry32(length);
  const tokens = Array.from({ length }, () => Math.floor(random() * 265));
  const policy = await NativePolicy.load(presetConfig(PRESETS[name]!, 265), { seed: 1, microBatchTokens: length });
  const baseline = process.resourceUsage().maxRSS;
  const started = performance.now();
  await policy.trainStep({ sequences: [{ tokens, weights: tokens.map((_, j) => (j > 0 ? 1 : 0)), oldLogprobs: tokens.map(() => -5.6), advantage: 1 }] });
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(`${JSON.stringify({ seconds, peakRssMiB: process.resourceUsage().maxRSS / 1024, loadedRssMiB: baseline / 1024 })}\n`);
  policy.dispose();
  process.exit(0);
}

const models = (flag('--models') ?? 'tiny,small').split(',');
const lengths = (flag('--lengths') ?? '2048,4096,8192,16384,32768').split(',').map(Number);
const out = flag('--out') ?? path.join(packageRoot(), 'bench', 'results', 'long-context.json');
const self = fileURLToPath(import.meta.url);
const rows: { model: string; tokens: number; seconds: number; peakRssMiB: number; stepRssMiB: number }[] = [];
for (const model of models) {
  for (const length of lengths) {
    const text = execFileSync(process.execPath, [self, '--child', model, '--length', String(length)], { encoding: 'utf8', maxBuffer: 1 << 20 });
    const r = JSON.parse(text.trim().split('\n').at(-1)!) as { seconds: number; peakRssMiB: number; loadedRssMiB: number };
    rows.push({ model, tokens: length, seconds: r.seconds, peakRssMiB: r.peakRssMiB, stepRssMiB: r.peakRssMiB - r.loadedRssMiB });
    console.error(`${model} T=${length}: ${r.seconds.toFixed(2)} s, peak ${r.peakRssMiB.toFixed(0)} MiB`);
  }
}
const info = native().buildInfo();
console.log(`one train step on one sequence, ${os.cpus()[0]?.model ?? 'cpu'} (${os.availableParallelism()} cores, libtorch ${info.torchVersion})`);
console.log('model  tokens  seconds  peak RSS (MiB)  the step\'s own (MiB)  MiB per 1k tokens');
for (const r of rows) {
  console.log(`${r.model.padEnd(6)} ${String(r.tokens).padStart(6)} ${r.seconds.toFixed(2).padStart(8)} ${r.peakRssMiB.toFixed(0).padStart(15)} ${r.stepRssMiB.toFixed(0).padStart(21)} ${((r.stepRssMiB / r.tokens) * 1024).toFixed(1).padStart(18)}`);
}
await writeJsonAtomic(out, { machine: { cpu: os.cpus()[0]?.model, cores: os.availableParallelism(), torch: info.torchVersion }, rows, measuredAt: new Date().toISOString() });
console.log(`wrote ${out}`);
