/**
 * npm run bench:async — synchronous against asynchronous rollouts (rollout.mode 'async',
 * maxStaleness k): the same config trained both ways, one after the other in this process, on
 * FrozenLake (the demo's config: does it still learn?) and on swe-mini (bwrap sandboxes, where
 * the env's time is what async hides). Per run: seconds a step (its eval left out), how long
 * the learner waited for rollouts, the trainer's time, the staleness seen, greedy success.
 * Prints a table and writes bench/results/async.json.
 *
 *   node dist/bench/async.js [--quick] [--suites frozenlake,swe-mini] [--k 1] [--out FILE]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { packageRoot } from '../lib/native.js';
import { train } from '../lib/train/trainer.js';
import { writeJsonAtomic } from '../lib/util/atomic.js';
import { count, flag } from './args.js';

const quick = process.argv.includes('--quick');
const k = Number(flag('--k') ?? 1);
const suites = (flag('--suites') ?? 'frozenlake,swe-mini').split(',');
const out = flag('--out') ?? path.join(packageRoot(), 'bench', 'results', quick ? 'async-quick.json' : 'async.json');

interface Suite {
  config: string;
  steps: number;
  overrides: Record<string, unknown>;
}

const SUITES: Record<string, Suite> = {
  // The demo as it is: 45 steps, greedy eval after each.
  frozenlake: { config: 'examples/frozenlake.json', steps: quick ? 8 : 45, overrides: {} },
  // Eight rollouts a step in bwrap sandboxes; no eval (the step time is the point). The tiny
  // model never solves a task, so for its steps to train anything its episodes run to the
  // response budget (trained on, not masked) and DAPO's overlong penalty over response lengths
  // (turns of up to 256 tokens end at a sampled <|im_end|> more often than not) gives rewards
  // that differ within a group.
  'swe-mini': {
    config: 'examples/swe-mini.json',
    steps: count('--swe-steps', quick ? 2 : 5),
    overrides: {
      rollout: { tasksPerStep: 2, samplesPerTask: 4, concurrency: 8, maxTokensPerTurn: 256, promptBudget: 7168, responseBudget: 1024 },
      algorithm: { truncation: 'none', overlong: { maxLength: 1024, bufferLength: 1000 } },
      eval: { every: 0 },
      run: { checkpointEvery: 1000 },
    },
  },
};

interface RunRow {
  suite: string;
  mode: string;
  steps: number;
  seconds: number;
  /** Means over the steps after the first (the first has nothing to overlap with). */
  stepSeconds: number;
  waitSeconds: number;
  trainSeconds: number;
  collectSeconds: number | null;
  stalenessMax: number;
  stalenessMean: number;
  evals: { step: number; success: number }[];
  firstSolved: number | null;
  heldFrom: number | null;
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);

function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const result = { ...base };
  for (const [key, value] of Object.entries(over))
    result[key] = value && typeof value === 'object' && !Array.isArray(value) ? merge((base[key] ?? {}) as Record<string, unknown>, value as Record<string, unknown>) : value;
  return result;
}

async function runOne(name: string, suite: Suite, mode: 'sync' | 'async'): Promise<RunRow> {
  const file = path.join(packageRoot(), suite.config);
  const dir = mkdtempSync(path.join(os.tmpdir(), `swerl-bench-async-${name}-`));
  try {
    const config = merge(JSON.parse(readFileSync(file, 'utf8')), {
      ...suite.overrides,
      run: { ...(suite.overrides.run as object), dir, steps: suite.steps, progress: 'none', plots: false },
      rollout: { ...(suite.overrides.rollout as object), mode, ...(mode === 'async' ? { maxStaleness: k } : {}) },
    });
    const summary = await train(config, { baseDir: path.dirname(file) });
    const rows = readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((r) => r.step > 0 && r.time);
    const later = rows.slice(1);
    const evals = summary.evals;
    const firstSolved = evals.find((e) => e.success >= 0.9)?.step ?? null;
    let heldFrom: number | null = null;
    for (let i = evals.length - 1; i >= 0 && evals[i]!.success >= 0.9; i--) heldFrom = evals[i]!.step;
    return {
      suite: name,
      mode: mode === 'async' ? `async k=${k}` : 'sync',
      steps: summary.steps,
      seconds: summary.seconds,
      stepSeconds: mean(later.map((r) => r.time.stepSeconds - (r.eval?.seconds ?? 0))),
      waitSeconds: mean(later.map((r) => r.time.rolloutSeconds)),
      trainSeconds: mean(later.map((r) => r.time.trainSeconds)),
      collectSeconds: mode === 'async' ? mean(later.map((r) => r.async.collectSeconds)) : null,
      stalenessMax: Math.max(0, ...rows.map((r) => r.async?.staleness.max ?? 0)),
      stalenessMean: rows.reduce((a, r) => a + (r.async?.staleness.mean ?? 0), 0) / rows.length,
      evals,
      firstSolved,
      heldFrom,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const rows: RunRow[] = [];
  for (const name of suites) {
    const suite = SUITES[name];
    if (!suite) throw new Error(`--suites: ${name} is not one of ${Object.keys(SUITES).join(', ')}`);
    for (const mode of ['sync', 'async'] as const) {
      process.stderr.write(`${name}, ${mode}: ${suite.steps} steps\n`);
      rows.push(await runOne(name, suite, mode));
    }
  }
  const cores = os.cpus().length;
  console.log(`\nsync vs async rollouts (k = ${k}), ${cores} cores (${os.cpus()[0]?.model ?? 'unknown'}); means over steps 2..N, eval time left out`);
  console.log('suite      mode        steps   step s   wait s  train s  collect s  staleness max/mean  run s   greedy success: first >= 0.9 / held from');
  for (const r of rows) {
    const success = r.evals.length ? `${r.firstSolved ?? '-'} / ${r.heldFrom ?? '-'} (last ${r.evals.at(-1)!.success.toFixed(2)})` : '(no eval)';
    console.log(
      `${r.suite.padEnd(10)} ${r.mode.padEnd(10)} ${String(r.steps).padStart(6)} ${r.stepSeconds.toFixed(2).padStart(8)} ${r.waitSeconds.toFixed(2).padStart(8)} ${r.trainSeconds.toFixed(2).padStart(8)} ${(r.collectSeconds?.toFixed(2) ?? '-').padStart(10)} ${`${r.stalenessMax} / ${r.stalenessMean.toFixed(2)}`.padStart(19)} ${r.seconds.toFixed(0).padStart(6)}   ${success}`,
    );
  }
  for (const name of suites) {
    const [sync, async] = [rows.find((r) => r.suite === name && r.mode === 'sync')!, rows.find((r) => r.suite === name && r.mode !== 'sync')!];
    console.log(`${name}: async step ${(sync.stepSeconds / async.stepSeconds).toFixed(2)}x as fast as sync`);
  }
  await writeJsonAtomic(out, { machine: { cpus: os.cpus()[0]?.model ?? 'unknown', cores, memoryBytes: os.totalmem() }, k, quick, measuredAt: new Date().toISOString(), rows });
  console.log(`wrote ${out}`);
}

await main();
