/**
 * The async rollout pipeline on its own: a learner loop drives it the way train() does, with
 * random collection and learning times, and the batches are trajectories stamped with the
 * optimizer step of the weights that began them (what runRollouts records). The staleness
 * bound, the overlap it buys, the replay of stale trajectories, a stop and a failed batch.
 */
import t from 'tap';

import type { Trajectory } from '../../../lib/agent/trajectory.js';
import { AsyncRollouts, VersionClock, type Batch } from '../../../lib/train/async-rollouts.js';
import { mulberry32 } from '../../../lib/util/random.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function trajectory(taskId: string, group: number, sample: number, weightVersion: number): Trajectory {
  return {
    taskId, group, sample, weightVersion,
    tokens: new Int32Array(0), mask: new Uint8Array(0), logprobs: new Float32Array(0),
    promptTokens: 0, responseTokens: 0, turns: [], termination: 'submitted', reward: 0, rewardReason: '', attempts: 1,
    timings: { totalMs: 0, generateMs: 0, envMs: 0, rewardMs: 0 },
  } as Trajectory;
}

t.test('VersionClock: an optimizer step belongs to the last version marked at or before it', async (t) => {
  const clock = new VersionClock();
  clock.mark(3, 10);  // a resumed run: version 3 at optimizer step 10
  clock.mark(4, 12);
  clock.mark(5, 12);  // a step that took no optimizer step: the same weights, the newer version
  clock.mark(6, 15);
  t.equal(clock.versionOf(10), 3);
  t.equal(clock.versionOf(11), 3, 'weights between two versions count as the older');
  t.equal(clock.versionOf(12), 5);
  t.equal(clock.versionOf(14), 5);
  t.equal(clock.versionOf(99), 6);
  t.equal(clock.versionOf(2), 3, 'before the first mark: its version');
  t.throws(() => clock.mark(6, 16), /version 6 .* follows version 6/);
  t.throws(() => clock.mark(7, 14), /optimizer step 14 follows/);
});

/**
 * A run of `steps` steps with maxStaleness k: each batch's trajectories are stamped with the
 * learner's optimizer step as they start (some start while the learner is mid-step); learning
 * takes `optimizerSteps` steps, each a random while.
 */
async function simulate(k: number, steps: number, seed: number) {
  const random = mulberry32(seed);
  const clock = new VersionClock();
  let optimizerStep = 0;
  let version = 0;
  clock.mark(0, 0);
  const startedAt = new Map<number, number>();
  /** Steps whose batch was (partly) collected while the learner trained. */
  const overlapped = new Set<number>();
  let learning: number | null = null;
  const pipeline = new AsyncRollouts({
    maxStaleness: k,
    version: 0,
    lastStep: steps,
    clock,
    collect: async (step): Promise<Batch> => {
      startedAt.set(step, version);
      const out: Trajectory[] = [];
      for (let g = 0; g < 3; g++) {
        await sleep(random() * 4);
        out.push(trajectory(`task-${g}`, g, 0, optimizerStep));
        if (learning !== null) overlapped.add(step);
      }
      return { trajectories: out, rounds: 1, episodes: out.length };
    },
    replay: async () => {
      throw new Error('nothing is stale on this schedule');
    },
  });
  const taken = [];
  for (let step = 1; step <= steps; step++) {
    const batch = await pipeline.take(step);
    taken.push(batch);
    learning = step;
    for (let i = 0; i < 2; i++) {
      await sleep(random() * 4);
      optimizerStep++;
    }
    learning = null;
    version = step;
    clock.mark(step, optimizerStep);
    pipeline.advance(step);
  }
  await pipeline.close();
  return { taken, startedAt, overlapped };
}

t.test('staleness never exceeds k, and batches run ahead of the learner only as far as k allows', async (t) => {
  for (const k of [0, 1, 2, 3]) {
    for (const seed of [1, 2]) {
      const { taken, startedAt, overlapped } = await simulate(k, 8, seed * 31 + k);
      const worst = Math.max(...taken.map((b) => b.staleness.max));
      t.ok(worst <= k, `k = ${k}, seed ${seed}: the stalest trajectory is ${worst} versions behind`);
      t.same(taken.map((b) => b.dropped), taken.map(() => 0), 'nothing dropped on the schedule');
      for (const [step, at] of startedAt) t.ok(at >= step - 1 - k, `k = ${k}: step ${step}'s batch began at version ${at}`);
      if (k === 0) t.equal(overlapped.size, 0, 'k = 0: no batch is collected while the learner trains (the sync schedule)');
      else t.ok(overlapped.size >= 5, `k = ${k}: ${overlapped.size} of 8 batches were collected while the learner trained`);
      if (k >= 1) t.ok(worst >= 1, 'with k >= 1 some trajectories are really behind');
    }
  }
});

t.test('trajectories older than k are dropped and played again with the weights of now; counted', async (t) => {
  const clock = new VersionClock();
  clock.mark(0, 0);
  let optimizerStep = 0;
  const replayed: Trajectory[][] = [];
  const pipeline = new AsyncRollouts({
    maxStaleness: 1,
    version: 0,
    lastStep: 3,
    clock,
    // A batch that reuses two trajectories from version 0 (a cache, say): stale by step 3.
    collect: async () => ({ trajectories: [trajectory('a', 0, 0, 0), trajectory('a', 0, 1, optimizerStep), trajectory('b', 1, 0, 0)], rounds: 1, episodes: 3 }),
    replay: async (step, stale) => {
      replayed.push(stale);
      return stale.map((s) => trajectory(s.taskId, s.group, s.sample, optimizerStep));
    },
  });
  for (let step = 1; step <= 3; step++) {
    const batch = await pipeline.take(step);
    if (step < 3) {
      t.equal(batch.dropped, 0, `step ${step}: nothing is more than 1 behind yet`);
      t.equal(batch.episodes, 3, `step ${step}: the episodes played are the batch's`);
    }
    else {
      t.equal(batch.dropped, 2, 'step 3: the two version-0 trajectories are 2 behind: dropped');
      t.same(replayed.at(-1)!.map((s) => [s.taskId, s.sample]), [['a', 0], ['b', 0]], 'their episodes are played again');
      t.same(batch.trajectories.map((s) => [s.taskId, s.group, s.sample]), [['a', 0, 0], ['a', 0, 1], ['b', 1, 0]], 'in their places');
      t.equal(batch.episodes, 5, 'the episodes played: the batch\'s 3 and the 2 replayed');
      t.ok(batch.staleness.max <= 1, 'what is trained on is within the bound');
    }
    optimizerStep += 3;
    clock.mark(step, optimizerStep);
    pipeline.advance(step);
  }
  await pipeline.close();
});

t.test('a stop aborts the batch in flight; close() waits for it to end', async (t) => {
  const stop = new AbortController();
  let ended = false;
  const clock = new VersionClock();
  clock.mark(0, 0);
  const pipeline = new AsyncRollouts({
    maxStaleness: 1,
    version: 0,
    lastStep: 10,
    clock,
    signal: stop.signal,
    collect: (_, signal) =>
      new Promise<Batch>((_resolve, reject) => {
        const end = () => setTimeout(() => {
          ended = true;  // envs closed
          reject(new Error('the rollouts were stopped'));
        }, 20);
        if (signal.aborted) end();
        else signal.addEventListener('abort', end);
      }),
    replay: async () => [],
  });
  const taking = pipeline.take(1);
  await sleep(5);  // the batch is running
  stop.abort();
  await t.rejects(taking, /stopped/);
  await pipeline.close();
  t.ok(ended, 'close() resolved after the batch ended');
});

t.test('a failed batch fails its step, and no later batch starts', async (t) => {
  const clock = new VersionClock();
  clock.mark(0, 0);
  const started: number[] = [];
  const pipeline = new AsyncRollouts({
    maxStaleness: 2,
    version: 0,
    lastStep: 5,
    clock,
    collect: async (step) => {
      started.push(step);
      if (step === 1) throw new Error('a sandbox backend went away');
      return { trajectories: [], rounds: 1, episodes: 0 };
    },
    replay: async () => [],
  });
  await t.rejects(pipeline.take(1), /backend went away/);
  await pipeline.close();
  t.same(started, [1], 'steps 2 and 3 were allowed to start but never did');
});

t.test('take() out of order is a bug, said so', async (t) => {
  const clock = new VersionClock();
  clock.mark(0, 0);
  const pipeline = new AsyncRollouts({ maxStaleness: 1, version: 0, lastStep: 3, clock, collect: async () => ({ trajectories: [], rounds: 1, episodes: 0 }), replay: async () => [] });
  await t.rejects(pipeline.take(2), /step 2 taken at version 0/);
  await pipeline.take(1);
  await pipeline.close();
});
