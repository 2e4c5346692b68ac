/**
 * npm run bench:episode — what one long agent episode's generation costs on CPU, with and
 * without prefix caching: `--turns` turns (default 16), each adding `--observation` tokens
 * (default 400) and sampling `--sample` (default 64), from a `--prompt`-token opening (default
 * 600) to a context near 8k; against the ideal, one forward over the final context plus the
 * sampled tokens' decode. Prints a table and writes bench/results/episode.json.
 *
 *   node dist/bench/episode.js [--models small,50m] [--turns N] [--quick] [--out FILE]
 */
import os from 'node:os';
import path from 'node:path';

import { NativePolicy } from '../lib/model/native-policy.js';
import { presetConfig, type ModelPreset } from '../lib/model/model-config.js';
import { native, packageRoot } from '../lib/native.js';
import { writeJsonAtomic } from '../lib/util/atomic.js';
import { mulberry32 } from '../lib/util/random.js';
import { flag, count } from './args.js';

const quick = process.argv.includes('--quick');
const turns = count('--turns', quick ? 4 : 16);
const observation = count('--observation', quick ? 100 : 400);
const sample = count('--sample', quick ? 16 : 64);
const promptTokens = count('--prompt', quick ? 150 : 600);
const out = flag('--out') ?? path.join(packageRoot(), 'bench', 'results', quick ? 'episode-quick.json' : 'episode.json');
const MODELS: { name: string; preset: ModelPreset; vocabSize: number }[] = [
  { name: 'small', preset: 'qwen3-small' as const, vocabSize: 265 },
  { name: '50m', preset: 'qwen3-50m' as const, vocabSize: 32000 },
].filter((m) => (flag('--models')?.split(',') ?? ['small']).includes(m.name));

interface Row {
  model: string;
  prefixCache: boolean;
  turns: number;
  finalContext: number;
  generateSeconds: number;
  prefilledTokens: number;
  reusedTokens: number;
}

/** One episode: the same tokens for every variant (seeded observations, sampled replies). */
async function episode(policy: NativePolicy, vocab: number): Promise<{ seconds: number; context: number[]; promptPositions: number }> {
  const random = mulberry32(7);
  const draw = (n: number) => Array.from({ length: n }, () => Math.floor(random() * vocab));
  let context = draw(promptTokens);
  let seconds = 0;
  let promptPositions = 0;
  for (let turn = 0; turn < turns; turn++) {
    promptPositions += context.length;
    const started = performance.now();
    const g = await policy.generate({ prompt: context, maxTokens: sample, stopTokens: [], seed: turn });
    seconds += (performance.now() - started) / 1000;
    context = [...context, ...g.tokens, ...(turn + 1 < turns ? draw(observation) : [])];
  }
  return { seconds, context, promptPositions };
}

const rows: Row[] = [];
const ideal: { model: string; finalContext: number; forwardSeconds: number; decodeSeconds: number }[] = [];
for (const model of MODELS) {
  for (const prefixCache of [false, true]) {
    const policy = await NativePolicy.load(presetConfig(model.preset, model.vocabSize), { seed: 1, prefixCacheBytes: prefixCache ? 2 ** 30 : 0 });
    const { seconds, context, promptPositions } = await episode(policy, model.vocabSize);
    const stats = policy.prefixCache;
    // Without the cache every turn prefills its whole prompt.
    const prefilledTokens = prefixCache ? stats.prefilledTokens : promptPositions;
    rows.push({ model: model.name, prefixCache, turns, finalContext: context.length, generateSeconds: seconds, prefilledTokens, reusedTokens: stats.reusedTokens });
    if (prefixCache) {
      // The ideal: the final context in one forward, and the sampled tokens' decode steps.
      const forwardStarted = performance.now();
      await policy.logprobs([context]);
      const forwardSeconds = (performance.now() - forwardStarted) / 1000;
      const decodeStarted = performance.now();
      await policy.generate({ prompt: context.slice(0, 8), maxTokens: turns * sample, stopTokens: [], seed: 99 });
      ideal.push({ model: model.name, finalContext: context.length, forwardSeconds, decodeSeconds: (performance.now() - decodeStarted) / 1000 });
    }
    policy.dispose();
  }
}

const info = native().buildInfo();
console.log(`agent episode on ${os.cpus()[0]?.model ?? 'cpu'} (${os.availableParallelism()} cores, libtorch ${info.torchVersion}): ${turns} turns, +${observation} observation / ${sample} sampled tokens a turn, ${promptTokens}-token opening`);
console.log('model  prefix cache  final context  generation (s)  prefilled  reused  vs ideal');
for (const r of rows) {
  const best = ideal.find((i) => i.model === r.model)!;
  const idealSeconds = best.forwardSeconds + best.decodeSeconds;
  console.log(`${r.model.padEnd(6)} ${String(r.prefixCache).padEnd(13)} ${String(r.finalContext).padStart(13)} ${r.generateSeconds.toFixed(2).padStart(15)} ${String(r.prefilledTokens).padStart(10)} ${String(r.reusedTokens).padStart(7)}  ${(r.generateSeconds / idealSeconds).toFixed(2)}x`);
}
for (const i of ideal) console.log(`${i.model}: ideal = one forward over ${i.finalContext} tokens (${i.forwardSeconds.toFixed(2)} s) + ${turns * sample} decode steps (${i.decodeSeconds.toFixed(2)} s)`);
await writeJsonAtomic(out, { machine: { cpu: os.cpus()[0]?.model, cores: os.availableParallelism(), torch: info.torchVersion }, turns, observation, sample, promptTokens, rows, ideal, measuredAt: new Date().toISOString() });
console.log(`wrote ${out}`);
