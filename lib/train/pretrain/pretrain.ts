/**
 * pretrain(config): a model learns to read before it learns to act. Each step is
 * `pretrain.sequencesPerStep` reading drills (drills.ts) made afresh from the run's seed and the
 * step, trained on every token (token-mean NLL through the fused loss, as SFT), so a resumed
 * run sees exactly what the uninterrupted one would have and nothing is stored but checkpoints.
 * Copy probes on held-out programs (probes.ts) every `pretrain.probes.every` steps say whether
 * it reads yet. Everything else is a run as sft() makes one: metrics.jsonl, curves.svg,
 * TensorBoard / W&B, checkpoints, resume, Ctrl-C.
 */
import { ChatRenderer } from '../../model/chat-template.js';
import { assertWithinContext } from '../../model/rope-scaling.js';
import type { Tokenizer } from '../../types/tokenizer.js';
import { resolvePretrainConfig, type PretrainTrainConfig } from './options.js';
import { renderChartsSvg, seriesOf, type Chart } from '../plots.js';
import type { TrainEvent } from '../progress.js';
import { RunShell, type TrainHooks, type TrainSummary } from '../run.js';
import { sftStep } from '../sft/core.js';
import type { SftExample } from '../sft/example.js';
import { modelTokenizer } from '../configured-model.js';
import { sftStartingPoint } from '../sft/policy.js';
import { formatDuration } from '../../util/progress.js';
import { lookupIds, makeDrill, repeatIds, type DrillOptions } from './drills.js';
import type { PretrainConfig } from './options.js';
import { PROBE_KINDS, runCopyProbes, type ProbeResult } from './probes.js';

export interface PretrainSummary extends TrainSummary {
  /** The last copy probes. */
  probes?: ProbeResult['rates'];
}

/** Every token trained but the first. */
function everyToken(ids: ArrayLike<number>, id: string): SftExample {
  const tokens = Int32Array.from(ids);
  const mask = new Uint8Array(tokens.length).fill(1);
  mask[0] = 0;
  return { tokens, mask, source: 'drills', id };
}

/** Drill `index` of the run as a training example. */
export function drillExample(tokenizer: Tokenizer, seed: number, index: number, drills: DrillOptions): SftExample {
  const renderer = new ChatRenderer(tokenizer, { enableThinking: false }).append(...makeDrill(seed, index, drills).messages);
  return everyToken(renderer.ids, `drill-${seed}-${index}`);
}

/**
 * Step `step`'s examples: repeated spans alone during the repeats' warm-up, then the step's
 * drills, repeats and lookup sheets. A pure function of the seed and the step (a resumed run
 * sees what the uninterrupted one would have).
 */
export function stepExamples(tokenizer: Tokenizer, seed: number, step: number, options: PretrainConfig): SftExample[] {
  const { repeats, lookups } = options;
  const repeat = (i: number) => everyToken(repeatIds(tokenizer, seed, i, repeats.length), `repeat-${seed}-${i}`);
  if (step <= repeats.warmupSteps) return Array.from({ length: repeats.warmupSequences }, (_, j) => repeat((step - 1) * repeats.warmupSequences + j));
  const after = step - repeats.warmupSteps - 1;
  const firstRepeat = repeats.warmupSteps * repeats.warmupSequences + after * repeats.sequencesPerStep;
  return [
    ...Array.from({ length: options.sequencesPerStep }, (_, j) => drillExample(tokenizer, seed, after * options.sequencesPerStep + j, options.drills)),
    ...Array.from({ length: repeats.sequencesPerStep }, (_, j) => repeat(firstRepeat + j)),
    ...Array.from({ length: lookups.sequencesPerStep }, (_, j) => {
      const index = after * lookups.sequencesPerStep + j;
      return everyToken(lookupIds(tokenizer, seed, index, lookups.queries, options.drills), `lookup-${seed}-${index}`);
    }),
  ];
}

export function pretrainCharts(rows: readonly Record<string, unknown>[]): Chart[] {
  const s = (label: string, path: string) => seriesOf(rows, label, path);
  return [
    { title: 'NLL', xLabel: 'step', yLabel: 'nats/token', series: [s('drills (every token)', 'loss.nll')] },
    { title: 'Copy probes (held-out programs)', xLabel: 'step', yLabel: 'exact', yMin: 0, yMax: 1, series: PROBE_KINDS.map((k) => s(k, `probes.${k}`)) },
    { title: 'Learning rate', xLabel: 'step', yLabel: 'lr', series: [s('lr', 'loss.lr')] },
    { title: 'Throughput', xLabel: 'step', yLabel: 'tokens/s', series: [s('tokens/s', 'time.tokensPerSecond')] },
  ];
}

const fixed = (x: unknown, d = 3) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(d) : '-');
const rates = (p: ProbeResult['rates']) => PROBE_KINDS.map((k) => `${k} ${fixed(p[k], 2)}`).join('  ');

function consoleReporter(mode: string, steps: number): (e: TrainEvent) => void {
  if (mode === 'none') return () => {};
  const every = steps <= 100 ? 1 : Math.ceil(steps / 100);
  const started = performance.now();
  const log = (line: string) => console.error(line);
  return (e) => {
    if (e.type === 'start') log(`swerl pretrain: ${e.resumed ? `resuming at step ${e.step + 1}` : 'training'} for ${steps} steps in ${e.dir}`);
    else if (e.type === 'step') {
      const m = e.metrics as { loss: { nll: number; lr: number }; time: { tokensPerSecond: number }; probes?: ProbeResult['rates'] };
      if (e.step % every === 0 || e.step === steps || m.probes)
        log(`step ${e.step}/${steps}  nll ${fixed(m.loss.nll)}  lr ${m.loss.lr.toExponential(2)}  ${fixed(m.time.tokensPerSecond, 0)} tok/s  elapsed ${formatDuration((performance.now() - started) / 1000)}${m.probes ? `\n  probes: ${rates(m.probes)}` : ''}`);
    } else if (e.type === 'warning') log(`swerl pretrain: warning: ${e.message}`);
    else if (e.type === 'stopped') log(`swerl pretrain: stopped after step ${e.step}: ${e.reason}`);
  };
}

/** Runs pretraining from a config with a `pretrain` section. */
export async function pretrain(rawConfig: unknown, hooks: TrainHooks = {}): Promise<PretrainSummary> {
  const started = performance.now();
  const config: PretrainTrainConfig = resolvePretrainConfig(rawConfig, hooks.baseDir);
  const { run, pretrain: options } = config;

  // The drills and the tokenizer are checked before a model is loaded or the run directory touched.
  const tokenizer = await modelTokenizer(config.model);
  const longest = Array.from({ length: 32 }, (_, i) => drillExample(tokenizer, run.seed, i, options.drills).tokens.length).reduce((a, b) => Math.max(a, b), 0);
  const shell = await RunShell.open(config, hooks, consoleReporter(run.progress, run.steps), { started });
  const { emit } = shell;
  const start = await sftStartingPoint(config, shell);
  const { policy, metricsRows } = start;
  let state = start.state;
  let lastMetrics = metricsRows.at(-1);
  let lastProbes: ProbeResult['rates'] | undefined;
  const stoppedEarly = await shell.runSteps(policy, () => state.step + 1, async () => {
    // Drills run to ~1.5x the longest of the first 32; the model must hold them.
    assertWithinContext(Math.ceil(longest * 1.5), policy.config.hf.max_position_embeddings, 'the reading drills (config.pretrain.drills)', 'give the model a longer context, or fewer drill turns');
    await shell.openTracker(config.tracking, config, metricsRows);
    emit({ type: 'start', step: state.step, steps: run.steps, resumed: start.resumed, dir: run.dir });
    const clockStart = performance.now() - state.elapsedSeconds * 1000;
    for (let step = state.step + 1; step <= run.steps; step++) {
      if (shell.stopRequested) return true;
      const batch = stepExamples(policy.tokenizer, run.seed, step, options);
      const stepStarted = performance.now();
      const result = await sftStep(policy, batch);
      const metrics: Record<string, unknown> = {
        step,
        loss: { nll: result.nll, gradNorm: result.gradNorm, lr: result.lr, entropy: result.entropy },
        tokens: { total: result.tokens, trained: result.trainedTokens },
        drills: Math.max(0, step - options.repeats.warmupSteps) * options.sequencesPerStep,
      };
      const probeNow = step === run.steps || (options.probes.every > 0 && step % options.probes.every === 0);
      if (probeNow) {
        const probed = await runCopyProbes(policy, { count: options.probes.count, seed: options.probes.seed, drills: { ...options.drills, programs: { ...options.drills.programs, split: 'heldout' } } });
        lastProbes = probed.rates;
        metrics.probes = probed.rates;
        metrics.probeMisses = probed.misses;
      }
      const elapsedSeconds = (performance.now() - clockStart) / 1000;
      metrics.time = { stepSeconds: (performance.now() - stepStarted) / 1000, trainSeconds: result.seconds, tokensPerSecond: result.seconds > 0 ? result.tokens / result.seconds : NaN, elapsedSeconds };
      metricsRows.push(metrics);
      lastMetrics = metrics;
      // The curves on probe steps and every 50 steps: drawing them every step would cost more than the step.
      state = { step, elapsedSeconds };
      await shell.finishStep(policy, state, metricsRows, probeNow || step % 50 === 0 ? () => pretrainCharts(metricsRows) : undefined);
    }
    return false;
  });
  if (run.plots) await shell.dir.writeFile('curves.svg', renderChartsSvg(pretrainCharts(metricsRows)));
  return shell.finish<PretrainSummary>({
    dir: run.dir,
    steps: state.step,
    stopped: stoppedEarly,
    ...(lastMetrics ? { last: lastMetrics } : {}),
    evals: [],
    seconds: shell.seconds,
    ...(lastProbes ? { probes: lastProbes } : {}),
  }, 'stop requested; resume with run.resume: true');
}
