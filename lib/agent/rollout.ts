/**
 * The rollout engine: a batch of episodes (tasks x samples) played with bounded concurrency.
 * Concurrent episodes share the policy's decode batches (NativePolicy batches whatever
 * generate() calls are in flight); a second bound caps generations in flight. Infrastructure
 * faults (a sandbox that cannot start or dies mid-episode) are retried with a fresh env; what
 * the model does never is. When the batch ends, throws or is aborted, every env is closed.
 */
import { Slots } from '../util/bounded.js';
import { setMaxListeners } from 'node:events';

import { SwerlError, isInfrastructureFault } from '../errors.js';
import type { Env } from '../env/env.js';
import type { Task } from '../env/task.js';
import { EpisodeAborted, runEpisode, type AgentLoopOptions } from './agent-loop.js';
import type { AgentPolicy, SamplingRequest, EpisodeContext } from '../types/policy.js';
import type { Trajectory } from './trajectory.js';

export interface RolloutItem {
  taskId: string;
  task?: Task;
  /** The task's index in the batch: the trajectories of one group share it. */
  group: number;
  sample: number;
  /** A fresh env for one attempt (called again on a retry). */
  makeEnv: () => Env | Promise<Env>;
  /** Seed of the episode's generations (retries reuse it). */
  seed?: number;
}

export interface RolloutOptions {
  /** Episodes in flight at once (each holds a sandbox). */
  concurrency: number;
  /** Generations in flight at once across episodes (0 = as many as episodes). */
  generationConcurrency: number;
  /** Extra attempts of an episode whose env failed (never for the model's own behaviour). */
  retries: number;
  agent: AgentLoopOptions;
}

export interface RolloutProgress {
  done: number;
  total: number;
  running: number;
  rewardSum: number;
  solved: number;
  retries: number;
  /** Tokens the policy sampled in the finished episodes. */
  sampledTokens: number;
  last?: Trajectory;
}

/** Tokens the policy sampled in an episode (its turns; observations are not sampled). */
export function sampledTokens(trajectory: Trajectory): number {
  return trajectory.turns.reduce((sum, turn) => sum + turn.responseTokens, 0);
}

export { isInfrastructureFault };

/** A counting semaphore. */
/** The policy seen through a bound on generations in flight. */
function throttled(policy: AgentPolicy, slots: Slots | null): AgentPolicy {
  if (!slots) return policy;
  return {
    tokenizer: policy.tokenizer,
    async generate(request: SamplingRequest, context?: EpisodeContext) {
      await slots.acquire();
      try {
        return await policy.generate(request, context);
      } finally {
        slots.release();
      }
    },
  };
}

/**
 * Plays every item; resolves with the trajectories in item order. The first error that is not
 * retried aborts the others, waits for them to close their envs, and is thrown. An abort of
 * `signal` does the same with an ERR_SWERL_ABORTED error.
 */
export async function runRollouts(
  items: RolloutItem[],
  policy: AgentPolicy,
  options: RolloutOptions,
  hooks: {
    signal?: AbortSignal;
    /** The sampler's weight version, recorded on each trajectory; a function is read as each attempt starts (weights that change under a batch). */
    weightVersion?: number | (() => number);
    onProgress?: (p: RolloutProgress) => void;
  } = {},
): Promise<Trajectory[]> {
  const stop = new AbortController();
  // Every episode in flight listens on it (and its generation on a child of it).
  setMaxListeners(0, stop.signal);
  const forward = () => stop.abort();
  if (hooks.signal?.aborted) stop.abort();
  hooks.signal?.addEventListener('abort', forward);
  const sampler = throttled(policy, options.generationConcurrency > 0 ? new Slots(options.generationConcurrency) : null);
  const episodes = new Slots(options.concurrency);
  const progress: RolloutProgress = { done: 0, total: items.length, running: 0, rewardSum: 0, solved: 0, retries: 0, sampledTokens: 0 };
  const results: Trajectory[] = new Array(items.length);
  let firstError: unknown;

  const play = async (item: RolloutItem, index: number): Promise<void> => {
    await episodes.acquire();
    progress.running++;
    try {
      for (let attempt = 0; ; attempt++) {
        if (stop.signal.aborted) throw new EpisodeAborted();
        let trajectory: Trajectory | undefined;
        let fault: unknown;
        try {
          const env = await item.makeEnv();
          trajectory = await runEpisode(
            {
              env,
              policy: sampler,
              context: { taskId: item.taskId, sample: item.sample, ...(item.task ? { task: item.task } : {}) },
              group: item.group,
              signal: stop.signal,
              weightVersion: typeof hooks.weightVersion === 'function' ? hooks.weightVersion() : hooks.weightVersion ?? 0,
              ...(item.seed !== undefined ? { seed: item.seed } : {}),
            },
            options.agent,
          );
        } catch (error) {
          if (!isInfrastructureFault(error)) throw error;
          fault = error;
        }
        // A sandbox that died mid-episode ends it as 'error': infrastructure, so retried too.
        const retryable = fault !== undefined || trajectory?.termination === 'error';
        if (!retryable || attempt >= options.retries || stop.signal.aborted) {
          // A fault while stopping is the stop's doing (Ctrl-C destroys sandboxes): report the stop.
          if (trajectory === undefined) throw stop.signal.aborted && hooks.signal?.aborted ? new EpisodeAborted() : fault;
          trajectory.attempts = attempt + 1;
          results[index] = trajectory;
          progress.done++;
          progress.rewardSum += trajectory.reward;
          progress.sampledTokens += sampledTokens(trajectory);
          if (trajectory.reward > 0) progress.solved++;
          progress.last = trajectory;
          hooks.onProgress?.({ ...progress });
          return;
        }
        progress.retries++;
      }
    } catch (error) {
      if (firstError === undefined) firstError = error;
      stop.abort();
    } finally {
      progress.running--;
      episodes.release();
    }
  };

  try {
    await Promise.all(items.map(play));
  } finally {
    hooks.signal?.removeEventListener('abort', forward);
  }
  if (firstError !== undefined) {
    if (firstError instanceof EpisodeAborted && hooks.signal?.aborted) throw new SwerlError('ERR_SWERL_ABORTED', 'the rollouts were stopped');
    throw firstError;
  }
  return results;
}
