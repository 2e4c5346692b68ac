/**
 * train(config): the DeepSWE loop. Each step: a batch of tasks x n rollouts in parallel envs
 * -> truncation policy -> advantages -> group filter -> mini-batches with token weights ->
 * policy.trainStep each -> metrics -> checkpoint. Resumable from the last checkpoint with the
 * same task order and seeds (both are pure functions of the run seed and the step), and
 * stoppable: an abort (or Ctrl-C under the CLI) ends the rollouts, closes every env, and
 * returns with what was finished written down.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

import { runRollouts, type RolloutItem, type RolloutOptions, type RolloutProgress } from '../agent/rollout.js';
import type { Trajectory } from '../agent/trajectory.js';
import type { AgentLoopOptions } from '../agent/agent-loop.js';
import type { AgentPolicy } from '../types/policy.js';
import { SwerlError } from '../errors.js';
import { keepInformativeGroups } from '../math/reward-shaping.js';
import { NativePolicy, type TrainStepResult } from '../model/native-policy.js';
import type { NativePolicyLoadOptions } from '../model/native-policy-options.js';
import { presetConfig } from '../model/model-config.js';
import { ByteTokenizer } from '../model/byte-tokenizer.js';
import { mixSeed, permutation, tasksForStep } from '../util/random.js';
import { miniBatches, shapeBatch, solveCounts, type ShapedBatch } from './batch.js';
import { resolveTrainConfig, type TrainConfig } from './config.js';
import { formatWarmup } from './format-warmup.js';
import { trainingCharts, renderChartsSvg } from './plots.js';
import { consoleReporter, type TrainEvent } from './progress.js';
import { RunDirectory, type TrainerState } from './run-dir.js';
import { learnerLogprobs, openSampler, type Sampler } from './sampler.js';
import { openTaskSource, type TaskRef, type TaskSource } from './task-source.js';

export interface TrainHooks {
  /** Progress events (the console reporter gets them too unless run.progress is 'none'). */
  onEvent?: (event: TrainEvent) => void;
  /** Stops the run cleanly: rollouts end, envs close, finished steps stay written. */
  signal?: AbortSignal;
}

export interface TrainSummary {
  dir: string;
  /** Training steps completed (across resumes). */
  steps: number;
  stopped: boolean;
  /** The metrics of the last step. */
  last?: Record<string, unknown>;
  /** Greedy success on the eval tasks, per evaluated step. */
  evals: { step: number; success: number }[];
  checkpoint?: string;
  seconds: number;
}

function mean(values: readonly number[]): number {
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN;
}

function agentOptions(config: TrainConfig, source: TaskSource, overrides: Partial<AgentLoopOptions> = {}): AgentLoopOptions {
  const r = config.rollout;
  return {
    maxTurns: r.maxTurns,
    promptBudget: r.promptBudget,
    responseBudget: r.responseBudget,
    maxTokensPerTurn: r.maxTokensPerTurn,
    temperature: r.temperature,
    topK: r.topK,
    topP: r.topP,
    trajectoryTimeoutMs: r.trajectoryTimeoutMs,
    stepTimeoutMs: r.stepTimeoutMs,
    warnTokensLeft: r.warnTokensLeft,
    budgetWarning: source.budgetWarning,
    enableThinking: r.enableThinking,
    ...overrides,
  };
}

function policyOptions(config: TrainConfig, totalSteps: number, loadOptimizerState: boolean): NativePolicyLoadOptions {
  const m = config.model;
  const o = config.optimizer;
  return {
    device: m.device,
    ...(m.computeDtype ? { computeDtype: m.computeDtype } : {}),
    seed: config.run.seed,
    initStd: m.initStd,
    microBatchTokens: m.microBatchTokens,
    maxBatchSize: m.maxBatchSize,
    activationCheckpointing: m.activationCheckpointing,
    ...(m.threads !== undefined ? { threads: m.threads } : {}),
    maxGradNorm: o.maxGradNorm,
    loadOptimizerState,
    optimizer: {
      lr: o.lr,
      betas: o.betas,
      eps: o.eps,
      weightDecay: o.weightDecay,
      schedule: { kind: o.schedule, warmupSteps: o.warmupSteps, ...(o.schedule === 'cosine' ? { totalSteps } : {}) },
    },
  };
}

/** Trains a policy; resolves with a summary when the steps are done or the run is stopped. */
export async function train(rawConfig: unknown, hooks: TrainHooks = {}): Promise<TrainSummary> {
  const config = resolveTrainConfig(rawConfig);
  const started = performance.now();
  const { run, algorithm } = config;
  const dir = new RunDirectory(run.dir);
  const report = consoleReporter(run.progress, run.steps);
  const emit = (event: TrainEvent) => {
    report(event);
    hooks.onEvent?.(event);
  };
  const stopped = () => hooks.signal?.aborted === true;

  await dir.create(config, run.resume);
  const label = `swerl-train-${process.pid}`;
  const source = await openTaskSource(config.tasks, label);
  const optimizerSteps = run.steps * algorithm.miniBatches * algorithm.epochs;

  // The policy: the last checkpoint when resuming, else fresh (then warm-up, saved as step 0).
  await dir.pruneCheckpoints(run.keepCheckpoints + 1);
  const checkpoints = run.resume ? await dir.checkpointSteps() : [];
  let state: TrainerState = { step: 0, elapsedSeconds: 0 };
  let policy: NativePolicy;
  let metricsRows: Record<string, unknown>[] = [];
  if (checkpoints.length > 0) {
    const step = checkpoints.at(-1)!;
    policy = await NativePolicy.load(dir.checkpointDir(step), policyOptions(config, optimizerSteps, true));
    const saved = await fs.readFile(path.join(dir.checkpointDir(step), 'swerl_state.json'), 'utf8');
    const extra = (JSON.parse(saved) as { extra?: { trainer?: TrainerState } }).extra?.trainer;
    state = extra ?? { step, elapsedSeconds: 0 };
    metricsRows = await dir.truncateTo(state.step);
  } else {
    await dir.truncateTo(0);
    try {
      policy = await initialPolicy(config, source, dir, optimizerSteps, emit, hooks.signal);
    } catch (error) {
      if (!(error instanceof SwerlError && error.code === 'ERR_SWERL_ABORTED' && stopped())) throw error;
      emit({ type: 'stopped', step: 0, reason: 'stop requested during the format warm-up; nothing was saved, a resumed run starts afresh' });
      const summary: TrainSummary = { dir: run.dir, steps: 0, stopped: true, evals: [], seconds: (performance.now() - started) / 1000 };
      await dir.writeSummary(summary);
      return summary;
    }
  }
  emit({ type: 'start', step: state.step, steps: run.steps, resumed: checkpoints.length > 0, dir: run.dir });

  const reference = algorithm.kl ? await NativePolicy.load(dir.checkpointDir(0), policyOptions(config, optimizerSteps, false)) : undefined;
  const evals: { step: number; success: number }[] = metricsRows.flatMap((r) => {
    const e = (r.eval as { success?: number } | undefined)?.success;
    return typeof e === 'number' ? [{ step: r.step as number, success: e }] : [];
  });
  const clockStart = performance.now() - state.elapsedSeconds * 1000;
  let lastMetrics = metricsRows.at(-1);
  let stoppedEarly = false;
  let sampler: Sampler | undefined;
  const learningStall = new LearningStallDetector();

  try {
    sampler = await openSampler(config, policy);
    if (state.step === 0 && config.eval.every > 0 && !evals.some((e) => e.step === 0)) {
      const success = await evaluate(config, source, sampler.policy, hooks.signal);
      evals.push({ step: 0, success });
      emit({ type: 'eval', step: 0, success });
      metricsRows.push({ step: 0, eval: { success } });
      await dir.writeMetrics(metricsRows);
    }
    while (state.step < run.steps) {
      if (stopped()) {
        stoppedEarly = true;
        break;
      }
      const step = state.step + 1;
      const stepStarted = performance.now();
      const collected = await collect(config, source, sampler, step, hooks.signal, (progress) => emit({ type: 'rollouts', step, progress }));
      const { rounds } = collected;
      let trajectories = collected.trajectories;
      const rolloutSeconds = (performance.now() - stepStarted) / 1000;

      const trainStarted = performance.now();
      // Sampled elsewhere: the learner's own logprobs of the sampled tokens, and the gap.
      const recomputed = sampler.remote
        ? await learnerLogprobs(policy, trajectories, config.rollout.temperature, config.sampler.oldLogprobs === 'learner')
        : undefined;
      if (recomputed) trajectories = recomputed.trajectories;
      const broken = trajectories.filter((t) => t.logprobs.some((l, i) => t.mask[i] === 1 && !Number.isFinite(l))).length;
      if (broken > 0) throw await numericStop(new SwerlError('ERR_SWERL_NUMERIC', `${broken} of ${trajectories.length} rollouts were sampled with non-finite logprobs (the policy's logits hold NaN or Inf)`), step, dir);
      const shaped = shapeBatch(trajectories, algorithm);
      const results = await learn(config, policy, reference, trajectories, shaped, step).catch(async (error: unknown) => {
        throw await numericStop(error, step, dir);
      });
      const syncSeconds = await sampler.sync();
      const trainSeconds = (performance.now() - trainStarted) / 1000;

      const metrics = stepMetrics(step, trajectories, shaped, results, rounds, { rolloutSeconds, trainSeconds });
      if (recomputed) metrics.sampler = { gapMean: recomputed.gap.mean, gapMax: recomputed.gap.max, tokens: recomputed.gap.tokens, syncSeconds, weightVersion: sampler.version() };
      if (config.eval.every > 0 && (step % config.eval.every === 0 || step === run.steps)) {
        const evalStarted = performance.now();
        const success = await evaluate(config, source, sampler.policy, hooks.signal);
        evals.push({ step, success });
        emit({ type: 'eval', step, success });
        metrics.eval = { success, seconds: (performance.now() - evalStarted) / 1000 };
      }
      (metrics.time as Record<string, number>).stepSeconds = (performance.now() - stepStarted) / 1000;
      (metrics.time as Record<string, number>).elapsedSeconds = (performance.now() - clockStart) / 1000;
      const stall = learningStall.observe(metrics, policy.config.native.vocabSize);
      if (stall) {
        metrics.warning = stall;
        emit({ type: 'warning', step, message: stall });
      }
      metricsRows.push(metrics);
      lastMetrics = metrics;

      if (run.saveTrajectories) await dir.writeTrajectories(step, trajectories, (_, i) => ({ shapedReward: shaped.rewards[i], advantage: shaped.advantages[i], filtered: shaped.filtered[i] === 1, kept: shaped.kept[i] === 1 }));
      await dir.writeMetrics(metricsRows);
      if (run.plots) await dir.writeFile('curves.svg', renderChartsSvg(trainingCharts(metricsRows)));
      state = { step, elapsedSeconds: (performance.now() - clockStart) / 1000 };
      emit({ type: 'step', step, metrics });
      if (step % run.checkpointEvery === 0 || step === run.steps) {
        await policy.save(dir.checkpointDir(step), { extra: { trainer: state } });
        await dir.pruneCheckpoints(run.keepCheckpoints);
        emit({ type: 'checkpoint', step, dir: dir.checkpointDir(step) });
      }
    }
  } catch (error) {
    if (!(error instanceof SwerlError && error.code === 'ERR_SWERL_ABORTED' && stopped())) throw error;
    stoppedEarly = true;
  } finally {
    await sampler?.close();
    policy.dispose();
    reference?.dispose();
  }
  if (stoppedEarly) emit({ type: 'stopped', step: state.step, reason: 'stop requested; the unfinished step was dropped and will be redone on resume' });
  else emit({ type: 'done', step: state.step });

  const checkpointsNow = await dir.checkpointSteps();
  const summary: TrainSummary = {
    dir: run.dir,
    steps: state.step,
    stopped: stoppedEarly,
    ...(lastMetrics ? { last: lastMetrics } : {}),
    evals,
    ...(checkpointsNow.length ? { checkpoint: dir.checkpointDir(checkpointsNow.at(-1)!) } : {}),
    seconds: (performance.now() - started) / 1000,
  };
  await dir.writeSummary(summary);
  return summary;
}

/** A fresh policy: from a preset or a model directory, warmed up when asked, saved as step 0. */
async function initialPolicy(config: TrainConfig, source: TaskSource, dir: RunDirectory, optimizerSteps: number, emit: (e: TrainEvent) => void, signal: AbortSignal | undefined): Promise<NativePolicy> {
  const options = policyOptions(config, optimizerSteps, false);
  const fresh = config.model.preset
    ? await NativePolicy.load(presetConfig(config.model.preset, new ByteTokenizer().vocabSize), options)
    : await NativePolicy.load(config.model.path!, options);
  const tasks = config.tasks;
  if (tasks.kind === 'frozenlake' && tasks.formatWarmupSteps > 0) {
    await formatWarmup(fresh, source, {
      ...(signal ? { signal } : {}),
      steps: tasks.formatWarmupSteps,
      lr: tasks.formatWarmupLr,
      episodes: 16,
      seed: config.run.seed,
      agent: agentOptions(config, source),
      onStep: (step, nll) => emit({ type: 'warmup', step, steps: tasks.formatWarmupSteps, nll }),
    }).catch((error: unknown) => {
      fresh.dispose();
      throw error;
    });
  }
  // Step 0 is the starting point of RL: the reference of a KL term, and a resume point. The
  // warm-up's optimizer state is not carried into RL.
  await fresh.save(dir.checkpointDir(0), { optimizer: false, extra: { trainer: { step: 0, elapsedSeconds: 0 } } });
  fresh.dispose();
  return NativePolicy.load(dir.checkpointDir(0), options);
}

/** The rollout engine's bounds from the config, around the agent loop's options. */
function rolloutOptions(config: TrainConfig, agent: AgentLoopOptions): RolloutOptions {
  const { concurrency, generationConcurrency, retries } = config.rollout;
  return { concurrency, generationConcurrency, retries, agent };
}

function rolloutItems(config: TrainConfig, source: TaskSource, refs: readonly TaskRef[], step: number, round: number, samples: number): RolloutItem[] {
  return refs.flatMap((ref, group) =>
    Array.from({ length: samples }, (_, sample) => ({
      taskId: ref.id,
      ...(ref.task ? { task: ref.task } : {}),
      group,
      sample,
      seed: mixSeed(config.run.seed, step, round, group, sample) * 1024,
      makeEnv: () => source.makeEnv(ref),
    })),
  );
}

/**
 * The step's trajectories. With DAPO's dynamic sampling, groups whose rewards are all equal are
 * set aside and more tasks are sampled (next in the task order) until the batch has
 * tasksPerStep informative groups or resampleRounds run out.
 */
async function collect(
  config: TrainConfig,
  source: TaskSource,
  sampler: Sampler,
  step: number,
  signal: AbortSignal | undefined,
  onProgress: (progress: RolloutProgress) => void,
): Promise<{ trajectories: Trajectory[]; rounds: number }> {
  const { rollout, algorithm, run } = config;
  const options = rolloutOptions(config, agentOptions(config, source));
  const n = source.train.length;
  const refsFor = (round: number) => tasksForStep(n, rollout.tasksPerStep, mixSeed(run.seed, round), step - 1).map((i) => source.train[i]!);
  const dynamic = algorithm.groupFilter === 'informative' && algorithm.resampleRounds > 0;
  let kept: Trajectory[] = [];
  let rounds = 0;
  for (let round = 0; round <= (dynamic ? algorithm.resampleRounds : 0); round++) {
    rounds++;
    const items = rolloutItems(config, source, refsFor(round), step, round, rollout.samplesPerTask);
    const batch = await runRollouts(items, sampler.policy, options, { signal, weightVersion: sampler.version(), onProgress });
    if (!dynamic) return { trajectories: batch, rounds };
    const offset = kept.length === 0 ? 0 : Math.max(...kept.map((t) => t.group)) + 1;
    const informative = keepInformativeGroups(Float32Array.from(batch, (t) => t.reward), Int32Array.from(batch, (t) => t.group));
    kept = [...kept, ...batch.filter((_, i) => informative[i] === 1).map((t) => ({ ...t, group: t.group + offset }))];
    if (new Set(kept.map((t) => t.group)).size >= rollout.tasksPerStep) break;
    if (round === algorithm.resampleRounds && kept.length === 0) kept = batch;  // nothing informative: train on nothing useful rather than fail
  }
  const groups = [...new Set(kept.map((t) => t.group))].slice(0, rollout.tasksPerStep);
  const renumber = new Map(groups.map((g, i) => [g, i]));
  return { trajectories: kept.filter((t) => renumber.has(t.group)).map((t) => ({ ...t, group: renumber.get(t.group)! })), rounds };
}

/** The optimizer steps of one training step: mini-batches in a seeded order, epochs times. */
async function learn(
  config: TrainConfig,
  policy: NativePolicy,
  reference: NativePolicy | undefined,
  trajectories: Trajectory[],
  shaped: ShapedBatch,
  step: number,
): Promise<TrainStepResult[]> {
  const { algorithm, rollout, run } = config;
  const results: TrainStepResult[] = [];
  const loss = {
    clipLow: algorithm.clipLow,
    clipHigh: algorithm.clipHigh,
    dualClip: algorithm.dualClip,
    temperature: rollout.temperature,
    entropyCoef: algorithm.entropyCoef,
    ...(algorithm.kl ? { kl: algorithm.kl } : {}),
  };
  for (let epoch = 0; epoch < algorithm.epochs; epoch++) {
    const order = permutation(trajectories.length, mixSeed(run.seed, step, epoch, 0xba7c4));
    for (const batch of miniBatches(trajectories, shaped, algorithm, order, algorithm.miniBatches)) {
      if (reference) {
        const refLogprobs = await reference.logprobs(batch.sequences.map((s) => s.tokens), { temperature: rollout.temperature });
        batch.sequences.forEach((s, i) => (s.refLogprobs = refLogprobs[i]));
      }
      const result = await policy.trainStep({ sequences: batch.sequences, loss });
      if (!Number.isFinite(result.loss)) throw new SwerlError('ERR_SWERL_NUMERIC', `the loss is ${result.loss}`);
      results.push(result);
    }
  }
  return results;
}

/**
 * A non-finite loss or gradient ends the run: the step is not saved, so the last checkpoint is
 * the last good state, and the error says where it is and what to change before resuming.
 */
async function numericStop(error: unknown, step: number, dir: RunDirectory): Promise<unknown> {
  if (!(error instanceof SwerlError) || error.code !== 'ERR_SWERL_NUMERIC') return error;
  const last = (await dir.checkpointSteps()).at(-1);
  const where = last === undefined ? 'no checkpoint was saved yet' : `the last good checkpoint is ${dir.checkpointDir(last)} (step ${last})`;
  return new SwerlError(
    'ERR_SWERL_NUMERIC',
    `step ${step}: ${error.message}; the run stopped and this step was not saved; ${where}. ` +
      'Lower optimizer.lr or algorithm.entropyCoef, keep optimizer.maxGradNorm on, or use computeDtype bfloat16 instead of float16; then resume with run.resume: true',
  );
}

/**
 * Warns when the policy is not learning: entropy at ln V (uniform over the vocabulary) and a
 * zero gradient for STALL_STEPS steps in a row, what an exploded initialization or learning
 * rate leaves behind.
 */
const STALL_STEPS = 3;
class LearningStallDetector {
  private run = 0;

  observe(metrics: Record<string, unknown>, vocabSize: number): string | null {
    const loss = metrics.loss as { entropy: number; gradNorm: number };
    const uniform = loss.entropy >= 0.98 * Math.log(vocabSize);
    this.run = uniform && loss.gradNorm < 1e-8 ? this.run + 1 : 0;
    if (this.run !== STALL_STEPS) return null;
    return `not learning: for ${STALL_STEPS} steps the entropy has been ln V (${Math.log(vocabSize).toFixed(2)}, a uniform policy) and the gradient norm 0; ` +
      'the weights are likely saturated: lower optimizer.lr or model.initStd and start again';
  }
}

/** Greedy success on the eval tasks (each run eval.samples times). */
async function evaluate(config: TrainConfig, source: TaskSource, policy: AgentPolicy, signal: AbortSignal | undefined): Promise<number> {
  const agent = agentOptions(config, source, { temperature: config.eval.temperature });
  const items = rolloutItems(config, source, source.evaluation, 0, 0xe7a1, config.eval.samples);
  const trajectories = await runRollouts(items, policy, rolloutOptions(config, agent), { ...(signal ? { signal } : {}) });
  return mean(trajectories.map((t) => (t.reward > 0 ? 1 : 0)));
}

function stepMetrics(
  step: number,
  trajectories: readonly Trajectory[],
  shaped: ShapedBatch,
  results: readonly TrainStepResult[],
  rounds: number,
  time: { rolloutSeconds: number; trainSeconds: number },
): Record<string, unknown> {
  const rewards = trajectories.map((t) => t.reward);
  const solve = solveCounts(trajectories);
  const terminations: Record<string, number> = {};
  for (const t of trajectories) terminations[t.termination] = (terminations[t.termination] ?? 0) + 1;
  const responses = trajectories.map((t) => t.responseTokens);
  const byTokens = (f: (r: TrainStepResult) => number) => {
    const total = results.reduce((s, r) => s + r.lossTokens, 0);
    return total > 0 ? results.reduce((s, r) => s + f(r) * r.lossTokens, 0) / total : NaN;
  };
  const generateMs = trajectories.reduce((s, t) => s + t.timings.generateMs, 0);
  const envMs = trajectories.reduce((s, t) => s + t.timings.envMs + t.timings.rewardMs, 0);
  return {
    step,
    trajectories: trajectories.length,
    reward: { mean: mean(rewards), shapedMean: mean(Array.from(shaped.rewards)), std: Math.sqrt(mean(rewards.map((r) => (r - mean(rewards)) ** 2))) },
    groups: { solveAll: solve.all, solveNone: solve.none, solvePartial: solve.partial, rounds },
    filtered: shaped.filtered.reduce((a, b) => a + b, 0),
    kept: shaped.kept.reduce((a, b) => a + b, 0),
    terminations,
    // Trajectories whose test-infrastructure changes grading reverted: a policy learning to game its reward shows here first.
    rewardHackAttempts: trajectories.filter((t) => t.reverted?.length).length,
    loss: {
      value: results.length ? results.reduce((s, r) => s + r.loss, 0) / results.length : NaN,
      entropy: byTokens((r) => r.entropy),
      approxKl: byTokens((r) => r.approxKl),
      clipFracLow: byTokens((r) => r.clipFracLow),
      clipFracHigh: byTokens((r) => r.clipFracHigh),
      ratioMax: results.length ? Math.max(...results.map((r) => r.ratioMax)) : NaN,
      gradNorm: results.length ? Math.max(...results.map((r) => r.gradNorm)) : NaN,
      lossTokens: results.reduce((s, r) => s + r.lossTokens, 0),
      optimizerSteps: results.length,
      lr: results.at(-1)?.lr ?? NaN,
    },
    length: { responseMean: mean(responses), responseMax: Math.max(0, ...responses), promptMean: mean(trajectories.map((t) => t.promptTokens)) },
    turns: { mean: mean(trajectories.map((t) => t.turns.length)), max: Math.max(0, ...trajectories.map((t) => t.turns.length)) },
    retries: trajectories.reduce((s, t) => s + t.attempts - 1, 0),
    time: {
      rolloutSeconds: time.rolloutSeconds,
      trainSeconds: time.trainSeconds,
      generateSecondsSum: generateMs / 1000,
      envSecondsSum: envMs / 1000,
      tokensPerSecondTrain: results.length ? results.reduce((s, r) => s + r.tokens, 0) / time.trainSeconds : NaN,
    },
  };
}
