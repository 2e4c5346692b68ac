/**
 * train(config): the DeepSWE loop. Each step: a batch of tasks x n rollouts in parallel envs
 * -> truncation policy -> advantages -> group filter -> mini-batches with token weights ->
 * policy.trainStep each -> metrics -> checkpoint. Resumable from the last checkpoint with the
 * same task order and seeds (both are pure functions of the run seed and the step), and
 * stoppable: an abort (or Ctrl-C under the CLI) ends the rollouts, closes every env, and
 * returns with what was finished written down.
 *
 * Read it in three parts: RlRun.setUp (the config, the run shell, the tasks, the policy where
 * it starts, the loss), RlRun.step (one step, collect to checkpoint), RlRun.closeOut (the
 * summary). train() strings them together; a config with an `sft` or a `pretrain` section
 * goes to sft() or pretrain() instead, which share the same run shell (run.ts).
 */
import { SwerlError } from '../errors.js';
import { resolveLossOptions, type ResolvedLossOptions } from '../math/policy-loss.js';
import type { NativePolicy } from '../model/native-policy.js';
import { ProcessGroupChannel } from '../model/process-group.js';
import { pinBlasToOneThread } from '../native.js';
import type { AgentPolicy } from '../types/policy.js';
import { optimizerStepsPerRun, warmupWarning } from './algorithms.js';
import { AsyncRollouts, VersionClock, type Batch } from './async-rollouts.js';
import { shapeBatch } from './batch.js';
import { collect, evaluate, replay, type Ranks } from './collect.js';
import { isPretrainConfig, isSftConfig, resolveTrainConfig, type TrainConfig } from './config.js';
import type { Curriculum } from './curriculum.js';
import { learn } from './learn.js';
import { identicalWeights, parallelFromEnv, type ParallelRun } from './parallel.js';
import { trainingCharts } from './plots.js';
import { pretrain } from './pretrain/pretrain.js';
import { consoleReporter, type TrainEvent } from './progress.js';
import { followerPolicy, referencePolicy, startingPoint, type StartingPoint } from './resume.js';
import { rejectionLearn } from './rft/learn.js';
import { RunShell, evalCurve, type TrainHooks, type TrainSummary } from './run.js';
import type { TrainerState } from './run-dir.js';
import { learnerLogprobs, openSampler, type Sampler } from './sampler.js';
import { sft } from './sft/sft.js';
import { LearningStallDetector, prefixCacheDelta, stepMetrics, stepWarnings, type StepRow } from './step-metrics.js';
import { assertGoldPatches, openTaskSource, type TaskSource } from './task-source.js';

export type { TrainHooks, TrainSummary } from './run.js';

/**
 * Trains a policy; resolves with a summary when the steps are done or the run is stopped. A
 * config with an `sft` section is supervised fine-tuning (lib/train/sft), one with a
 * `pretrain` section pretraining on reading drills (lib/train/pretrain): no rollouts.
 */
export async function train(rawConfig: unknown, hooks: TrainHooks = {}): Promise<TrainSummary> {
  if (isSftConfig(rawConfig)) return sft(rawConfig, hooks);
  if (isPretrainConfig(rawConfig)) return pretrain(rawConfig, hooks);
  const run = await RlRun.setUp(rawConfig, hooks);
  if (!(run instanceof RlRun)) return run;
  let stopped = false;
  let identical: boolean | undefined;
  try {
    await run.begin();
    while (run.state.step < run.config.run.steps) {
      if (await run.stopAgreed()) {
        stopped = true;
        break;
      }
      await run.step(run.state.step + 1);
    }
    identical = await run.checkRanksAgree();
  } catch (error) {
    if (!run.shell.isRequestedStop(error)) throw error;
    stopped = true;
  } finally {
    await run.close();
  }
  return run.closeOut(stopped, identical);
}

/** One RL run: what setUp opens, what each step reads and writes, and what close releases. */
class RlRun {
  readonly ranks: Ranks | undefined;
  readonly evals: { step: number; success: number }[];
  readonly clockStart: number;
  readonly learningStall = new LearningStallDetector();
  state: TrainerState;
  lastMetrics: Record<string, unknown> | undefined;
  sampler: Sampler | undefined;
  pipeline: AsyncRollouts | undefined;
  /** Async in a group: the producer's own channel for its gathers. */
  rolloutChannel: ProcessGroupChannel | undefined;
  /** A fresh run's curriculum placement, reported with the first step's metrics. */
  placement: { tier: string; dev: number }[] | undefined;
  clock = new VersionClock();

  private constructor(
    readonly config: TrainConfig,
    readonly hooks: TrainHooks,
    readonly shell: RunShell,
    readonly parallel: ParallelRun | undefined,
    readonly tasks: TaskSource,
    readonly policy: NativePolicy,
    readonly reference: NativePolicy | undefined,
    /** The loss's options, checked and resolved once for the run. */
    readonly loss: ResolvedLossOptions,
    readonly metricsRows: Record<string, unknown>[],
    start: StartingPoint,
  ) {
    this.state = start.state;
    this.ranks = parallel ? { parallel, reducer: policy } : undefined;
    this.evals = evalCurve(metricsRows);
    this.clockStart = performance.now() - start.state.elapsedSeconds * 1000;
    this.lastMetrics = metricsRows.at(-1);
  }

  // ---- set-up ---------------------------------------------------------------------------

  /**
   * The config resolved, the run directory opened, the tasks, the policy where the run starts
   * (the last checkpoint, or fresh and warmed up, saved as step 0), the KL reference, the loss
   * and the tracker. A stop during the warm-up ends the run here, with its summary.
   */
  static async setUp(rawConfig: unknown, hooks: TrainHooks): Promise<RlRun | TrainSummary> {
    const started = performance.now();
    const resolved = resolveTrainConfig(rawConfig, hooks.baseDir);
    const parallel = hooks.parallel === undefined ? parallelFromEnv() : hooks.parallel ?? undefined;
    // A CUDA rank trains on its own device, LOCAL_RANK's (torchrun's convention); its group is NCCL's.
    const config = parallel && resolved.model.device === 'cuda' ? { ...resolved, model: { ...resolved.model, device: `cuda:${parallel.localRank}` } } : resolved;
    // Rank 0 leads: it alone writes the run directory; the others follow its weights and steps.
    // Rank 0 speaks for the group; a follower's errors still reach its stderr.
    const lead = !parallel || parallel.rank === 0;
    const { run, algorithm } = config;
    const shell = await RunShell.open(config, hooks, lead ? consoleReporter(run.progress, run.steps) : () => undefined, { lead, started });
    const label = `swerl-train-${process.pid}`;
    // Followers open the tasks once rank 0 has (after the group forms).
    let source = lead ? await openTaskSource(config.tasks, label) : undefined;
    if (source && algorithm.partialCredit > 0) assertGoldPatches(source, 'config.algorithm.partialCredit');
    if (config.tasks.kind === 'swe') pinBlasToOneThread();
    const optimizerSteps = optimizerStepsPerRun(algorithm, run.steps, config.rollout.tasksPerStep * config.rollout.samplesPerTask);
    const warmup = warmupWarning(algorithm, config.optimizer.warmupSteps, optimizerSteps);
    if (warmup && lead) shell.emit({ type: 'warning', step: 0, message: warmup });

    // The policy: the last checkpoint when resuming, else fresh (then warm-up, saved as step 0).
    // A follower loads the configured model; joining the group gives it rank 0's weights.
    let start: StartingPoint;
    try {
      start = lead
        ? await startingPoint(config, source!, shell, optimizerSteps, hooks.signal)
        : { policy: await followerPolicy(config, optimizerSteps), state: { step: 0, elapsedSeconds: 0 }, metricsRows: [], resumed: false };
      if (parallel) {
        await joinRun(start, parallel);
        source ??= await openTaskSource(config.tasks, label, { reuseGenerated: true });
      }
    } catch (error) {
      if (!shell.isRequestedStop(error)) throw error;
      shell.emit({ type: 'stopped', step: 0, reason: 'stop requested during the format warm-up; nothing was saved, a resumed run starts afresh' });
      const summary: TrainSummary = { dir: run.dir, steps: 0, episodes: 0, stopped: true, evals: [], seconds: shell.seconds };
      if (lead) await shell.dir.writeSummary(summary);
      return summary;
    }
    const { policy, metricsRows, state } = start;
    if (source!.curriculum && state.curriculumTier !== undefined) source!.curriculum.resume(state.curriculumTier);
    shell.emit({ type: 'start', step: state.step, steps: run.steps, resumed: start.resumed, dir: run.dir });

    // Every rank reads the KL reference from rank 0's run directory (its step-0 checkpoint).
    const reference = await referencePolicy(config, shell.dir, optimizerSteps).catch((error: unknown) => {
      if (lead || !(error instanceof SwerlError)) throw error;
      throw new SwerlError(error.code, `${error.message}; rank ${parallel!.rank} reads the KL reference from rank 0's run directory, so across nodes run.dir must be on a shared filesystem`);
    });
    // The config already bounded these; resolving fills the native core's flat form.
    const loss = resolveLossOptions({
      clipLow: algorithm.clipLow,
      clipHigh: algorithm.clipHigh,
      dualClip: algorithm.dualClip,
      temperature: config.rollout.temperature,
      entropyCoef: algorithm.entropyCoef,
      ...(algorithm.kl ? { kl: algorithm.kl } : {}),
    }, 'config.algorithm', config.model.device);
    await shell.openTracker(config.tracking, config, metricsRows).catch((error: unknown) => {
      policy.dispose();
      reference?.dispose();
      throw error;
    });
    return new RlRun(config, hooks, shell, parallel, source!, policy, reference, loss, metricsRows, start);
  }

  /**
   * Before the first step: the sampler, step 0's eval, a fresh run's curriculum placement, and
   * (async) the producer that collects the next steps' batches while the learner trains.
   */
  async begin(): Promise<void> {
    const { config, hooks, tasks, parallel } = this;
    this.sampler = await openSampler(config, this.policy, parallel);
    if (this.state.step === 0 && config.eval.every > 0 && config.eval.atStart && !this.evals.some((e) => e.step === 0)) {
      const success = await evaluate(config, tasks, this.sampler.policy, hooks.signal, this.ranks);
      this.evals.push({ step: 0, success });
      this.shell.emit({ type: 'eval', step: 0, success });
      this.metricsRows.push({ step: 0, eval: { success } });
      await this.shell.recordStart(this.metricsRows);
    }
    if (this.state.step === 0 && tasks.curriculum?.config.placement) this.placement = await placeInCurriculum(this, tasks.curriculum, this.sampler.policy);
    this.clock.mark(this.state.step, this.sampler.version());
    if (config.rollout.mode === 'async') {
      const sampler = this.sampler;
      // In a group the producer gathers on a channel of its own (the next port), so its gathers
      // and the learner's all-reduces keep one order each on every rank.
      if (parallel) this.rolloutChannel = await ProcessGroupChannel.join({ rank: parallel.rank, worldSize: parallel.worldSize, masterAddr: parallel.masterAddr, masterPort: parallel.masterPort + 1, timeoutMs: parallel.timeoutMs });
      const producerRanks = parallel ? { parallel, reducer: this.rolloutChannel! } : undefined;
      this.pipeline = new AsyncRollouts({
        maxStaleness: config.rollout.maxStaleness,
        version: this.state.step,
        lastStep: config.run.steps,
        clock: this.clock,
        collect: (step, signal) => this.collectStep(step, signal, producerRanks),
        // Replays happen in the learner's turn (take()): on the learner's channel.
        replay: (step, stale, signal) => replay(config, tasks, sampler, step, stale, signal, this.ranks),
        ...(hooks.signal ? { signal: hooks.signal } : {}),
      });
    }
  }

  private collectStep(step: number, signal: AbortSignal | undefined, on = this.ranks): Promise<Batch> {
    return collect(this.config, this.tasks, this.sampler!, step, signal, (progress) => this.shell.emit({ type: 'rollouts', step, progress }), on);
  }

  /** Every rank stops at the same step: a stop anywhere is everyone's. */
  async stopAgreed(): Promise<boolean> {
    const here = this.shell.stopRequested;
    return this.parallel ? (await this.policy.allReduce([here ? 1 : 0]))[0]! > 0 : here;
  }

  // ---- one step -------------------------------------------------------------------------

  /** Step `step`: its rollouts, what the algorithm learns from them, its metrics, curriculum and eval; written down and checkpointed when due. */
  async step(step: number): Promise<void> {
    const { config, policy, shell, tasks } = this;
    const { algorithm, run } = config;
    const sampler = this.sampler!;
    const stepStarted = performance.now();
    const prefixCacheBefore = policy.prefixCache;
    const taken = this.pipeline ? await this.pipeline.take(step) : undefined;
    const collected = taken ?? (await this.collectStep(step, this.hooks.signal));
    let trajectories = collected.trajectories;
    const rolloutSeconds = (performance.now() - stepStarted) / 1000;

    const trainStarted = performance.now();
    // Sampled elsewhere: the learner's own logprobs of the sampled tokens, and the gap.
    const recomputed = sampler.remote ? await learnerLogprobs(policy, trajectories, config.rollout.temperature, config.sampler.oldLogprobs === 'learner') : undefined;
    if (recomputed) trajectories = recomputed.trajectories;
    const broken = trajectories.filter((t) => t.logprobs.some((l, i) => t.mask[i] === 1 && !Number.isFinite(l))).length;
    if (broken > 0) throw await shell.numericStop(new SwerlError('ERR_SWERL_NUMERIC', `${broken} of ${trajectories.length} rollouts were sampled with non-finite logprobs (the policy's logits hold NaN or Inf)`), step);
    const shaped = shapeBatch(trajectories, algorithm);
    // Rejection fine-tuning (the rft preset) or the policy-gradient loss.
    const { results, round } = await (algorithm.rejection
      ? rejectionLearn(policy, trajectories, algorithm.rejection, run.seed, step, this.parallel)
      : learn(config, policy, this.reference, trajectories, shaped, step, this.loss, this.parallel).then((learned) => ({ results: learned, round: undefined }))
    ).catch(async (error: unknown) => {
      throw await shell.numericStop(error, step);
    });
    const syncSeconds = await sampler.sync();
    const trainSeconds = (performance.now() - trainStarted) / 1000;
    // The weights of version `step` are in place: the producer may go on.
    this.clock.mark(step, sampler.version());
    this.pipeline?.advance(step);

    const metrics: StepRow = stepMetrics(step, trajectories, shaped, results, collected, { rolloutSeconds, trainSeconds, ...(taken ? { collectSeconds: taken.collectSeconds } : {}) });
    if (!sampler.remote) metrics.prefixCache = prefixCacheDelta(policy.prefixCache, prefixCacheBefore);
    if (round) metrics.rejection = round;
    if (taken) metrics.async = { maxStaleness: config.rollout.maxStaleness, staleness: taken.staleness, dropped: taken.dropped, waitSeconds: taken.waitSeconds, collectSeconds: taken.collectSeconds };
    if (recomputed) metrics.sampler = { gapMean: recomputed.gap.mean, gapMax: recomputed.gap.max, tokens: recomputed.gap.tokens, syncSeconds, weightVersion: sampler.version() };
    if (tasks.curriculum) {
      metrics.curriculum = { ...(this.placement ? { placement: this.placement } : {}), ...(await curriculumStep(this, tasks.curriculum, sampler.policy, step)) };
      this.placement = undefined;
    }
    if (config.eval.every > 0 && (step % config.eval.every === 0 || step === run.steps)) {
      const evalStarted = performance.now();
      const success = await evaluate(config, tasks, sampler.policy, this.hooks.signal, this.ranks);
      this.evals.push({ step, success });
      shell.emit({ type: 'eval', step, success });
      metrics.eval = { success, seconds: (performance.now() - evalStarted) / 1000 };
    }
    metrics.time.stepSeconds = (performance.now() - stepStarted) / 1000;
    metrics.time.elapsedSeconds = (performance.now() - this.clockStart) / 1000;
    const stall = this.learningStall.observe(metrics, policy.config.native.vocabSize);
    const warnings = [...stepWarnings(trajectories, metrics, config.rollout.promptBudget), ...(stall ? [stall] : [])];
    if (this.parallel) metrics.parallel = { worldSize: this.parallel.worldSize };
    if (warnings.length) metrics.warnings = warnings;
    for (const message of warnings) shell.emit({ type: 'warning', step, message });
    this.metricsRows.push(metrics);
    this.lastMetrics = metrics;

    if (shell.lead && run.saveTrajectories) await shell.dir.writeTrajectories(step, trajectories, (_, i) => ({ shapedReward: shaped.rewards[i], advantage: shaped.advantages[i], filtered: shaped.filtered[i] === 1, kept: shaped.kept[i] === 1 }));
    this.state = { step, elapsedSeconds: (performance.now() - this.clockStart) / 1000, ...(tasks.curriculum ? { curriculumTier: tasks.curriculum.tier } : {}) };
    await shell.finishStep(policy, this.state, this.metricsRows, () => trainingCharts(this.metricsRows));
  }

  // ---- close-out ------------------------------------------------------------------------

  /** Data parallel: a cheap proof that the ranks never drifted apart (their steps are one step). */
  async checkRanksAgree(): Promise<boolean | undefined> {
    if (!this.parallel) return undefined;
    const identical = await identicalWeights(this.policy, this.parallel);
    if (!identical) this.shell.emit({ type: 'warning', step: this.state.step, message: 'the ranks\' weights differ at the end of the run: data parallelism went wrong (report it, with the config)' });
    return identical;
  }

  /** Releases everything the run opened; batches in flight end (their envs closed) before the policy they sample goes. */
  async close(): Promise<void> {
    await this.pipeline?.close();
    this.rolloutChannel?.close();
    await this.shell.close();
    await this.sampler?.close();
    this.policy.dispose();
    this.reference?.dispose();
  }

  /** The run's summary, written to summary.json by rank 0. */
  closeOut(stopped: boolean, identical: boolean | undefined): Promise<TrainSummary> {
    const { config, parallel, tasks } = this;
    return this.shell.finish<TrainSummary>({
      dir: config.run.dir,
      steps: this.state.step,
      // A row of an older run has no episodes: its trajectories were what it played (no dynamic sampling count).
      episodes: this.metricsRows.reduce((sum, row) => sum + (typeof row.episodes === 'number' ? row.episodes : typeof row.trajectories === 'number' ? row.trajectories : 0), 0),
      stopped,
      ...(this.lastMetrics ? { last: this.lastMetrics } : {}),
      evals: this.evals,
      ...(parallel ? { parallel: { worldSize: parallel.worldSize, ...(identical !== undefined ? { identicalWeights: identical } : {}) } } : {}),
      ...(tasks.curriculum ? { curriculumTier: tasks.curriculum.current.name } : {}),
      seconds: this.shell.seconds,
    }, 'stop requested; the unfinished step was dropped and will be redone on resume');
  }
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
async function checkDevSlice(run: RlRun, curriculum: Curriculum, policy: AgentPolicy, step: number): Promise<{ tier: string; dev: number; advanced: boolean }> {
  const tier = curriculum.current.name;
  const dev = await evaluate(run.config, run.tasks, policy, run.hooks.signal, run.ranks, curriculum.current.dev);
  const advanced = curriculum.observe(dev);
  if (advanced) {
    const [what, when] = step === 0 ? ['curriculum placement', 'the first step'] : ['curriculum', 'the next step'];
    run.shell.emit({ type: 'note', step, message: `${what}: the dev slice of tier "${tier}" resolved ${dev.toFixed(3)} (>= ${curriculum.config.advanceAt}): tier "${curriculum.current.name}" from ${when}` } satisfies TrainEvent);
  }
  return { tier, dev, advanced };
}

/**
 * The curriculum's part of a step's metrics: the tier trained on, and on a check step the dev
 * slice's greedy resolve rate and whether it advanced.
 */
async function curriculumStep(run: RlRun, curriculum: Curriculum, policy: AgentPolicy, step: number): Promise<Record<string, unknown>> {
  const row: Record<string, unknown> = { tier: curriculum.tier, name: curriculum.current.name };
  if (!curriculum.checks(step)) return row;
  const check = await checkDevSlice(run, curriculum, policy, step);
  row.dev = check.dev;
  if (check.advanced) row.advancedTo = curriculum.current.name;
  return row;
}

/**
 * Places a fresh run: the current tier's dev slice is played, and the next tier taken while
 * one passes advanceAt. The checks go into the first step's metrics.
 */
async function placeInCurriculum(run: RlRun, curriculum: Curriculum, policy: AgentPolicy): Promise<{ tier: string; dev: number }[]> {
  const checks: { tier: string; dev: number }[] = [];
  while (!curriculum.last) {
    const { tier, dev, advanced } = await checkDevSlice(run, curriculum, policy, 0);
    checks.push({ tier, dev });
    if (!advanced) break;
  }
  return checks;
}
