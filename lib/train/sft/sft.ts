/**
 * sft(config): supervised fine-tuning as a run. The data is loaded and checked first (before a
 * model is loaded or a run directory written), then steps of token-mean NLL (core.ts) with
 * everything a training run has: metrics.jsonl rows, TensorBoard / W&B, curves.svg,
 * checkpoints in the run directory's layout, resume from the last checkpoint with the same
 * order of examples, a clean stop on the signal (Ctrl-C under the CLI), and greedy eval on the
 * config's tasks every eval.every steps when it has tasks.
 */
import { createHash } from 'node:crypto';

import { assertWithinContext } from '../../model/rope-scaling.js';
import { pinBlasToOneThread } from '../../native.js';
import { evaluate } from '../collect.js';
import type { TrainConfig } from '../config.js';
import { resolveSftConfig } from './options.js';
import type { TrainerState } from '../run-dir.js';
import { RunShell, evalCurve, type TrainHooks, type TrainSummary } from '../run.js';
import { openTaskSource, type TaskSource } from '../task-source.js';
import { sftCharts } from './charts.js';
import { sftLoop } from './core.js';
import { prepareSftDataset, type SftDataSummary } from './dataset.js';
import { assertFitsVocabulary, type SftExample } from './example.js';
import { modelTokenizer } from '../configured-model.js';
import { sftStartingPoint } from './policy.js';
import { sftConsoleReporter } from './progress.js';

export interface SftSummary extends TrainSummary {
  /** What was trained on: files, examples, tokens, what maxLength dropped or cut. */
  data: SftDataSummary;
}

/** The trainer state an SFT checkpoint keeps: the step, and which data the order of examples was drawn over. */
interface SftTrainerState extends TrainerState {
  dataHash?: string;
}

/** A digest of the examples (ids and masks, in order): a resumed run checks it trains on the same data. */
function dataHash(examples: readonly SftExample[]): string {
  const hash = createHash('sha256');
  for (const e of examples) {
    hash.update(new Uint8Array(e.tokens.buffer, e.tokens.byteOffset, e.tokens.byteLength));
    hash.update(e.mask);
  }
  return hash.digest('hex').slice(0, 16);
}

/** Runs SFT from a config with an `sft` section; resolves when the steps are done or the run is stopped. */
export async function sft(rawConfig: unknown, hooks: TrainHooks = {}): Promise<SftSummary> {
  const started = performance.now();
  const config = resolveSftConfig(rawConfig, hooks.baseDir);
  const { run, sft: options } = config;

  // Every problem of the data is found before a model is loaded or the run directory touched.
  const tokenizer = await modelTokenizer(config.model);
  const { train, heldOut, summary: data, warnings } = await prepareSftDataset(options, tokenizer, config.rollout.enableThinking, run.seed);
  const hashNow = dataHash([...train, ...heldOut]);

  const shell = await RunShell.open(config, hooks, sftConsoleReporter(run.progress, run.steps, data, options.sequencesPerStep), { started });
  const { dir, emit } = shell;
  await dir.writeFile('data.json', `${JSON.stringify(data, null, 2)}\n`);
  const start = await sftStartingPoint<SftTrainerState>(config, shell);
  const { policy, metricsRows } = start;
  let state: SftTrainerState = start.state;
  const evals = evalCurve(metricsRows);
  let lastMetrics = metricsRows.at(-1);
  let source: TaskSource | undefined;

  const stoppedEarly = await shell.runSteps(policy, () => state.step + 1, async () => {
    assertFitsVocabulary([...train, ...heldOut], policy.config.native.vocabSize);
    const longest = [...train, ...heldOut].reduce((m, e) => Math.max(m, e.tokens.length), 0);
    assertWithinContext(longest, policy.config.hf.max_position_embeddings, `the longest example (config.sft.maxLength ${options.maxLength})`, 'lower sft.maxLength, or give the model a longer context (rope_scaling in its config.json)');
    await shell.openTracker(config.tracking, config, metricsRows);
    emit({ type: 'start', step: state.step, steps: run.steps, resumed: start.resumed, dir: run.dir });
    for (const message of warnings) emit({ type: 'warning', step: state.step, message });
    if (start.resumed && state.dataHash !== undefined && state.dataHash !== hashNow)
      emit({ type: 'warning', step: state.step, message: 'the data differs from the data of the checkpoint resumed: the order of examples from here on is not the interrupted run\'s' });

    // Greedy eval on the config's tasks, as train() runs it.
    const evalConfig: TrainConfig | undefined = config.tasks && config.eval.every > 0 ? { ...config, tasks: config.tasks } : undefined;
    if (evalConfig) {
      source = await openTaskSource(evalConfig.tasks, `swerl-sft-${process.pid}`);
      if (evalConfig.tasks.kind === 'swe') pinBlasToOneThread();
    }
    if (evalConfig && source && state.step === 0 && evalConfig.eval.atStart && !evals.some((e) => e.step === 0)) {
      const success = await evaluate(evalConfig, source, policy, hooks.signal);
      evals.push({ step: 0, success });
      emit({ type: 'eval', step: 0, success });
      metricsRows.push({ step: 0, eval: { success } });
      await shell.recordStart(metricsRows);
    }

    const clockStart = performance.now() - state.elapsedSeconds * 1000;
    const result = await sftLoop(policy, train, {
      sequencesPerStep: options.sequencesPerStep,
      seed: run.seed,
      steps: run.steps,
      startStep: state.step,
      heldOut,
      heldOutEvery: options.heldOutEvery,
      ...(hooks.signal ? { signal: hooks.signal } : {}),
      onStep: async (row) => {
        const metrics: Record<string, unknown> = { ...row, data: { train: data.train, heldOut: data.heldOut, dropped: data.dropped, truncated: data.truncated } };
        if (evalConfig && source && (row.step % evalConfig.eval.every === 0 || row.step === run.steps)) {
          const evalStarted = performance.now();
          const success = await evaluate(evalConfig, source, policy, hooks.signal);
          evals.push({ step: row.step, success });
          emit({ type: 'eval', step: row.step, success });
          metrics.eval = { success, seconds: (performance.now() - evalStarted) / 1000 };
        }
        const elapsedSeconds = (performance.now() - clockStart) / 1000;
        metrics.time = { ...row.time, elapsedSeconds };
        metricsRows.push(metrics);
        lastMetrics = metrics;
        state = { step: row.step, elapsedSeconds, dataHash: hashNow };
        await shell.finishStep(policy, state, metricsRows, () => sftCharts(metricsRows));
      },
    });
    return result.stopped;
  });
  return shell.finish<SftSummary>({
    dir: run.dir,
    steps: state.step,
    stopped: stoppedEarly,
    ...(lastMetrics ? { last: lastMetrics } : {}),
    evals,
    seconds: shell.seconds,
    data,
  }, 'stop requested; the unfinished step was dropped and will be redone on resume');
}
