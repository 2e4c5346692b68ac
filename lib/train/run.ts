/**
 * The run shell every trainer shares (train()'s RL loop, sft(), pretrain()): the run directory
 * and its progress events, the tracker, each step's rows written down, checkpoints and the
 * resume point they make, a requested stop told apart from a failure, a numeric failure named
 * with its last good checkpoint, and the closing summary. Each trainer keeps only its own step.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

import { SwerlError } from '../errors.js';
import { NativePolicy } from '../model/native-policy.js';
import type { NativePolicyLoadOptions } from '../model/native-policy-options.js';
import type { RunConfig } from './config.js';
import type { ParallelRun } from './parallel.js';
import { renderChartsSvg, type Chart } from './plots.js';
import type { TrainEvent } from './progress.js';
import { RunDirectory, type TrainerState } from './run-dir.js';
import { openTracker, type Tracker, type TrackingOptions } from './tracking/index.js';

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

/** The error is the abort a requested stop makes (not a failure): the run ends cleanly. */
export function isRequestedStop(error: unknown, signal: AbortSignal | undefined): boolean {
  return error instanceof SwerlError && error.code === 'ERR_SWERL_ABORTED' && signal?.aborted === true;
}

/** Where a resumed run goes on: the last checkpoint's policy, its trainer state and the metrics rows up to it. */
export interface ResumePoint<S extends TrainerState = TrainerState> {
  policy: NativePolicy;
  state: S;
  /** metrics.jsonl's rows up to the state's step (the rows of steps never saved are dropped). */
  metricsRows: Record<string, unknown>[];
}

/** Greedy success by step, from metrics rows that hold an eval (a resumed run's curve so far). */
export function evalCurve(rows: readonly Record<string, unknown>[]): { step: number; success: number }[] {
  return rows.flatMap((r) => {
    const e = (r.eval as { success?: number } | undefined)?.success;
    return typeof e === 'number' ? [{ step: r.step as number, success: e }] : [];
  });
}

export class RunShell {
  readonly dir: RunDirectory;
  #tracker: Tracker = { log: async () => undefined, close: async () => undefined };

  private constructor(
    readonly run: RunConfig,
    readonly emit: (event: TrainEvent) => void,
    private readonly signal: AbortSignal | undefined,
    /** This process writes the run directory (a data-parallel follower does not). */
    readonly lead: boolean,
    /** When the run began (performance.now()): its summary's seconds count from here. */
    readonly started: number,
  ) {
    this.dir = new RunDirectory(run.dir);
  }

  /**
   * Opens a run: its directory created with the resolved config (by the lead process only), its
   * events going to the console reporter and to hooks.onEvent. `started`: when the run began,
   * if before this (the data checked first); default now.
   */
  static async open(config: { run: RunConfig }, hooks: TrainHooks, reporter: (event: TrainEvent) => void, options: { lead?: boolean; started?: number } = {}): Promise<RunShell> {
    const emit = (event: TrainEvent) => {
      reporter(event);
      hooks.onEvent?.(event);
    };
    const lead = options.lead ?? true;
    const shell = new RunShell(config.run, emit, hooks.signal, lead, options.started ?? performance.now());
    if (lead) await shell.dir.create(config, config.run.resume);
    return shell;
  }

  /** Seconds since the run opened. */
  get seconds(): number {
    return (performance.now() - this.started) / 1000;
  }

  get stopRequested(): boolean {
    return this.signal?.aborted === true;
  }

  isRequestedStop(error: unknown): boolean {
    return isRequestedStop(error, this.signal);
  }

  /**
   * The last checkpoint when run.resume finds one (the checkpoints past keepCheckpoints pruned
   * first); undefined for a fresh run, whose rows are then cleared.
   */
  async resumePoint<S extends TrainerState>(options: NativePolicyLoadOptions): Promise<ResumePoint<S> | undefined> {
    await this.dir.pruneCheckpoints(this.run.keepCheckpoints + 1);
    const checkpoints = this.run.resume ? await this.dir.checkpointSteps() : [];
    if (checkpoints.length === 0) {
      await this.dir.truncateTo(0);
      return undefined;
    }
    const step = checkpoints.at(-1)!;
    const policy = await NativePolicy.load(this.dir.checkpointDir(step), options);
    const saved = await fs.readFile(path.join(this.dir.checkpointDir(step), 'swerl_state.json'), 'utf8');
    const state = ((JSON.parse(saved) as { extra?: { trainer?: S } }).extra?.trainer ?? { step, elapsedSeconds: 0 }) as S;
    return { policy, state, metricsRows: await this.dir.truncateTo(state.step) };
  }

  /** Opens TensorBoard / W&B (the lead process only; a follower's tracker logs nothing). */
  async openTracker(options: TrackingOptions, config: unknown, rows: readonly Record<string, unknown>[]): Promise<void> {
    if (this.lead) this.#tracker = await openTracker(this.run.dir, options, { config, rows });
  }

  /** A row before the first step (step 0's eval): metrics.jsonl and the tracker. */
  async recordStart(rows: readonly Record<string, unknown>[]): Promise<void> {
    if (!this.lead) return;
    await this.dir.writeMetrics(rows);
    await this.#tracker.log(0, rows.at(-1)!);
  }

  /**
   * A finished step: its row (the last of `rows`) written down, the step event, and its
   * checkpoint when due (the lead process only).
   */
  async finishStep(policy: NativePolicy, state: TrainerState, rows: readonly Record<string, unknown>[], charts?: () => Chart[]): Promise<void> {
    const { step } = state;
    if (this.lead) {
      await this.dir.writeMetrics(rows);
      await this.#tracker.log(step, rows.at(-1)!);
      if (this.run.plots && charts) await this.dir.writeFile('curves.svg', renderChartsSvg(charts()));
    }
    this.emit({ type: 'step', step, metrics: rows.at(-1)! });
    // Every run.checkpointEvery steps, and the last.
    if (this.lead && (step % this.run.checkpointEvery === 0 || step === this.run.steps)) await this.checkpoint(policy, state);
  }

  /** Saves a step's checkpoint with the trainer's state, keeps the newest run.keepCheckpoints, and says so. */
  async checkpoint(policy: NativePolicy, state: TrainerState): Promise<string> {
    await policy.save(this.dir.checkpointDir(state.step), { extra: { trainer: state } });
    await this.dir.pruneCheckpoints(this.run.keepCheckpoints);
    const dir = this.dir.checkpointDir(state.step);
    this.emit({ type: 'checkpoint', step: state.step, dir });
    return dir;
  }

  /**
   * A non-finite loss or gradient ends the run: the step is not saved, so the last checkpoint is
   * the last good state, and the error says where it is and what to change before resuming.
   * Any other error comes back as it was.
   */
  async numericStop(error: unknown, step: number, knobs = 'optimizer.lr or algorithm.entropyCoef'): Promise<unknown> {
    if (!(error instanceof SwerlError) || error.code !== 'ERR_SWERL_NUMERIC') return error;
    // A data-parallel follower does not read the run directory (rank 0's, maybe on another node).
    const last = this.lead ? (await this.dir.checkpointSteps()).at(-1) : undefined;
    const where = !this.lead ? 'rank 0 names the last good checkpoint' : last === undefined ? 'no checkpoint was saved yet' : `the last good checkpoint is ${this.dir.checkpointDir(last)} (step ${last})`;
    return new SwerlError(
      'ERR_SWERL_NUMERIC',
      `step ${step}: ${error.message}; the run stopped and this step was not saved; ${where}. ` +
        `Lower ${knobs}, keep optimizer.maxGradNorm on, or use computeDtype bfloat16 instead of float16; then resume with run.resume: true`,
    );
  }

  /**
   * Runs a supervised job's steps (sft(), pretrain()) and says whether they stopped early: a
   * requested stop ends them early, a non-finite loss ends the run naming the step that failed
   * (`failing()`) and the learning rate; the tracker closes and the policy is freed however
   * they end.
   */
  async runSteps(policy: { dispose(): void }, failing: () => number, steps: () => Promise<boolean>): Promise<boolean> {
    try {
      return await steps();
    } catch (error) {
      if (!this.isRequestedStop(error)) throw await this.numericStop(error, failing(), 'optimizer.lr');
      return true;
    } finally {
      await this.close();
      policy.dispose();
    }
  }

  /** Closes the tracker (the events file complete, the W&B run finished); later calls do nothing. */
  async close(): Promise<void> {
    await this.#tracker.close();
  }

  /**
   * The end of the run: says whether it stopped or finished, then (the lead process) writes its
   * summary with its last checkpoint, and returns it.
   */
  async finish<S extends TrainSummary>(summary: Omit<S, 'checkpoint'>, stopReason: string): Promise<S> {
    this.emit(summary.stopped ? { type: 'stopped', step: summary.steps, reason: stopReason } : { type: 'done', step: summary.steps });
    if (!this.lead) return summary as S;
    const checkpoints = await this.dir.checkpointSteps();
    const full = { ...summary, ...(checkpoints.length ? { checkpoint: this.dir.checkpointDir(checkpoints.at(-1)!) } : {}) } as S;
    await this.dir.writeSummary(full);
    return full;
  }
}
