/**
 * npm run bench:packing — train-step and scoring throughput on a batch of mixed lengths, packed
 * (sequences end to end in a row, each attending to itself) against padded (a row each, padded
 * to the micro-batch's longest; the planner already groups similar lengths). The mix: lengths
 * log-uniform between --min and --max tokens (default 256..4096), as one step's trajectories
 * spread when some episodes end after a turn or two and others run to the budget.
 * Prints a table and writes bench/results/packing.json.
 *
 *   node dist/bench/packing.js [--models tiny,small] [--sequences 16] [--min 256] [--max 4096]
 *                              [--budget 8192] [--repeats 2] [--out FILE]
 */
import os from 'node:os';
import path from 'node:path';

import { NativePolicy } from '../lib/model/native-policy.js';
import { presetConfig, type ModelPreset } from '../lib/model/model-config.js';
import { native, packageRoot } from '../lib/native.js';
import { writeJsonAtomic } from '../lib/util/atomic.js';
import { mulberry32 } from '../lib/util/random.js';
import { flag, count } from './args.js';
import { median } from './stats.js';

const PRESETS: Record<string, ModelPreset> = { tiny: 'qwen3-tiny', small: 'qwen3-small', '50m': 'qwen3-50m' };
const models = (flag('--models') ?? 'tiny,small').split(',');
for (const m of models) if (!PRESETS[m]) throw new Error(`--models: unknown '${m}' (known: ${Object.keys(PRESETS).join(', ')})`);
const sequences = count('--sequences', 16);
const [minLength, maxLength] = [count('--min', 256), count('--max', 4096)];
const budget = count('--budget', 8192);
const repeats = count('--repeats', 2);
const out = flag('--out') ?? path.join(packageRoot(), 'bench', 'results', 'packing.json');

const random = mulberry32(11);
const lengths = Array.from({ length: sequences }, () => Math.round(minLength * (maxLength / minLength) ** random()));
const batchTokens = lengths.reduce((a, b) => a + b, 0);
const tokens = lengths.map((n) => Array.from({ length: n }, () => Math.floor(random() * 265)));
const batch = {
  sequences: tokens.map((t) => ({
    tokens: t,
    weights: t.map((_, j) => (j > 0 ? 1 / batchTokens : 0)),
    oldLogprobs: t.map(() => -5.6),
    advantage: random() < 0.5 ? 1 : -1,
  })),
};

interface Row {
  model: string;
  packed: boolean;
  microBatches: number;
  trainSeconds: number;
  trainTokensPerSecond: number;
  scoreSeconds: number;
  scoreTokensPerSecond: number;
}

const rows: Row[] = [];
for (const model of models) {
  for (const packed of [false, true]) {
    const policy = await NativePolicy.load(presetConfig(PRESETS[model]!, 265), { seed: 1, microBatchTokens: budget, packSequences: packed, optimizer: { lr: 0 } });
    await policy.logprobs([tokens[0]!.slice(0, 64)]);  // warm-up
    const train: number[] = [];
    const score: number[] = [];
    let microBatches = 0;
    for (let r = 0; r < repeats; r++) {
      const result = await policy.trainStep(batch);
      train.push(result.seconds);
      microBatches = result.microBatches;
      const started = performance.now();
      await policy.logprobs(tokens);
      score.push((performance.now() - started) / 1000);
    }
    policy.dispose();
    const [trainSeconds, scoreSeconds] = [median(train), median(score)];
    rows.push({ model, packed, microBatches, trainSeconds, trainTokensPerSecond: batchTokens / trainSeconds, scoreSeconds, scoreTokensPerSecond: batchTokens / scoreSeconds });
    console.error(`${model} ${packed ? 'packed' : 'padded'}: train ${trainSeconds.toFixed(2)} s, score ${scoreSeconds.toFixed(2)} s`);
  }
}

const info = native().buildInfo();
console.log(`packed vs padded micro-batches on ${os.cpus()[0]?.model ?? 'cpu'} (${os.availableParallelism()} cores, libtorch ${info.torchVersion})`);
console.log(`${sequences} sequences, ${minLength}..${maxLength} tokens log-uniform (${batchTokens} in all: ${lengths.join(' ')}), microBatchTokens ${budget}, median of ${repeats}`);
console.log('model  layout  micro-batches  train step (s)  train tokens/s  scoring (s)  scoring tokens/s  packed ×');
for (const r of rows) {
  const padded = rows.find((p) => p.model === r.model && !p.packed)!;
  console.log(`${r.model.padEnd(6)} ${(r.packed ? 'packed' : 'padded').padEnd(7)} ${String(r.microBatches).padStart(13)} ${r.trainSeconds.toFixed(2).padStart(15)} ${r.trainTokensPerSecond.toFixed(0).padStart(15)} ${r.scoreSeconds.toFixed(2).padStart(12)} ${r.scoreTokensPerSecond.toFixed(0).padStart(17)}  ${(r.trainTokensPerSecond / padded.trainTokensPerSecond).toFixed(2)} / ${(r.scoreTokensPerSecond / padded.scoreTokensPerSecond).toFixed(2)}`);
}
await writeJsonAtomic(out, { machine: { cpu: os.cpus()[0]?.model, cores: os.availableParallelism(), torch: info.torchVersion }, lengths, budget, repeats, rows, measuredAt: new Date().toISOString() });
console.log(`wrote ${out}`);
