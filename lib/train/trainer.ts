/**
 * train(config): the DeepSWE loop. Each step: a batch of tasks x n rollouts in parallel envs
 * -> truncation policy -> advantages -> group filter -> mini-batches with token weights ->
 * policy.trainStep each -> metrics -> checkpoint. Resumable from the last checkpoint with the
 * same task order and seeds (both are pure functions of the run seed and the step), and
 * stoppable: an abort (or Ctrl-C under the CLI) ends the rollouts, closes every env, and
 * returns with what was finished written down.
 */
import { SwerlError } from '../errors.js';
import { resolveLossOptions } from '../math/policy-loss.js';
import { pinBlasToOneThread } from '../native.js';
import { renderChartsSvg, trainingCharts } from './plots.js';
import { shapeBatch } from './batch.js';
import { optimizerStepsPerRun, warmupWarning } from './algorithms.js';
import { AsyncRollouts, VersionClock, type Batch } from './async-rollouts.js';
import { collect, evaluate, replay, type Ranks } from './collect.js';
import { ProcessGroupChannel } from '../model/process-group.js';
import { isPretrainConfig, isSftConfig, resolveTrainConfig, type TrainConfig } from './config.js';
import { pretrain } from './pretrain/pretrain.js';
import { learn } from './learn.js';
import { rejectionLearn } from './rft/learn.js';
import { consoleReporter, type TrainEvent } from './progress.js';
import { identicalWeights, parallelFromEnv, type ParallelRun } from './parallel.js';
import { followerPolicy, numericStop, referencePolicy, saveCheckpoint, startingPoint, type StartingPoint } from './resume.js';
import { RunDirectory } from './run-dir.js';
import { learnerLogprobs, openSampler, type Sampler } from './sampler.js';
import { LearningStallDetector, evalCurve, prefixCacheDelta, stepMetrics, stepWarnings } from './step-metrics.js';
import { sft } from './sft/sft.js';
import { openTaskSource, type TaskSource } from './task-source.js';
import type { Curriculum } from './curriculum.js';
import type { AgentPolicy } from '../types/policy.js';
import { openTracker, type Tracker } from './tracking/index.js';

export interface TrainHooks {
  /** Progress events (the console reporter gets them too unless run.progress is 'none'). */
  onEvent?: (event: TrainEvent) => void;
  /** Stops the run cleanly: rollouts end, envs close, finished steps stay written. */
  signal?: AbortSignal;
  /** Where the config's relative input paths are taken from (loadTrainConfig's baseDir; default the working directory). */
  baseDir?: string;
  /**
   * Data parallel: this process's rank in the group (lib/train/parallel.ts). Default: from
   * torchrun's environment variables (WORLD_SIZE > 1); null: one process whatever they say.
   */
  parallel?: ParallelRun | null;
}

export interface TrainSummary {
  dir: string;
  /** Training steps completed (across resumes). */
  steps: number;
  /**
   * Episodes played by those steps (across resumes): with dynamic sampling more than the
   * trajectories trained on. What two runs must match to compare them at equal cost. RL runs
   * only (SFT and pretraining play none).
   */
  episodes?: number;
  stopped: boolean;
  /** The metrics of the last step. */
  last?: Record<string, unknown>;
  /** Greedy success on the eval tasks, per evaluated step. */
  evals: { step: number; success: number }[];
  checkpoint?: string;
  /** Data parallel: the group's size, and whether the ranks' weights were bit-identical at the end. */
  parallel?: { worldSize: number; identicalWeights?: boolean };
  /** The curriculum tier the run ended in (a later run's tasks.curriculum.startTier). */
  curriculumTier?: string;
  seconds: number;
}

/**
 * Trains a policy; resolves with a summary when the steps are done or the run is stopped. A
 * config with an `sft` section is supervised fine-tuning (lib/train/sft): no rollouts.
 */
export async function train(rawConfig: unknown, hooks: TrainHooks = {}): Promise<TrainSummary> {
  if (isSftConfig(rawConfig)) return sft(rawConfig, hooks);
  if (isPretrainConfig(rawConfig)) return pretrain(rawConfig, hooks);
  const resolved = resolveTrainConfig(rawConfig, hooks.baseDir);
  const parallel = hooks.parallel === undefined ? parallelFromEnv() : hooks.parallel ?? undefined;
  // A CUDA rank trains on its own device, LOCAL_RANK's (torchrun's convention); its group is NCCL's.
  const config = parallel && resolved.model.device === 'cuda' ? { ...resolved, model: { ...resolved.model, device: `cuda:${parallel.localRank}` } } : resolved;
  // Rank 0 leads: it alone writes the run directory; the others follow its weights and steps.
  const lead = !parallel || parallel.rank === 0;
  const started = performance.now();
  const { run, algorithm } = config;
  const dir = new RunDirectory(run.dir);
  // Rank 0 speaks for the group; a follower's errors still reach its stderr.
  const report = lead ? consoleReporter(run.progress, run.steps) : () => undefined;
  const emit = (event: TrainEvent) => {
    report(event);
    hooks.onEvent?.(event);
  };
  const stopped = () => hooks.signal?.aborted === true;

  if (lead) await dir.create(config, run.resume);
  const label = `swerl-train-${process.pid}`;
  // Followers open the tasks once rank 0 has (after the group forms).
  let source = lead ? await openTaskSource(config.tasks, label) : undefined;
  if (config.tasks.kind === 'swe') pinBlasToOneThread();
  const optimizerSteps = optimizerStepsPerRun(algorithm, run.steps, config.rollout.tasksPerStep * config.rollout.samplesPerTask);
  const warmup = warmupWarning(algorithm, config.optimizer.warmupSteps, optimizerSteps);
  if (warmup && lead) emit({ type: 'warning', step: 0, message: warmup });

  // The policy: the last checkpoint when resuming, else fresh (then warm-up, saved as step 0).
  // A follower loads the configured model; joining the group gives it rank 0's weights.
  let start: StartingPoint;
  try {
    start = lead
      ? await startingPoint(config, source!, dir, optimizerSteps, emit, hooks.signal)
      : { policy: await followerPolicy(config, optimizerSteps), state: { step: 0, elapsedSeconds: 0 }, metricsRows: [], resumed: false };
    if (parallel) {
      await joinRun(start, parallel);
      source ??= await openTaskSource(config.tasks, label, { reuseGenerated: true });
    }
  } catch (error) {
    if (!(error instanceof SwerlError && error.code === 'ERR_SWERL_ABORTED' && stopped())) throw error;
    emit({ type: 'stopped', step: 0, reason: 'stop requested during the format warm-up; nothing was saved, a resumed run starts afresh' });
    const summary: TrainSummary = { dir: run.dir, steps: 0, episodes: 0, stopped: true, evals: [], seconds: (performance.now() - started) / 1000 };
    if (lead) await dir.writeSummary(summary);
    return summary;
  }
  const { policy, metricsRows } = start;
  let { state } = start;
  const ranks: Ranks | undefined = parallel ? { parallel, reducer: policy } : undefined;
  const tasks = source!;
  if (tasks.curriculum && state.curriculumTier !== undefined) tasks.curriculum.resume(state.curriculumTier);
  emit({ type: 'start', step: state.step, steps: run.steps, resumed: start.resumed, dir: run.dir });

  // Every rank reads the KL reference from rank 0's run directory (its step-0 checkpoint).
  const reference = await referencePolicy(config, dir, optimizerSteps).catch((error: unknown) => {
    if (lead || !(error instanceof SwerlError)) throw error;
    throw new SwerlError(error.code, `${error.message}; rank ${parallel!.rank} reads the KL reference from rank 0's run directory, so across nodes run.dir must be on a shared filesystem`);
  });
  // The loss's options, checked and resolved once for the run (the config already bounded them).
  const loss = resolveLossOptions({
    clipLow: algorithm.clipLow,
    clipHigh: algorithm.clipHigh,
    dualClip: algorithm.dualClip,
    temperature: config.rollout.temperature,
    entropyCoef: algorithm.entropyCoef,
    ...(algorithm.kl ? { kl: algorithm.kl } : {}),
  }, 'config.algorithm', config.model.device);
  const tracker = await (lead ? openTracker(run.dir, config.tracking, { config, rows: metricsRows }) : Promise.resolve(silentTracker())).catch((error: unknown) => {
    policy.dispose();
    reference?.dispose();
    throw error;
  });
  const evals = evalCurve(metricsRows);
  const clockStart = performance.now() - state.elapsedSeconds * 1000;
  let lastMetrics = metricsRows.at(-1);
  let stoppedEarly = false;
  let sampler: Sampler | undefined;
  let pipeline: AsyncRollouts | undefined;
  let rolloutChannel: ProcessGroupChannel | undefined;
  let identical: boolean | undefined;
  const learningStall = new LearningStallDetector();

  try {
    sampler = await openSampler(config, policy, parallel);
    if (state.step === 0 && config.eval.every > 0 && config.eval.atStart && !evals.some((e) => e.step === 0)) {
      const success = await evaluate(config, tasks, sampler.policy, hooks.signal, ranks);
      evals.push({ step: 0, success });
      emit({ type: 'eval', step: 0, success });
      metricsRows.push({ step: 0, eval: { success } });
      if (lead) await dir.writeMetrics(metricsRows);
      await tracker.log(0, metricsRows.at(-1)!);
    }
    // A fresh run placed in its curriculum before the first step (curriculum.placement).
    let placement = state.step === 0 && tasks.curriculum?.config.placement ? await placeInCurriculum(config, tasks, tasks.curriculum, sampler.policy, hooks.signal, ranks, emit) : undefined;
    // Async: a producer collects the next steps' batches while this loop trains.
    const clock = new VersionClock();
    clock.mark(state.step, sampler.version());
    const collectStep = (step: number, signal: AbortSignal | undefined, on = ranks): Promise<Batch> =>
      collect(config, tasks, sampler!, step, signal, (progress) => emit({ type: 'rollouts', step, progress }), on);
    if (config.rollout.mode === 'async') {
      const s = sampler;
      // In a group the producer gathers on a channel of its own (the next port), so its gathers
      // and the learner's all-reduces keep one order each on every rank.
      if (parallel) rolloutChannel = await ProcessGroupChannel.join({ rank: parallel.rank, worldSize: parallel.worldSize, masterAddr: parallel.masterAddr, masterPort: parallel.masterPort + 1, timeoutMs: parallel.timeoutMs });
      const producerRanks = parallel ? { parallel, reducer: rolloutChannel! } : undefined;
      pipeline = new AsyncRollouts({
        maxStaleness: config.rollout.maxStaleness,
        version: state.step,
        lastStep: run.steps,
        clock,
        collect: (step, signal) => collectStep(step, signal, producerRanks),
        // Replays happen in the learner's turn (take()): on the learner's channel.
        replay: (step, stale, signal) => replay(config, tasks, s, step, stale, signal, ranks),
        ...(hooks.signal ? { signal: hooks.signal } : {}),
      });
    }
    while (state.step < run.steps) {
      // Every rank stops at the same step: a stop anywhere is everyone's.
      if (parallel ? (await policy.allReduce([stopped() ? 1 : 0]))[0]! > 0 : stopped()) {
        stoppedEarly = true;
        break;
      }
      const step = state.step + 1;
      const stepStarted = performance.now();
      const prefixCacheBefore = policy.prefixCache;
      const taken = pipeline ? await pipeline.take(step) : undefined;
      const collected = taken ?? (await collectStep(step, hooks.signal));
      let trajectories = collected.trajectories;
      const rolloutSeconds = (performance.now() - stepStarted) / 1000;

      const trainStarted = performance.now();
      // Sampled elsewhere: the learner's own logprobs of the sampled tokens, and the gap.
      const recomputed = sampler.remote
        ? await learnerLogprobs(policy, trajectories, config.rollout.temperature, config.sampler.oldLogprobs === 'learner')
        : undefined;
      if (recomputed) trajectories = recomputed.trajectories;
      const broken = trajectories.filter((t) => t.logprobs.some((l, i) => t.mask[i] === 1 && !Number.isFinite(l))).length;
      if (broken > 0) throw await numericStop(new SwerlError('ERR_SWERL_NUMERIC', `${broken} of ${trajectories.length} rollouts were sampled with non-finite logprobs (the policy's logits hold NaN or Inf)`), step, dir, undefined, lead);
      const shaped = shapeBatch(trajectories, algorithm);
      // Rejection fine-tuning (the rft preset) or the policy-gradient loss.
      const { results, round } = await (algorithm.rejection
        ? rejectionLearn(policy, trajectories, algorithm.rejection, run.seed, step, parallel)
        : learn(config, policy, reference, trajectories, shaped, step, loss, parallel).then((learned) => ({ results: learned, round: undefined }))
      ).catch(async (error: unknown) => {
        throw await numericStop(error, step, dir, undefined, lead);
      });
      const syncSeconds = await sampler.sync();
      const trainSeconds = (performance.now() - trainStarted) / 1000;
      // The weights of version `step` are in place: the producer may go on.
      clock.mark(step, sampler.version());
      pipeline?.advance(step);

      const metrics = stepMetrics(step, trajectories, shaped, results, collected, { rolloutSeconds, trainSeconds, ...(taken ? { collectSeconds: taken.collectSeconds } : {}) });
      if (!sampler.remote) metrics.prefixCache = prefixCacheDelta(policy.prefixCache, prefixCacheBefore);
      if (round) metrics.rejection = round;
      if (taken) metrics.async = { maxStaleness: config.rollout.maxStaleness, staleness: taken.staleness, dropped: taken.dropped, waitSeconds: taken.waitSeconds, collectSeconds: taken.collectSeconds };
      if (recomputed) metrics.sampler = { gapMean: recomputed.gap.mean, gapMax: recomputed.gap.max, tokens: recomputed.gap.tokens, syncSeconds, weightVersion: sampler.version() };
      if (tasks.curriculum) {
        metrics.curriculum = { ...(placement ? { placement } : {}), ...(await curriculumStep(config, tasks, tasks.curriculum, sampler.policy, step, hooks.signal, ranks, emit)) };
        placement = undefined;
      }
      if (config.eval.every > 0 && (step % config.eval.every === 0 || step === run.steps)) {
        const evalStarted = performance.now();
        const success = await evaluate(config, tasks, sampler.policy, hooks.signal, ranks);
        evals.push({ step, success });
        emit({ type: 'eval', step, success });
        metrics.eval = { success, seconds: (performance.now() - evalStarted) / 1000 };
      }
      (metrics.time as Record<string, number>).stepSeconds = (performance.now() - stepStarted) / 1000;
      (metrics.time as Record<string, number>).elapsedSeconds = (performance.now() - clockStart) / 1000;
      const stall = learningStall.observe(metrics, policy.config.native.vocabSize);
      const warnings = [...stepWarnings(trajectories, metrics, config.rollout.promptBudget), ...(stall ? [stall] : [])];
      if (parallel) metrics.parallel = { worldSize: parallel.worldSize };
      if (warnings.length) metrics.warnings = warnings;
      for (const message of warnings) emit({ type: 'warning', step, message });
      metricsRows.push(metrics);
      lastMetrics = metrics;

      if (lead) {
        if (run.saveTrajectories) await dir.writeTrajectories(step, trajectories, (_, i) => ({ shapedReward: shaped.rewards[i], advantage: shaped.advantages[i], filtered: shaped.filtered[i] === 1, kept: shaped.kept[i] === 1 }));
        await dir.writeMetrics(metricsRows);
        await tracker.log(step, metrics);
        if (run.plots) await dir.writeFile('curves.svg', renderChartsSvg(trainingCharts(metricsRows)));
      }
      state = { step, elapsedSeconds: (performance.now() - clockStart) / 1000, ...(tasks.curriculum ? { curriculumTier: tasks.curriculum.tier } : {}) };
      emit({ type: 'step', step, metrics });
      if (lead && (step % run.checkpointEvery === 0 || step === run.steps)) {
        emit({ type: 'checkpoint', step, dir: await saveCheckpoint(policy, dir, state, run.keepCheckpoints) });
      }
    }
    if (parallel) {
      // A cheap proof that the ranks never drifted apart (their steps are one step).
      identical = await identicalWeights(policy, parallel);
      if (!identical) emit({ type: 'warning', step: state.step, message: 'the ranks\' weights differ at the end of the run: data parallelism went wrong (report it, with the config)' });
    }
  } catch (error) {
    if (!(error instanceof SwerlError && error.code === 'ERR_SWERL_ABORTED' && stopped())) throw error;
    stoppedEarly = true;
  } finally {
    // Batches in flight end (their envs closed) before the policy they sample goes.
    await pipeline?.close();
    rolloutChannel?.close();
    await tracker.close();
    await sampler?.close();
    policy.dispose();
    reference?.dispose();
  }
  if (stoppedEarly) emit({ type: 'stopped', step: state.step, reason: 'stop requested; the unfinished step was dropped and will be redone on resume' });
  else emit({ type: 'done', step: state.step });

  const checkpointsNow = lead ? await dir.checkpointSteps() : [];
  const summary: TrainSummary = {
    dir: run.dir,
    steps: state.step,
    // A row of an older run has no episodes: its trajectories were what it played (no dynamic sampling count).
    episodes: metricsRows.reduce((sum, row) => sum + (typeof row.episodes === 'number' ? row.episodes : typeof row.trajectories === 'number' ? row.trajectories : 0), 0),
    stopped: stoppedEarly,
    ...(lastMetrics ? { last: lastMetrics } : {}),
    evals,
    ...(checkpointsNow.length ? { checkpoint: dir.checkpointDir(checkpointsNow.at(-1)!) } : {}),
    ...(parallel ? { parallel: { worldSize: parallel.worldSize, ...(identical !== undefined ? { identicalWeights: identical } : {}) } } : {}),
    ...(tasks.curriculum ? { curriculumTier: tasks.curriculum.current.name } : {}),
    seconds: (performance.now() - started) / 1000,
  };
  if (lead) await dir.writeSummary(summary);
  return summary;
}

/** Joins the group: rank 0's weights and AdamW state to every rank, then its trainer state. */
async function joinRun(start: StartingPoint, parallel: ParallelRun): Promise<void> {
  await start.policy.joinGroup({ rank: parallel.rank, worldSize: parallel.worldSize, masterAddr: parallel.masterAddr, masterPort: parallel.masterPort, timeoutMs: parallel.timeoutMs });
  const lead = parallel.rank === 0;
  // -1: no curriculum tier saved.
  const [step, elapsedSeconds, tier] = await start.policy.allReduce(lead ? [start.state.step, start.state.elapsedSeconds, start.state.curriculumTier ?? -1] : [0, 0, 0]);
  start.state = { step: step!, elapsedSeconds: elapsedSeconds!, ...(tier! >= 0 ? { curriculumTier: tier! } : {}) };
}

/**
 * Plays the current tier's dev slice greedily and advances when it passes, saying so on the
 * console. Step 0 is a fresh run's placement, before its first step.
 */
async function checkDevSlice(config: TrainConfig, tasks: TaskSource, curriculum: Curriculum, policy: AgentPolicy, step: number, signal: AbortSignal | undefined, ranks: Ranks | undefined, emit: (e: TrainEvent) => void): Promise<{ tier: string; dev: number; advanced: boolean }> {
  const tier = curriculum.current.name;
  const dev = await evaluate(config, tasks, policy, signal, ranks, curriculum.current.dev);
  const advanced = curriculum.observe(dev);
  if (advanced) {
    const [what, when] = step === 0 ? ['curriculum placement', 'the first step'] : ['curriculum', 'the next step'];
    emit({ type: 'note', step, message: `${what}: the dev slice of tier "${tier}" resolved ${dev.toFixed(3)} (>= ${curriculum.config.advanceAt}): tier "${curriculum.current.name}" from ${when}` });
  }
  return { tier, dev, advanced };
}

/**
 * The curriculum's part of a step's metrics: the tier trained on, and on a check step the dev
 * slice's greedy resolve rate and whether it advanced.
 */
async function curriculumStep(config: TrainConfig, tasks: TaskSource, curriculum: Curriculum, policy: AgentPolicy, step: number, signal: AbortSignal | undefined, ranks: Ranks | undefined, emit: (e: TrainEvent) => void): Promise<Record<string, unknown>> {
  const row: Record<string, unknown> = { tier: curriculum.tier, name: curriculum.current.name };
  if (!curriculum.checks(step)) return row;
  const check = await checkDevSlice(config, tasks, curriculum, policy, step, signal, ranks, emit);
  row.dev = check.dev;
  if (check.advanced) row.advancedTo = curriculum.current.name;
  return row;
}

/**
 * Places a fresh run: the current tier's dev slice is played, and the next tier taken while
 * one passes advanceAt. The checks go into the first step's metrics.
 */
async function placeInCurriculum(config: TrainConfig, tasks: TaskSource, curriculum: Curriculum, policy: AgentPolicy, signal: AbortSignal | undefined, ranks: Ranks | undefined, emit: (e: TrainEvent) => void): Promise<{ tier: string; dev: number }[]> {
  const checks: { tier: string; dev: number }[] = [];
  while (!curriculum.last) {
    const { tier, dev, advanced } = await checkDevSlice(config, tasks, curriculum, policy, 0, signal, ranks, emit);
    checks.push({ tier, dev });
    if (!advanced) break;
  }
  return checks;
}

/** A follower's tracker: rank 0 alone logs. */
function silentTracker(): Tracker {
  return { log: async () => undefined, close: async () => undefined };
}
