/**
 * Asynchronous rollouts (config.rollout.mode 'async'): the rollouts of the next steps are
 * collected while the learner trains, from weights at most maxStaleness (k) versions old.
 *
 * A version is a training step: version v is the weights after v steps, and step s trains the
 * weights of version s - 1. One producer collects the steps' batches in order, one at a time
 * (so rollout.concurrency bounds the sandboxes as in a sync run); it may start step s's batch
 * once version s - 1 - k is in place, so it runs up to k steps ahead of the learner. A
 * trajectory records the optimizer step of the weights that began it (Trajectory.weightVersion;
 * the in-process policy can step under a running batch, between generations); the
 * VersionClock turns that into a version. When a step takes its batch, any trajectory more than
 * k versions behind is dropped and its episode played again with the weights of now (the
 * schedule above never produces one; the check is what guarantees the bound whatever feeds the
 * pipeline). The loss keeps the sampler's logprobs as the old ones, so its importance ratio
 * corrects the lag.
 */
import type { Trajectory } from '../agent/trajectory.js';
import { internalError } from '../errors.js';
import { mean } from '../util/stats.js';

/** Optimizer steps at each version: which training step's weights an optimizer step belongs to. */
export class VersionClock {
  readonly #marks: { version: number; optimizerStep: number }[] = [];

  /** The weights of `version` are in place, `optimizerStep` optimizer steps into the run. */
  mark(version: number, optimizerStep: number): void {
    const last = this.#marks.at(-1);
    if (last && (version <= last.version || optimizerStep < last.optimizerStep))
      throw internalError(`async rollouts: version ${version} at optimizer step ${optimizerStep} follows version ${last.version} at ${last.optimizerStep}`);
    this.#marks.push({ version, optimizerStep });
  }

  /**
   * The version of the weights `optimizerStep` optimizer steps in: the last marked version at
   * or before it (weights between two versions count as the older one). Before the first mark:
   * that mark's version.
   */
  versionOf(optimizerStep: number): number {
    let version = this.#marks[0]?.version ?? 0;
    for (const mark of this.#marks) if (mark.optimizerStep <= optimizerStep) version = mark.version;
    return version;
  }
}

export interface Batch {
  trajectories: Trajectory[];
  rounds: number;
  /** Episodes played for the batch: dynamic sampling's set-aside groups and stale ones replayed included. */
  episodes: number;
}

export interface TakenBatch extends Batch {
  /** Versions behind the weights being trained, over the batch's trajectories (as trained). */
  staleness: { mean: number; max: number };
  /** Trajectories older than maxStaleness that were dropped, and the episodes played again for them. */
  dropped: number;
  /** Seconds the learner waited for the batch (the part of collecting that training did not hide). */
  waitSeconds: number;
  /** Seconds the producer spent collecting it. */
  collectSeconds: number;
}

export interface AsyncRolloutsOptions {
  maxStaleness: number;
  /** The version in place when the pipeline starts (the run's completed steps). */
  version: number;
  /** The last step to collect for. */
  lastStep: number;
  clock: VersionClock;
  /** Collects step `step`'s batch. */
  collect(step: number, signal: AbortSignal): Promise<Batch>;
  /** Plays again the episodes of these (stale) trajectories with the weights of now: one trajectory back for each, in order. */
  replay(step: number, stale: Trajectory[], signal: AbortSignal): Promise<Trajectory[]>;
  /** Stops collecting (a stop of the run). */
  signal?: AbortSignal;
}

export class AsyncRollouts {
  readonly #options: AsyncRolloutsOptions;
  readonly #stop = new AbortController();
  /** Each started step's batch, until taken. */
  readonly #batches = new Map<number, Promise<Batch & { collectSeconds: number }>>();
  #version: number;
  #nextStep: number;
  /** The producer's chain: each batch starts when the one before it is collected. */
  #chain: Promise<unknown> = Promise.resolve();
  #forward = () => this.#stop.abort();

  constructor(options: AsyncRolloutsOptions) {
    this.#options = options;
    this.#version = options.version;
    this.#nextStep = options.version + 1;
    if (options.signal?.aborted) this.#stop.abort();
    options.signal?.addEventListener('abort', this.#forward);
    this.#startEligible();
  }

  /** The weights of `version` are in place (after a step's learning and sync): later batches may start. */
  advance(version: number): void {
    this.#version = version;
    this.#startEligible();
  }

  /** Step `step`'s batch (the weights of version step - 1 must be in place), stale trajectories replaced. */
  async take(step: number): Promise<TakenBatch> {
    if (step !== this.#version + 1) throw internalError(`async rollouts: step ${step} taken at version ${this.#version}`);
    const pending = this.#batches.get(step);
    if (!pending) throw internalError(`async rollouts: step ${step}'s rollouts were never started`);
    const waitStarted = performance.now();
    const batch = await pending;
    this.#batches.delete(step);
    const { maxStaleness, clock } = this.#options;
    const trained = step - 1;
    const staleness = (t: Trajectory) => trained - clock.versionOf(t.weightVersion);
    const stale = batch.trajectories.flatMap((t, i) => (staleness(t) > maxStaleness ? [i] : []));
    let trajectories = batch.trajectories;
    if (stale.length > 0) {
      const fresh = await this.#options.replay(step, stale.map((i) => trajectories[i]!), this.#stop.signal);
      trajectories = [...trajectories];
      stale.forEach((i, k) => (trajectories[i] = fresh[k]!));
      const still = trajectories.filter((t) => staleness(t) > maxStaleness).length;
      if (still > 0) throw internalError(`async rollouts: ${still} replayed trajectories are still more than ${maxStaleness} versions old`);
    }
    const behind = trajectories.map(staleness);
    return {
      trajectories,
      rounds: batch.rounds,
      episodes: batch.episodes + stale.length,
      staleness: { mean: behind.length ? mean(behind) : 0, max: behind.length ? Math.max(...behind) : 0 },
      dropped: stale.length,
      waitSeconds: (performance.now() - waitStarted) / 1000,
      collectSeconds: batch.collectSeconds,
    };
  }

  /** Stops the producer and waits until every batch in flight has closed its envs. */
  async close(): Promise<void> {
    this.#stop.abort();
    this.#options.signal?.removeEventListener('abort', this.#forward);
    await this.#chain.catch(() => undefined);
    await Promise.allSettled(this.#batches.values());
    this.#batches.clear();
  }

  /** Starts (on the chain) every batch the staleness bound allows now. */
  #startEligible(): void {
    const { maxStaleness, lastStep } = this.#options;
    while (this.#nextStep <= lastStep && this.#nextStep - 1 - maxStaleness <= this.#version && !this.#stop.signal.aborted) {
      const step = this.#nextStep++;
      const result = this.#chain.then(async () => {
        const started = performance.now();
        const batch = await this.#options.collect(step, this.#stop.signal);
        return { ...batch, collectSeconds: (performance.now() - started) / 1000 };
      });
      // A failed batch fails its take(); the batches after it do not start.
      result.catch(() => undefined);
      this.#chain = result;
      this.#batches.set(step, result);
    }
  }
}
