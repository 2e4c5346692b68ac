/**
 * npm run bench:parallel — data-parallel training on CPU with Gloo over loopback: the same
 * global batch trained by 1 rank and by 2 ranks (a process each, the machine's threads split
 * between them), train-step seconds and tokens/s, and an all-reduce of the model's gradient
 * size timed alone (its share of the step). Prints a table and writes
 * bench/results/parallel.json.
 *
 *   node dist/bench/parallel.js [--quick] [--model tiny|50m] [--steps N] [--out FILE]
 *
 * The driver starts the ranks: this same script with --rank (one JSON argument).
 */
import { spawn } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { NativePolicy } from '../lib/model/native-policy.js';
import { parameterCount, presetConfig, resolveModelConfig, type ModelPreset } from '../lib/model/model-config.js';
import { packageRoot } from '../lib/native.js';
import { rankShare } from '../lib/train/parallel.js';
import { writeJsonAtomic } from '../lib/util/atomic.js';
import { mulberry32 } from '../lib/util/random.js';
import { flag } from './args.js';

interface RankArgs {
  rank: number;
  worldSize: number;
  port: number;
  threads: number;
  preset: ModelPreset;
  vocabSize: number;
  sequences: number;
  length: number;
  steps: number;
}

interface RankResult {
  rank: number;
  stepSeconds: number[];
  allReduceSeconds: number[];
  tokens: number;
}

const MODELS: Record<string, { preset: ModelPreset; vocabSize: number; sequences: number; length: number }> = {
  tiny: { preset: 'qwen3-tiny', vocabSize: 265, sequences: 16, length: 256 },
  '50m': { preset: 'qwen3-50m', vocabSize: 32000, sequences: 8, length: 256 },
};

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** The global batch: `sequences` random sequences, every token after the first trained, weights of the whole batch. */
function globalBatch(args: RankArgs, step: number) {
  const rand = mulberry32(1000 + step);
  const trained = args.sequences * (args.length - 1);
  return Array.from({ length: args.sequences }, () => ({
    tokens: Array.from({ length: args.length }, () => Math.floor(rand() * Math.min(args.vocabSize, 256))),
    weights: Array.from({ length: args.length }, (_, j) => (j === 0 ? 0 : 1 / trained)),
    oldLogprobs: Array.from({ length: args.length }, () => -5),
    advantage: rand() * 2 - 1,
  }));
}

async function runRank(args: RankArgs): Promise<RankResult> {
  const policy = await NativePolicy.load(presetConfig(args.preset, args.vocabSize), { seed: 1, threads: args.threads, optimizer: { lr: 1e-4 } });
  if (args.worldSize > 1) await policy.joinGroup({ rank: args.rank, worldSize: args.worldSize, masterPort: args.port });
  const parameters = parameterCount(resolveModelConfig(presetConfig(args.preset, args.vocabSize)).native);
  const result: RankResult = { rank: args.rank, stepSeconds: [], allReduceSeconds: [], tokens: 0 };
  for (let step = 0; step <= args.steps; step++) {
    const sequences = rankShare(globalBatch(args, step), args.worldSize > 1 ? args : undefined);
    const started = performance.now();
    await policy.trainStep({ sequences, loss: { objective: 'policy-gradient' } });
    const seconds = (performance.now() - started) / 1000;
    if (step === 0) continue; // warm-up
    result.stepSeconds.push(seconds);
    result.tokens = args.sequences * args.length;
    if (args.worldSize > 1) {
      // The gradients' bytes (fp32) as float64s: half as many values, the same bytes on the wire.
      const buffer = new Float64Array(Math.ceil(parameters / 2));
      const reduceStarted = performance.now();
      await policy.allReduce(buffer);
      result.allReduceSeconds.push((performance.now() - reduceStarted) / 1000);
    }
  }
  policy.dispose();
  return result;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

function spawnRank(args: RankArgs): Promise<RankResult> {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--rank', JSON.stringify(args)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  return new Promise((resolve, reject) =>
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as RankResult) : reject(new Error(`rank ${args.rank} exited ${code}`)))),
  );
}

async function drive(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const modelName = flag('--model') ?? 'tiny';
  const model = MODELS[modelName];
  if (!model) throw new Error(`--model must be one of ${Object.keys(MODELS).join(', ')} (got ${modelName})`);
  const steps = Number(flag('--steps') ?? (quick ? 2 : 5));
  const cores = os.availableParallelism();
  const rows = [];
  for (const worldSize of [1, 2]) {
    const port = await freePort();
    const threads = Math.max(1, Math.floor(cores / worldSize));
    const results = await Promise.all(Array.from({ length: worldSize }, (_, rank) => spawnRank({ rank, worldSize, port, threads, ...model, steps })));
    const stepSeconds = median(results[0]!.stepSeconds);
    const allReduce = worldSize > 1 ? median(results[0]!.allReduceSeconds) : 0;
    rows.push({ worldSize, threadsPerRank: threads, stepSeconds, tokensPerSecond: results[0]!.tokens / stepSeconds, allReduceSeconds: allReduce, allReduceShare: allReduce / stepSeconds });
  }
  console.log(`data parallel, ${modelName} (${model.sequences} x ${model.length} tokens a step), ${cores} cores, Gloo over loopback`);
  console.log('ranks  threads/rank  step s   tokens/s  all-reduce s  share');
  for (const r of rows) console.log(`${String(r.worldSize).padStart(5)}  ${String(r.threadsPerRank).padStart(12)}  ${r.stepSeconds.toFixed(3).padStart(6)}  ${r.tokensPerSecond.toFixed(0).padStart(9)}  ${r.allReduceSeconds.toFixed(4).padStart(12)}  ${(100 * r.allReduceShare).toFixed(1).padStart(4)}%`);
  const out = flag('--out') ?? path.join(packageRoot(), 'bench', 'results', quick ? 'parallel-quick.json' : 'parallel.json');
  await writeJsonAtomic(out, { machine: { cpus: os.cpus()[0]?.model ?? 'unknown', cores }, model: modelName, ...model, steps, measuredAt: new Date().toISOString(), rows });
  console.log(`wrote ${out}`);
}

const rankFlag = flag('--rank');
if (rankFlag !== undefined) console.log(JSON.stringify(await runRank(JSON.parse(rankFlag) as RankArgs)));
else await drive();
