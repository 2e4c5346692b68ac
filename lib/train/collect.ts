/**
 * A step's rollouts: the agent loop's options from the config, the rollout items of a step's
 * tasks (seeded by run seed, step, round, group and sample), DAPO's dynamic sampling, and the
 * greedy evaluation on the held-out tasks.
 */
import type { AgentLoopOptions } from '../agent/agent-loop.js';
import { runRollouts, type RolloutItem, type RolloutOptions, type RolloutProgress } from '../agent/rollout.js';
import type { Trajectory } from '../agent/trajectory.js';
import { SwerlError, internalError } from '../errors.js';
import { keepInformativeGroups } from '../math/reward-shaping.js';
import type { AgentPolicy } from '../types/policy.js';
import { mixSeed, tasksForStep } from '../util/random.js';
import { mean } from '../util/stats.js';
import type { Batch } from './async-rollouts.js';
import type { TrainConfig } from './config.js';
import type { Sampler } from './sampler.js';
import { gatherTrajectories, rankShare, type AllReducer, type ParallelRun } from './parallel.js';
import type { TaskRef } from '../env/task.js';
import type { TaskSource } from './task-source.js';

export function agentOptions(config: TrainConfig, source: TaskSource, overrides: Partial<AgentLoopOptions> = {}): AgentLoopOptions {
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

/** A group's ranks and the channel that gathers their trajectories (the policy's process group, or the rollouts' own). */
export interface Ranks {
  parallel: ParallelRun;
  reducer: AllReducer;
}

/** The rollouts of `items`: all of them, or (data parallel) this rank's share, gathered from every rank. */
async function play(items: RolloutItem[], policy: AgentPolicy, options: RolloutOptions, context: Parameters<typeof runRollouts>[3], ranks: Ranks | undefined): Promise<Trajectory[]> {
  if (!ranks) return runRollouts(items, policy, options, context);
  let mine: Trajectory[] = [];
  let failure: unknown;
  try {
    mine = await runRollouts(rankShare(items, ranks.parallel), policy, options, context);
  } catch (error) {
    failure = error;
  }
  // A rank whose rollouts failed or were stopped still says so to the others, so that none is
  // left waiting in a gather that never comes (rollouts on a channel of their own are not
  // ended by the failing rank's exit, as the training group's are).
  const [failed] = await ranks.reducer.allReduce([failure === undefined ? 0 : 1]);
  if (failure !== undefined) throw failure;
  if (failed! > 0) {
    throw context?.signal?.aborted
      ? new SwerlError('ERR_SWERL_ABORTED', 'the rollouts were stopped')
      : new SwerlError('ERR_SWERL_DIST', `the rollouts failed on ${failed} other rank(s) (their error is in their log)`);
  }
  return gatherTrajectories(ranks.reducer, ranks.parallel, mine);
}

/**
 * The step's trajectories. With DAPO's dynamic sampling, groups whose rewards are all equal are
 * set aside and more tasks are sampled (next in the task order) until the batch has
 * tasksPerStep informative groups or resampleRounds run out. `episodes` counts every episode
 * played, the set-aside groups' included: what the step cost in rollouts.
 */
export async function collect(
  config: TrainConfig,
  source: TaskSource,
  sampler: Sampler,
  step: number,
  signal: AbortSignal | undefined,
  onProgress: (progress: RolloutProgress) => void,
  ranks?: Ranks,
): Promise<Batch> {
  const { rollout, algorithm, run } = config;
  const options = rolloutOptions(config, agentOptions(config, source));
  const n = source.train.length;
  const refsFor = (round: number) => tasksForStep(n, rollout.tasksPerStep, mixSeed(run.seed, round), step - 1).map((i) => source.train[i]!);
  const dynamic = algorithm.groupFilter === 'informative' && algorithm.resampleRounds > 0;
  let kept: Trajectory[] = [];
  let rounds = 0;
  let episodes = 0;
  for (let round = 0; round <= (dynamic ? algorithm.resampleRounds : 0); round++) {
    rounds++;
    const items = rolloutItems(config, source, refsFor(round), step, round, rollout.samplesPerTask);
    const batch = await play(items, sampler.policy, options, { ...(signal ? { signal } : {}), weightVersion: () => sampler.version(), onProgress }, ranks);
    episodes += batch.length;
    if (!dynamic) return { trajectories: batch, rounds, episodes };
    const offset = kept.length === 0 ? 0 : Math.max(...kept.map((t) => t.group)) + 1;
    const informative = keepInformativeGroups(Float32Array.from(batch, (t) => t.reward), Int32Array.from(batch, (t) => t.group));
    kept = [...kept, ...batch.filter((_, i) => informative[i] === 1).map((t) => ({ ...t, group: t.group + offset }))];
    if (new Set(kept.map((t) => t.group)).size >= rollout.tasksPerStep) break;
    if (round === algorithm.resampleRounds && kept.length === 0) kept = batch;  // nothing informative: train on nothing useful rather than fail
  }
  const groups = [...new Set(kept.map((t) => t.group))].slice(0, rollout.tasksPerStep);
  const renumber = new Map(groups.map((g, i) => [g, i]));
  return { trajectories: kept.filter((t) => renumber.has(t.group)).map((t) => ({ ...t, group: renumber.get(t.group)! })), rounds, episodes };
}

/**
 * Plays again, with the sampler's weights of now, the episodes of trajectories that are too
 * stale to train on (async rollouts): the same task, group and sample, a seed of their own.
 */
export async function replay(config: TrainConfig, source: TaskSource, sampler: Sampler, step: number, stale: readonly Trajectory[], signal: AbortSignal, ranks?: Ranks): Promise<Trajectory[]> {
  const refs = new Map(source.train.map((ref) => [ref.id, ref]));
  const items = stale.map((t): RolloutItem => {
    const ref = refs.get(t.taskId);
    if (!ref) throw internalError(`replay: ${t.taskId} is not a training task`);
    return {
      taskId: ref.id,
      ...(ref.task ? { task: ref.task } : {}),
      group: t.group,
      sample: t.sample,
      seed: mixSeed(config.run.seed, step, 0x5ea1e, t.group, t.sample) * 1024,
      makeEnv: () => source.makeEnv(ref),
    };
  });
  const replayed = await play(items, sampler.policy, rolloutOptions(config, agentOptions(config, source)), { signal, weightVersion: () => sampler.version() }, ranks);
  // Gathered trajectories come back in (group, sample) order: put them in the order asked.
  const at = new Map(replayed.map((t) => [`${t.group}:${t.sample}`, t]));
  return stale.map((t) => at.get(`${t.group}:${t.sample}`)!);
}

/** Greedy success on the eval tasks (each run eval.samples times), or on `refs` (a curriculum's dev slice). */
export async function evaluate(config: TrainConfig, source: TaskSource, policy: AgentPolicy, signal: AbortSignal | undefined, ranks?: Ranks, refs: readonly TaskRef[] = source.evaluation): Promise<number> {
  const agent = agentOptions(config, source, { temperature: config.eval.temperature });
  const items = rolloutItems(config, source, refs, 0, 0xe7a1, config.eval.samples);
  const trajectories = await play(items, policy, rolloutOptions(config, agent), { ...(signal ? { signal } : {}) }, ranks);
  return mean(trajectories.map((t) => (t.reward > 0 ? 1 : 0)));
}
