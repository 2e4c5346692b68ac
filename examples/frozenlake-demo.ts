/**
 * The README's main job: `npm run demo` trains the tiny model from scratch with GRPO++ on
 * FrozenLake, on CPU, and shows greedy success on the training maps rising step by step.
 *
 *   npm run demo                         examples/frozenlake.json into runs/demo-<time>/
 *   npm run demo -- --config my.json     another config (same schema as `swerl train`)
 *   npm run demo -- --ablation           GRPO and GRPO++ on the same seeds and budget
 *   npm run demo -- --async 1            rollouts collected while the learner trains, at most 1 step stale
 *
 * It prints the success curve, writes it with the timings to <run dir>/demo.json, and exits
 * non-zero unless success went from <= 0.2 to >= 0.9 and stayed there to the end of the run
 * (the demo's claim, checked each run).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { train, type TrainSummary } from '../lib/train/trainer.js';
import { asciiChart, type Series } from '../lib/train/plots.js';
import { writeJsonAtomic } from '../lib/util/atomic.js';

const START_AT_MOST = 0.2;
const REACH_AT_LEAST = 0.9;

interface DemoRun {
  label: string;
  summary: TrainSummary;
  /** Greedy success after each step (step 0: before RL). */
  curve: { step: number; success: number; seconds: number }[];
  /** The first step whose success reached REACH_AT_LEAST, and the seconds (warm-up included) until then. */
  reached: { step: number; seconds: number } | null;
  /** The step from which success stayed >= REACH_AT_LEAST to the end of the run. */
  held: { step: number; seconds: number } | null;
}

function stamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19);
}

async function runOne(label: string, config: Record<string, unknown>, dir: string, signal: AbortSignal): Promise<DemoRun> {
  const run = { ...(config.run as object), dir };
  const secondsAt = new Map<number, number>([[0, 0]]);
  const started = performance.now();
  const summary = await train({ ...config, run }, {
    signal,
    onEvent: (e) => {
      if (e.type === 'eval') secondsAt.set(e.step, (performance.now() - started) / 1000);
    },
  });
  const curve = summary.evals.map((e) => ({ ...e, seconds: secondsAt.get(e.step) ?? NaN }));
  const hit = curve.find((c) => c.step > 0 && c.success >= REACH_AT_LEAST);
  let from = curve.length;
  while (from > 0 && curve[from - 1]!.success >= REACH_AT_LEAST && curve[from - 1]!.step > 0) from--;
  const held = curve[from];
  return {
    label,
    summary,
    curve,
    reached: hit ? { step: hit.step, seconds: hit.seconds } : null,
    held: held ? { step: held.step, seconds: held.seconds } : null,
  };
}

/** The curves side by side, every step up to 20 rows, else every few steps (and the last). */
function table(runs: readonly DemoRun[]): string {
  const all = [...new Set(runs.flatMap((r) => r.curve.map((c) => c.step)))].sort((a, b) => a - b);
  const every = Math.ceil(all.length / 20);
  const steps = all.filter((step, i) => i % every === 0 || i === all.length - 1);
  const head = ['step', ...runs.flatMap((r) => [`${r.label} success`, 'minutes'])];
  const rows = steps.map((step) => [
    String(step),
    ...runs.flatMap((r) => {
      const c = r.curve.find((x) => x.step === step);
      return c ? [c.success.toFixed(3), (c.seconds / 60).toFixed(1)] : ['-', '-'];
    }),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i]!)).join('  ');
  return [line(head), ...rows.map(line)].join('\n');
}

function verdict(run: DemoRun): string {
  const start = run.curve[0]?.success ?? NaN;
  const last = run.curve.at(-1)?.success ?? NaN;
  const minutes = (s: number) => `${(s / 60).toFixed(1)} min`;
  if (!run.reached) return `${run.label}: greedy success ${start.toFixed(2)} -> ${last.toFixed(2)}; never reached ${REACH_AT_LEAST}`;
  const first = `first >= ${REACH_AT_LEAST} at step ${run.reached.step} (${minutes(run.reached.seconds)})`;
  const held = run.held ? `, held from step ${run.held.step} (${minutes(run.held.seconds)}) to the end` : `, not held to the end`;
  return `${run.label}: greedy success ${start.toFixed(2)} -> ${last.toFixed(2)}; ${first}${held}`;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      config: { type: 'string', default: 'examples/frozenlake.json' },
      out: { type: 'string' },
      ablation: { type: 'boolean', default: false },
      steps: { type: 'string' },
      async: { type: 'string' },
    },
  });
  const configPath = path.resolve(values.config!);
  const config = JSON.parse(await readFile(configPath, 'utf8')) as Record<string, unknown>;
  if (values.steps !== undefined) config.run = { ...(config.run as object), steps: Number(values.steps) };
  if (values.async !== undefined) config.rollout = { ...(config.rollout as object), mode: 'async', maxStaleness: Number(values.async) };
  const out = path.resolve(values.out ?? path.join('runs', `${values.ablation ? 'ablation' : 'demo'}-${stamp()}`));

  const stop = new AbortController();
  process.once('SIGINT', () => {
    process.stderr.write('\nstopping after closing the running episodes (Ctrl-C again to force)\n');
    stop.abort();
    process.once('SIGINT', () => process.exit(130));
  });

  const algorithm = (config.algorithm ?? {}) as Record<string, unknown>;
  const variants: [string, Record<string, unknown>][] = values.ablation
    ? [
        ['grpo++', { ...config, algorithm: { ...algorithm, preset: 'grpo++' } }],
        ['grpo', { ...config, algorithm: { ...algorithm, preset: 'grpo' } }],
      ]
    : [[String(algorithm.preset ?? 'grpo++'), config]];

  const runs: DemoRun[] = [];
  for (const [label, variant] of variants) {
    process.stderr.write(`\n== ${label} (${path.relative(process.cwd(), configPath)}), run dir ${path.join(out, label)}\n`);
    runs.push(await runOne(label, variant, path.join(out, label), stop.signal));
    if (stop.signal.aborted) break;
  }

  const series: Series[] = runs.map((r) => ({ label: `${r.label} greedy success`, points: r.curve.map((c) => ({ x: c.step, y: c.success })) }));
  console.log(`\nGreedy success on the ${((config.tasks as { trainSeeds?: unknown[] }).trainSeeds ?? []).length || ''} training maps, per training step\n`);
  console.log(asciiChart(series, { yMin: 0, yMax: 1, width: 60, height: 12 }));
  console.log(`\n${table(runs)}\n`);
  for (const r of runs) console.log(verdict(r));

  await writeJsonAtomic(path.join(out, 'demo.json'), {
    config: configPath,
    target: { startAtMost: START_AT_MOST, reachAtLeast: REACH_AT_LEAST },
    runs: runs.map((r) => ({ label: r.label, dir: r.summary.dir, steps: r.summary.steps, seconds: r.summary.seconds, curve: r.curve, reached: r.reached, held: r.held })),
  });
  console.log(`\nwrote ${path.join(out, 'demo.json')}; curves per run in <run dir>/curves.svg`);
  if (stop.signal.aborted) return 130;
  const first = runs[0]!;
  // The claim: from <= 0.2 before RL to >= 0.9, held to the end of the run.
  return (first.curve[0]?.success ?? 1) <= START_AT_MOST && first.held ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? `swerl demo: ${error.message}` : error);
    process.exit(1);
  },
);
