/**
 * Rejection sampling's draws: what RFT fine-tunes on. Round 0 plays every task `samples` times;
 * each of `extraRounds` later rounds plays again, `samples` times, every task none of whose
 * episodes has resolved yet.
 *
 * Why the extra rounds: one round gives a task the policy already solves as many resolved
 * episodes as it has samples and a hard one few or none, so the fine-tuning data leans to what
 * the policy does well. Spending the extra samples on the tasks still unresolved brings the hard
 * ones into the data (DART's difficulty-aware rejection sampling, Tong et al. 2024, samples a
 * query until it has a correct answer in the same spirit), at the cost of those tasks' samples
 * alone.
 */
import type { Trajectory } from '../../agent/trajectory.js';
import { invalidArg } from '../../errors.js';
import { integerAtLeast } from '../../math/validate.js';

/** One episode to play: the task, its index among the tasks (its group), and its sample index across rounds. */
export interface Draw<T> {
  task: T;
  group: number;
  sample: number;
}

export interface SamplingRound {
  /** Tasks played this round. */
  tasks: number;
  sampled: number;
  /** Episodes of this round that resolved (reward 1). */
  resolved: number;
  /** Tasks whose first resolved episode came this round. */
  newlySolved: number;
}

export interface RejectionSamples {
  trajectories: Trajectory[];
  rounds: SamplingRound[];
}

export interface SamplingOptions {
  /** Episodes of each task a round (>= 1). */
  samples: number;
  /** Rounds after the first, each on the tasks still unresolved (>= 0; 0 is one round). */
  extraRounds: number;
}

/**
 * Plays `tasks` by rounds through `play` (which returns a trajectory for each draw, the draw's
 * task id as its taskId), and returns every trajectory with each round's counts. A draw's sample
 * index runs on across rounds (round r's are r x samples to r x samples + samples - 1), so
 * a seed made from (group, sample) gives every episode its own.
 */
export async function sampleUntilResolved<T extends { id: string }>(
  tasks: readonly T[],
  options: SamplingOptions,
  play: (draws: Draw<T>[]) => Promise<Trajectory[]>,
): Promise<RejectionSamples> {
  const samples = integerAtLeast(options.samples, 'samples', 1);
  const extraRounds = integerAtLeast(options.extraRounds, 'extraRounds', 0);
  const ids = new Set<string>();
  for (const [i, task] of tasks.entries()) {
    if (ids.has(task.id)) throw invalidArg(`tasks[${i}].id`, `is ${JSON.stringify(task.id)}, as an earlier task's`, 'give each task once');
    ids.add(task.id);
  }
  const solved = new Set<string>();
  const trajectories: Trajectory[] = [];
  const rounds: SamplingRound[] = [];
  for (let round = 0; round <= extraRounds; round++) {
    const open = tasks.flatMap((task, group) => (solved.has(task.id) ? [] : [{ task, group }]));
    if (open.length === 0) break;
    const draws = open.flatMap(({ task, group }) => Array.from({ length: samples }, (_, s) => ({ task, group, sample: round * samples + s })));
    const played = await play(draws);
    if (played.length !== draws.length) throw invalidArg('play', `returned ${played.length} trajectories for ${draws.length} draws`, 'return one trajectory a draw');
    const before = solved.size;
    let resolved = 0;
    for (const t of played) {
      if (!ids.has(t.taskId)) throw invalidArg('play', `returned a trajectory of task ${JSON.stringify(t.taskId)}, which is not one of the tasks`, "set each trajectory's taskId to its draw's task id");
      if (t.reward !== 1) continue;
      resolved++;
      solved.add(t.taskId);
    }
    trajectories.push(...played);
    rounds.push({ tasks: open.length, sampled: played.length, resolved, newlySolved: solved.size - before });
  }
  return { trajectories, rounds };
}
