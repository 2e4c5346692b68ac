import t, { type Test } from 'tap';

import type { Trajectory } from '../../../lib/agent/trajectory.js';
import type { TerminationReason } from '../../../lib/types/termination.js';
import { PRESETS, type AlgorithmConfig, type AlgorithmPreset } from '../../../lib/train/algorithms.js';
import { miniBatches, shapeBatch, solveCounts, type MiniBatch, type ShapedBatch } from '../../../lib/train/batch.js';
import { maxRelativeError } from '../../reference/compare.js';
import { Rng, testSeed } from '../../reference/random.js';

const seed = testSeed();
t.comment(`seed ${seed} (replay with SWERL_TEST_SEED=${seed})`);
const rng = new Rng(seed);

// ---------------------------------------------------------------------------------------
// Trajectories by hand

interface Spec {
  group: number;
  sample?: number;
  reward: number;
  termination?: TerminationReason;
  length: number;
  /** [start, end) ranges of sampled tokens. */
  sampled: [number, number][];
  turns?: number;
  responseTokens?: number;
  goldSimilarity?: number;
  /** The graded patch ('' when the episode changed no file; absent when never graded). */
  patch?: string;
}

function trajectory(spec: Spec): Trajectory {
  const tokens = Int32Array.from({ length: spec.length }, (_, i) => (i * 37 + spec.group) % 250);
  const mask = new Uint8Array(spec.length);
  const logprobs = new Float32Array(spec.length);
  for (const [a, b] of spec.sampled) {
    for (let i = a; i < b; i++) {
      mask[i] = 1;
      logprobs[i] = -0.5 - i / 1024;
    }
  }
  const promptTokens = Math.max(1, spec.sampled[0]?.[0] ?? 1);
  return {
    taskId: `task-${spec.group}`,
    group: spec.group,
    sample: spec.sample ?? 0,
    tokens,
    mask,
    logprobs,
    promptTokens,
    responseTokens: spec.responseTokens ?? spec.length - promptTokens,
    turns: Array.from({ length: spec.turns ?? 1 }, () => ({
      contextTokens: 0,
      responseTokens: 0,
      finishReason: 'stop' as const,
      response: '',
      observation: '',
      observationTokens: 0,
      generateMs: 0,
      stepMs: 0,
    })),
    termination: spec.termination ?? 'submitted',
    reward: spec.reward,
    rewardReason: '',
    attempts: 1,
    weightVersion: 0,
    timings: { totalMs: 0, generateMs: 0, envMs: 0, rewardMs: 0 },
    ...(spec.goldSimilarity !== undefined ? { goldSimilarity: spec.goldSimilarity } : {}),
    ...(spec.patch !== undefined ? { patch: spec.patch } : {}),
  };
}

function algorithm(preset: AlgorithmPreset, overrides: Partial<AlgorithmConfig> = {}): AlgorithmConfig {
  return { preset, ...structuredClone(PRESETS[preset]), normLength: 64, ...overrides };
}

// ---------------------------------------------------------------------------------------
// An independent float64 reference of the whole pipeline (docs/loss.md)

const COMPACT_FILTERED = new Set<TerminationReason>(['max_context', 'max_steps', 'timeout']);

function referenceAdvantages(rewards: number[], groups: number[], estimator: string): number[] {
  return rewards.map((r, i) => {
    const members = rewards.filter((_, j) => groups[j] === groups[i]);
    const n = members.length;
    if (n === 1) return 0;
    const sum = members.reduce((a, b) => a + b, 0);
    const mean = sum / n;
    if (estimator === 'rloo') return r - (sum - r) / (n - 1);
    if (estimator === 'drgrpo') return r - mean;
    if (estimator === 'maxrl') return mean > 0 ? (r - mean) / mean : 0;
    const std = Math.sqrt(members.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1));
    return (r - mean) / (std + 1e-6);
  });
}

interface Reference {
  rewards: number[];
  advantages: number[];
  filtered: number[];
  kept: number[];
  masks: Uint8Array[];
}

function reference(trajectories: Trajectory[], alg: AlgorithmConfig): Reference {
  const filtered = trajectories.map((x) => (alg.truncation === 'mask' && COMPACT_FILTERED.has(x.termination) ? 1 : 0));
  // An unresolved episode: -emptyPatchPenalty when its graded patch is empty, else partialCredit
  // x its gold similarity (0 when ungraded).
  const unresolved = (x: Trajectory) => (alg.emptyPatchPenalty > 0 && x.patch === '' ? -alg.emptyPatchPenalty : alg.partialCredit * (x.goldSimilarity ?? 0));
  let rewards = trajectories.map((x, i) => (filtered[i] ? 0 : x.reward === 1 ? 1 : unresolved(x)));
  if (alg.truncation === 'penalize') {
    const { threshold, maxTurns } = alg.turnPenalty;
    rewards = rewards.map((r, i) => {
      const turns = trajectories[i]!.turns.length;
      return r + (turns < threshold ? 0 : (threshold - turns) / (maxTurns - threshold));
    });
  }
  if (alg.overlong) {
    const { maxLength, bufferLength } = alg.overlong;
    rewards = rewards.map((r, i) => {
      if (filtered[i]) return 0; // compact filtering: reward 0 whatever else applies
      const y = trajectories[i]!.responseTokens;
      const soft = maxLength - bufferLength;
      return r + (y <= soft ? 0 : y <= maxLength ? (soft - y) / bufferLength : -1);
    });
  }
  rewards = rewards.map(Math.fround); // the pipeline's rewards are float32
  const groups = trajectories.map((x) => x.group);
  const advantages = referenceAdvantages(rewards, groups, alg.estimator).map((a) => (a < 0 ? a * alg.negativeScale : a));
  let kept = trajectories.map(() => 1);
  if (alg.groupFilter === 'informative') kept = groups.map((g) => (new Set(rewards.filter((_, j) => groups[j] === g)).size > 1 ? 1 : 0));
  if (alg.groupFilter === 'nonzero-advantage') kept = advantages.map((a) => (a !== 0 ? 1 : 0));
  const masks = trajectories.map((x, i) => (filtered[i] ? new Uint8Array(x.mask.length) : x.mask));
  return { rewards, advantages, filtered, kept, masks };
}

interface ReferenceBatch {
  /** Every kept trajectory of the mini-batch (B of them), in order. */
  chunk: number[];
  /** Those with something to train. */
  indexes: number[];
  weights: Map<number, Float64Array>;
  lossTokens: number;
}

/** Near-equal contiguous chunks of the kept order (sizes differ by at most one, larger first). */
function referenceMiniBatches(trajectories: Trajectory[], ref: Reference, advantages: ArrayLike<number>, alg: AlgorithmConfig, order: number[], count: number): ReferenceBatch[] {
  const keptOrder = order.filter((i) => ref.kept[i] === 1);
  const parts = Math.min(count, keptOrder.length);
  const out: ReferenceBatch[] = [];
  let start = 0;
  for (let k = 0; k < parts; k++) {
    const size = Math.floor(keptOrder.length / parts) + (k < keptOrder.length % parts ? 1 : 0);
    const chunk = keptOrder.slice(start, start + size);
    start += size;
    const B = chunk.length;
    const n = new Map(chunk.map((i) => [i, ref.masks[i]!.reduce((a, b) => a + b, 0)]));
    const total = [...n.values()].reduce((a, b) => a + b, 0);
    const weights = new Map<number, Float64Array>();
    for (const i of chunk) {
      weights.set(
        i,
        Float64Array.from(ref.masks[i]!, (m) => {
          if (!m) return 0;
          if (alg.aggregation === 'token-mean') return 1 / total;
          if (alg.aggregation === 'seq-mean-token-mean') return 1 / (B * n.get(i)!);
          return 1 / (B * alg.normLength!);
        }),
      );
    }
    const onlyPolicyGradient = alg.entropyCoef === 0 && alg.kl === null;
    const indexes = chunk.filter((i) => n.get(i)! > 0 && !(onlyPolicyGradient && advantages[i] === 0));
    if (indexes.length > 0) out.push({ chunk, indexes, weights, lossTokens: indexes.reduce((s, i) => s + n.get(i)!, 0) });
  }
  return out;
}

function sumOf(values: ArrayLike<number>): number {
  let total = 0;
  for (let i = 0; i < values.length; i++) total += values[i]!;
  return total;
}

function close(actual: ArrayLike<number>, expected: ArrayLike<number>, tolerance = 1e-6, floor = 1e-3): boolean {
  return maxRelativeError(actual, expected, floor) <= tolerance;
}

function checkShaped(t: Test, shaped: ShapedBatch, ref: Reference, label: string): void {
  // Rewards and advantages are float32 sums of terms of order 1 (partial credit, penalties, group
  // means): a result near 0 keeps the absolute error of its terms, so the floor is 1.
  t.ok(close(shaped.rewards, ref.rewards, 1e-6, 1), `${label}: rewards ${Array.from(shaped.rewards)} vs ${ref.rewards}`);
  t.ok(close(shaped.advantages, ref.advantages, 1e-5, 1), `${label}: advantages ${Array.from(shaped.advantages)} vs ${ref.advantages}`);
  t.same(Array.from(shaped.filtered), ref.filtered, `${label}: filtered`);
  t.same(Array.from(shaped.kept), ref.kept, `${label}: kept`);
  t.same(shaped.masks.map((m) => Array.from(m)), ref.masks.map((m) => Array.from(m)), `${label}: masks`);
}

function checkMiniBatches(t: Test, trajectories: Trajectory[], batches: MiniBatch[], expected: ReferenceBatch[], shaped: ShapedBatch, label: string): void {
  t.same(batches.map((b) => b.indexes), expected.map((b) => b.indexes), `${label}: mini-batch membership`);
  t.same(batches.map((b) => b.lossTokens), expected.map((b) => b.lossTokens), `${label}: lossTokens`);
  batches.forEach((batch, k) => {
    batch.sequences.forEach((s, j) => {
      const i = batch.indexes[j]!;
      t.equal(s.tokens, trajectories[i]!.tokens, `${label}: tokens of ${i}`);
      t.equal(s.oldLogprobs, trajectories[i]!.logprobs, `${label}: oldLogprobs of ${i}`);
      t.equal(s.advantage, shaped.advantages[i], `${label}: advantage of ${i}`);
      const w = Array.from(s.weights);
      if (!close(w, expected[k]!.weights.get(i)!)) t.fail(`${label}: weights of ${i}: ${w} vs ${Array.from(expected[k]!.weights.get(i)!)}`);
      if (w[0] !== 0) t.fail(`${label}: weight at position 0 of ${i}`);
      const mask = shaped.masks[i]!;
      if (w.some((x, p) => (x > 0) !== (mask[p] === 1))) t.fail(`${label}: weights of ${i} not exactly on the mask`);
    });
  });
}

// ---------------------------------------------------------------------------------------

/** Two groups of four, every termination reason. */
function mixedBatch(): Trajectory[] {
  return [
    trajectory({ group: 0, sample: 0, reward: 1, termination: 'submitted', length: 20, sampled: [[5, 15]] }),
    trajectory({ group: 0, sample: 1, reward: 1, termination: 'max_context', length: 30, sampled: [[5, 28]] }),
    trajectory({ group: 0, sample: 2, reward: 0, termination: 'submitted', length: 12, sampled: [[6, 10]] }),
    trajectory({ group: 0, sample: 3, reward: 1, termination: 'timeout', length: 25, sampled: [[5, 9], [15, 20]] }),
    trajectory({ group: 1, sample: 0, reward: 0, termination: 'max_steps', length: 18, sampled: [[4, 18]] }),
    trajectory({ group: 1, sample: 1, reward: 1, termination: 'env_timeout', length: 16, sampled: [[3, 8]] }),
    trajectory({ group: 1, sample: 2, reward: 1, termination: 'submitted', length: 22, sampled: [[3, 7], [10, 22]] }),
    trajectory({ group: 1, sample: 3, reward: 0, termination: 'error', length: 9, sampled: [[2, 5]] }),
  ];
}

t.test('grpo++: compact filtering, leave-one-out advantages, seq-mean-token-sum-norm', async (t) => {
  const batch = mixedBatch();
  const alg = algorithm('grpo++');
  const shaped = shapeBatch(batch, alg);
  // max_context / timeout / max_steps: reward 0 (even the graded 1s), every token masked; env_timeout and error are kept.
  t.same(Array.from(shaped.rewards), [1, 0, 0, 0, 0, 1, 1, 0]);
  t.same(Array.from(shaped.filtered), [0, 1, 0, 1, 1, 0, 0, 0]);
  t.same(Array.from(shaped.kept), [1, 1, 1, 1, 1, 1, 1, 1]);
  // Leave-one-out with the filtered ones counted as 0: group 0 [1,0,0,0], group 1 [0,1,1,0].
  t.ok(close(shaped.advantages, [1, -1 / 3, -1 / 3, -1 / 3, -2 / 3, 2 / 3, 2 / 3, -2 / 3]), `advantages ${Array.from(shaped.advantages)}`);
  t.same(shaped.masks.map((m) => m.reduce((a, b) => a + b, 0)), [10, 0, 4, 0, 0, 5, 16, 3]);
  t.same(Array.from(batch[1]!.mask.subarray(5, 28)), new Array(23).fill(1), 'the trajectory itself is not changed');
  checkShaped(t, shaped, reference(batch, alg), 'grpo++');

  // Two mini-batches: [7, 3, 0, 5] and [1, 6, 2, 4], B = 4 each (filtered ones count), L = 64.
  const order = [7, 3, 0, 5, 1, 6, 2, 4];
  const batches = miniBatches(batch, shaped, alg, order, 2);
  t.same(batches.map((b) => b.indexes), [[7, 0, 5], [6, 2]], 'filtered trajectories have nothing to train and are left out');
  t.same(batches.map((b) => b.lossTokens), [3 + 10 + 5, 16 + 4]);
  for (const b of batches) {
    for (const s of b.sequences) {
      const positive = Array.from(s.weights).filter((w) => w > 0);
      t.ok(positive.every((w) => w === Math.fround(1 / (4 * 64))), 'every trained token weighs 1 / (B L)');
    }
  }
  const sums = batches.map((b) => b.sequences.reduce((s, q) => s + sumOf(q.weights), 0));
  t.ok(close(sums, [18 / 256, 20 / 256]), `weights sum to sum(n_i) / (B L): ${sums}`);
  t.same(batches[0]!.sequences.map((s) => s.advantage), [shaped.advantages[7], shaped.advantages[0], shaped.advantages[5]]);
  checkMiniBatches(t, batch, batches, referenceMiniBatches(batch, reference(batch, alg), shaped.advantages, alg, order, 2), shaped, 'grpo++');

  // One mini-batch: B = 8.
  const one = miniBatches(batch, shaped, alg, order, 1);
  t.same(one.map((b) => b.indexes), [[7, 0, 5, 6, 2]]);
  t.ok(close([one[0]!.sequences[0]!.weights[2]!], [1 / (8 * 64)]));
});

t.test('partial credit: an unresolved episode earns partialCredit x its similarity to the gold patch', async (t) => {
  const batch = [
    trajectory({ group: 0, sample: 0, reward: 1, goldSimilarity: 0.7, length: 10, sampled: [[2, 8]] }),
    trajectory({ group: 0, sample: 1, reward: 0, goldSimilarity: 0.8, length: 10, sampled: [[2, 8]] }),
    trajectory({ group: 0, sample: 2, reward: 0, length: 10, sampled: [[2, 8]], termination: 'error' }),
    trajectory({ group: 0, sample: 3, reward: 0, goldSimilarity: 0.9, length: 10, sampled: [[2, 8]], termination: 'max_steps' }),
    trajectory({ group: 1, sample: 0, reward: 0, goldSimilarity: 0.5, length: 10, sampled: [[2, 8]] }),
    trajectory({ group: 1, sample: 1, reward: 0, goldSimilarity: 0, length: 10, sampled: [[2, 8]] }),
  ];
  const alg = algorithm('grpo++', { partialCredit: 0.5, groupFilter: 'informative' });
  const shaped = shapeBatch(batch, alg);
  // A resolved episode keeps 1 (not its similarity); an ungraded one gets 0; compact filtering still zeroes.
  t.ok(close(shaped.rewards, [1, 0.4, 0, 0, 0.25, 0]), `rewards ${Array.from(shaped.rewards)}`);
  t.same(Array.from(shaped.kept), [1, 1, 1, 1, 1, 1], 'a group whose samples all failed is informative when their patches differ');
  t.ok(close(shaped.advantages, [1 - 0.4 / 3, 0.4 - 1 / 3, -1.4 / 3, -1.4 / 3, 0.25, -0.25]), `advantages ${Array.from(shaped.advantages)}`);
  checkShaped(t, shaped, reference(batch, alg), 'partial credit');
  t.same(Array.from(shapeBatch(batch, algorithm('grpo++', { groupFilter: 'informative' })).kept), [1, 1, 1, 1, 0, 0], 'without it, the failed group teaches nothing');
});

t.test('emptyPatchPenalty: an unresolved episode that changed no file earns -penalty', async (t) => {
  const batch = [
    trajectory({ group: 0, sample: 0, reward: 1, patch: '+fix', length: 10, sampled: [[2, 8]] }),
    trajectory({ group: 0, sample: 1, reward: 0, patch: '', length: 10, sampled: [[2, 8]] }),
    trajectory({ group: 0, sample: 2, reward: 0, length: 10, sampled: [[2, 8]], termination: 'error' }),
    trajectory({ group: 0, sample: 3, reward: 0, patch: '', length: 10, sampled: [[2, 8]], termination: 'max_steps' }),
    // A group whose samples all failed: two made an edit, two submitted nothing.
    trajectory({ group: 1, sample: 0, reward: 0, patch: '+wrong', goldSimilarity: 0.6, length: 10, sampled: [[2, 8]] }),
    trajectory({ group: 1, sample: 1, reward: 0, patch: '', length: 10, sampled: [[2, 8]] }),
    trajectory({ group: 1, sample: 2, reward: 0, patch: '+other', goldSimilarity: 0.2, length: 10, sampled: [[2, 8]] }),
    trajectory({ group: 1, sample: 3, reward: 0, patch: '', length: 10, sampled: [[2, 8]] }),
  ];
  const alg = algorithm('grpo++', { emptyPatchPenalty: 0.5, groupFilter: 'informative' });
  const shaped = shapeBatch(batch, alg);
  // An ungraded episode (no patch) keeps 0; compact filtering still zeroes an empty one.
  t.ok(close(shaped.rewards, [1, -0.5, 0, 0, 0, -0.5, 0, -0.5]), `rewards ${Array.from(shaped.rewards)}`);
  t.same(Array.from(shaped.kept), [1, 1, 1, 1, 1, 1, 1, 1], 'a group whose samples all failed is informative when some changed nothing');
  // RLOO: each sample against the mean of the other three.
  t.ok(close(shaped.advantages, [1 + 0.5 / 3, -0.5 - 1 / 3, -0.5 / 3, -0.5 / 3, 1 / 3, -1 / 3, 1 / 3, -1 / 3]), `advantages ${Array.from(shaped.advantages)}`);
  checkShaped(t, shaped, reference(batch, alg), 'empty-patch penalty');
  t.same(Array.from(shapeBatch(batch, algorithm('grpo++', { groupFilter: 'informative' })).kept), [1, 1, 1, 1, 0, 0, 0, 0], 'without it, the failed group teaches nothing');
  // With partial credit too: an empty patch takes the penalty, an edit its credit.
  const both = algorithm('grpo++', { emptyPatchPenalty: 0.25, partialCredit: 0.5 });
  t.ok(close(shapeBatch(batch, both).rewards.subarray(4), [0.3, -0.25, 0.1, -0.25]), 'beside partial credit');
  checkShaped(t, shapeBatch(batch, both), reference(batch, both), 'empty-patch penalty and partial credit');
});

t.test('negativeScale scales the pushes against worse samples and keeps the others', async (t) => {
  const batch = mixedBatch();
  const full = shapeBatch(batch, algorithm('grpo++'));
  for (const scale of [0, 0.25]) {
    const alg = algorithm('grpo++', { negativeScale: scale });
    const scaled = shapeBatch(batch, alg);
    t.same(Array.from(scaled.rewards), Array.from(full.rewards), `${scale}: rewards unchanged`);
    t.same(Array.from(scaled.advantages), Array.from(full.advantages, (a) => (a < 0 ? Math.fround(a * scale) : a)), `${scale}: advantages ${Array.from(scaled.advantages)}`);
    checkShaped(t, scaled, reference(batch, alg), `negativeScale ${scale}`);
  }
  const positiveOnly = algorithm('grpo++', { negativeScale: 0 });
  const batches = miniBatches(batch, shapeBatch(batch, positiveOnly), positiveOnly, [0, 1, 2, 3, 4, 5, 6, 7], 1);
  t.same(batches.map((b) => b.indexes), [[0, 5, 6]], 'at 0, only the samples that beat their baseline reach the loss');
});

t.test('the split is near-equal and covers every kept trajectory once', async (t) => {
  const batch = mixedBatch();
  // An entropy bonus keeps zero-advantage sequences; truncation 'none' keeps every mask.
  const alg = algorithm('grpo++', { truncation: 'none', entropyCoef: 0.01 });
  const shaped = shapeBatch(batch, alg);
  const order = [3, 6, 0, 1, 7, 4, 2, 5];
  for (const [count, sizes] of [[1, [8]], [2, [4, 4]], [3, [3, 3, 2]], [5, [2, 2, 2, 1, 1]], [8, [1, 1, 1, 1, 1, 1, 1, 1]], [20, [1, 1, 1, 1, 1, 1, 1, 1]]] as const) {
    const batches = miniBatches(batch, shaped, alg, order, count);
    t.same(batches.map((b) => b.indexes.length), sizes, `${count} mini-batches of 8: sizes`);
    t.same(batches.flatMap((b) => b.indexes), order, `${count}: every trajectory once, in order`);
    batches.forEach((b) => {
      const B = b.indexes.length;
      const sum = b.sequences.reduce((s, q) => s + sumOf(q.weights), 0);
      const n = b.indexes.reduce((s, i) => s + shaped.masks[i]!.reduce((a, m) => a + m, 0), 0);
      t.ok(close([sum], [n / (B * 64)]), `${count}: sum of weights`);
    });
  }
});

t.test("'penalize' (Nebius): turn penalty, grpo advantages, nonzero-advantage filter, token-mean", async (t) => {
  const batch = [
    trajectory({ group: 0, reward: 1, turns: 3, length: 20, sampled: [[4, 12]] }),
    trajectory({ group: 0, reward: 1, turns: 25, length: 30, sampled: [[4, 30]] }),
    trajectory({ group: 0, reward: 0, turns: 10, termination: 'max_steps', length: 15, sampled: [[5, 10]] }),
    trajectory({ group: 0, reward: 0, turns: 40, termination: 'max_context', length: 40, sampled: [[2, 40]] }),
    trajectory({ group: 1, reward: 0, turns: 2, length: 10, sampled: [[3, 6]] }),
    trajectory({ group: 1, reward: 0, turns: 5, length: 10, sampled: [[3, 6]] }),
    trajectory({ group: 1, reward: 0, turns: 9, length: 10, sampled: [[3, 6]] }),
    trajectory({ group: 2, reward: 1, turns: 12, length: 14, sampled: [[2, 9]] }),
    trajectory({ group: 2, reward: 0, turns: 12, length: 14, sampled: [[2, 13]] }),
  ];
  const alg = algorithm('nebius');
  t.equal(alg.truncation, 'penalize');
  const shaped = shapeBatch(batch, alg);
  // Penalty (10 - turns) / 30 from 10 turns on: 25 -> -0.5, 40 -> -1, 12 -> -1/15.
  t.ok(close(shaped.rewards, [1, 0.5, 0, -1, 0, 0, 0, 14 / 15, -1 / 15]), `rewards ${Array.from(shaped.rewards)}`);
  t.same(Array.from(shaped.filtered), [0, 0, 0, 0, 0, 0, 0, 0, 0], 'nothing is masked');
  t.same(shaped.masks.map((m, i) => m === batch[i]!.mask || Array.from(m).join() === Array.from(batch[i]!.mask).join()), new Array(9).fill(true));
  // grpo: group 0 mean 1/8, std (Bessel) sqrt(2.1875 / 3); group 1 all equal; group 2 +-1/sqrt(2).
  const std0 = Math.sqrt(2.1875 / 3);
  const a0 = [0.875, 0.375, -0.125, -1.125].map((d) => d / (std0 + 1e-6));
  const a2 = 0.5 / (Math.SQRT1_2 + 1e-6);
  t.ok(close(shaped.advantages, [...a0, 0, 0, 0, a2, -a2], 1e-5), `advantages ${Array.from(shaped.advantages)}`);
  t.same(Array.from(shaped.kept), [1, 1, 1, 1, 0, 0, 0, 1, 1], 'zero-advantage samples dropped');
  checkShaped(t, shaped, reference(batch, alg), 'nebius');

  const order = [0, 1, 2, 3, 4, 5, 6, 7, 8];
  const [only, ...rest] = miniBatches(batch, shaped, alg, order, 1);
  t.same(rest, []);
  t.same(only!.indexes, [0, 1, 2, 3, 7, 8]);
  const total = 8 + 26 + 5 + 38 + 7 + 11;
  t.equal(only!.lossTokens, total);
  const sum = only!.sequences.reduce((s, q) => s + sumOf(q.weights), 0);
  t.ok(Math.abs(sum - 1) < 1e-5, `token-mean weights sum to 1 (${sum})`);
  t.ok(only!.sequences.every((s) => Array.from(s.weights).every((w) => w === 0 || w === Math.fround(1 / total))), 'every token weighs 1 / sum(m)');
  checkMiniBatches(t, batch, [only!], referenceMiniBatches(batch, reference(batch, alg), shaped.advantages, alg, order, 1), shaped, 'nebius');
});

t.test("DAPO: overlong penalty, 'informative' groups, token-mean", async (t) => {
  const batch = [
    trajectory({ group: 0, reward: 1, responseTokens: 10, length: 12, sampled: [[2, 12]] }),
    trajectory({ group: 0, reward: 0, responseTokens: 17, length: 19, sampled: [[2, 19]] }),
    trajectory({ group: 0, reward: 1, responseTokens: 25, length: 27, sampled: [[2, 27]] }),
    trajectory({ group: 1, reward: 1, responseTokens: 12, length: 14, sampled: [[2, 14]] }),
    trajectory({ group: 1, reward: 1, responseTokens: 12, length: 14, sampled: [[2, 14]] }),
    trajectory({ group: 1, reward: 1, responseTokens: 15, length: 17, sampled: [[2, 17]] }),
    trajectory({ group: 2, reward: 0, responseTokens: 21, length: 23, sampled: [[2, 23]] }),
    trajectory({ group: 2, reward: 0, responseTokens: 30, length: 32, sampled: [[2, 32]] }),
    trajectory({ group: 3, reward: 0, responseTokens: 16, length: 18, sampled: [[2, 18]] }),
    trajectory({ group: 3, reward: 1, responseTokens: 20, length: 22, sampled: [[2, 22]] }),
  ];
  const alg = algorithm('dapo', { overlong: { maxLength: 20, bufferLength: 5 } });
  const shaped = shapeBatch(batch, alg);
  // Soft from 15: 17 -> -0.4, 16 -> -0.2, 20 -> -1 (at maxLength), beyond -> -1.
  t.ok(close(shaped.rewards, [1, -0.4, 0, 1, 1, 1, -1, -1, -0.2, 0]), `rewards ${Array.from(shaped.rewards)}`);
  t.same(Array.from(shaped.kept), [1, 1, 1, 0, 0, 0, 0, 0, 1, 1], 'groups whose rewards are all equal are dropped');
  checkShaped(t, shaped, reference(batch, alg), 'dapo');
  const order = [9, 2, 4, 0, 7, 8, 1, 3, 5, 6];
  const batches = miniBatches(batch, shaped, alg, order, 2);
  t.same(batches.map((b) => b.indexes), [[9, 2, 0], [8, 1]]);
  for (const b of batches) {
    const sum = b.sequences.reduce((s, q) => s + sumOf(q.weights), 0);
    t.ok(Math.abs(sum - 1) < 1e-5, `token-mean sums to 1 per mini-batch (${sum})`);
  }
  checkMiniBatches(t, batch, batches, referenceMiniBatches(batch, reference(batch, alg), shaped.advantages, alg, order, 2), shaped, 'dapo');
});

t.test('grpo: seq-mean-token-mean gives each sequence 1/B', async (t) => {
  const batch = mixedBatch();
  const alg = algorithm('grpo');
  const shaped = shapeBatch(batch, alg);
  t.same(Array.from(shaped.filtered), new Array(8).fill(0), 'truncation none');
  checkShaped(t, shaped, reference(batch, alg), 'grpo');
  const order = [0, 1, 2, 3, 4, 5, 6, 7];
  const batches = miniBatches(batch, shaped, alg, order, 2);
  for (const b of batches) {
    for (const s of b.sequences) {
      const sum = sumOf(s.weights);
      t.ok(Math.abs(sum - 1 / 4) < 1e-6, `a sequence's weights sum to 1/B (${sum})`);
    }
  }
  checkMiniBatches(t, batch, batches, referenceMiniBatches(batch, reference(batch, alg), shaped.advantages, alg, order, 2), shaped, 'grpo');
});

t.test('compact filtering with an overlong penalty: a filtered trajectory keeps reward 0', async (t) => {
  const batch = [
    trajectory({ group: 0, reward: 1, termination: 'max_context', responseTokens: 40, length: 42, sampled: [[2, 42]] }),
    trajectory({ group: 0, reward: 1, termination: 'submitted', responseTokens: 18, length: 20, sampled: [[2, 20]] }),
    trajectory({ group: 0, reward: 0, termination: 'submitted', responseTokens: 10, length: 12, sampled: [[2, 12]] }),
  ];
  const alg = algorithm('grpo++', { overlong: { maxLength: 20, bufferLength: 5 } });
  const shaped = shapeBatch(batch, alg);
  t.ok(close(shaped.rewards, [0, 0.4, 0]), `rewards ${Array.from(shaped.rewards)}`);
  t.same(Array.from(shaped.filtered), [1, 0, 0]);
  checkShaped(t, shaped, reference(batch, alg), 'grpo++ with overlong');
});

t.test('zero-advantage sequences are left out after the weights are computed', async (t) => {
  const batch = [
    trajectory({ group: 0, reward: 1, length: 10, sampled: [[2, 10]] }),
    trajectory({ group: 0, reward: 1, length: 10, sampled: [[2, 10]] }),
    trajectory({ group: 1, reward: 1, length: 10, sampled: [[2, 6]] }),
    trajectory({ group: 1, reward: 0, length: 10, sampled: [[2, 6]] }),
  ];
  const alg = algorithm('grpo++');
  const shaped = shapeBatch(batch, alg);
  t.same(Array.from(shaped.advantages), [0, 0, 1, -1]);
  const [b] = miniBatches(batch, shaped, alg, [0, 1, 2, 3], 1);
  t.same(b!.indexes, [2, 3]);
  t.ok(b!.sequences.every((s) => Array.from(s.weights).every((w) => w === 0 || w === Math.fround(1 / (4 * 64)))), 'B is still 4');
  // With an entropy bonus they matter.
  const withEntropy = { ...alg, entropyCoef: 0.01 };
  t.same(miniBatches(batch, shaped, withEntropy, [0, 1, 2, 3], 1)[0]!.indexes, [0, 1, 2, 3]);
  // Nothing to train at all: no mini-batch.
  t.same(miniBatches(batch.slice(0, 2), shapeBatch(batch.slice(0, 2), alg), alg, [0, 1], 1), []);
});

t.test('an empty batch', async (t) => {
  const shaped = shapeBatch([], algorithm('grpo++'));
  t.equal(shaped.rewards.length, 0);
  t.equal(shaped.advantages.length, 0);
  t.same(miniBatches([], shaped, algorithm('grpo++'), [], 2), []);
  t.same(solveCounts([]), { all: 0, none: 0, partial: 0 });
});

t.test('random batches against the reference', async (t) => {
  const terminations: TerminationReason[] = ['submitted', 'submitted', 'submitted', 'max_steps', 'max_context', 'timeout', 'env_timeout', 'error'];
  const configs: [string, AlgorithmConfig][] = [
    ['grpo++', algorithm('grpo++', { normLength: 50 })],
    ['grpo++ entropy', algorithm('grpo++', { entropyCoef: 0.01 })],
    ['grpo', algorithm('grpo')],
    ['drgrpo', algorithm('drgrpo')],
    ['dapo', algorithm('dapo', { overlong: { maxLength: 40, bufferLength: 10 } })],
    ['nebius', algorithm('nebius', { turnPenalty: { threshold: 3, maxTurns: 8 } })],
    ['grpo++ penalize informative', algorithm('grpo++', { truncation: 'penalize', turnPenalty: { threshold: 2, maxTurns: 6 }, groupFilter: 'informative', aggregation: 'seq-mean-token-mean' })],
    ['drgrpo mask overlong nonzero', algorithm('drgrpo', { truncation: 'mask', overlong: { maxLength: 30, bufferLength: 15 }, groupFilter: 'nonzero-advantage', aggregation: 'token-mean' })],
    ['grpo++ partial credit informative', algorithm('grpo++', { partialCredit: 0.5, groupFilter: 'informative' })],
    // Not with grpo's std: near-equal graded rewards make the std tiny and the float32 inputs' error large.
    ['drgrpo partial credit penalize', algorithm('drgrpo', { partialCredit: 0.3, truncation: 'penalize', turnPenalty: { threshold: 3, maxTurns: 8 } })],
    ['grpo++ negatives scaled', algorithm('grpo++', { negativeScale: 0.25 })],
    ['grpo++ empty-patch penalty informative', algorithm('grpo++', { emptyPatchPenalty: 0.5, groupFilter: 'informative' })],
    ['drgrpo empty-patch penalty and partial credit', algorithm('drgrpo', { emptyPatchPenalty: 1, partialCredit: 0.3 })],
    ['nebius positives only', algorithm('nebius', { negativeScale: 0 })],
    ['grpo++ maxrl', algorithm('grpo++', { estimator: 'maxrl' })],
    ['grpo++ maxrl partial credit informative', algorithm('grpo++', { estimator: 'maxrl', partialCredit: 0.5, groupFilter: 'informative' })],
  ];
  for (const [label, alg] of configs) {
    for (let trial = 0; trial < 4; trial++) {
      const groups = 1 + rng.int(5);
      const samples = 1 + rng.int(5);
      const batch: Trajectory[] = [];
      for (let g = 0; g < groups; g++) {
        for (let s = 0; s < samples; s++) {
          const length = 4 + rng.int(50);
          const sampled: [number, number][] = [];
          for (let a = 1 + rng.int(4); a < length; a += 2 + rng.int(10)) sampled.push([a, Math.min(length, a + 1 + rng.int(6))]);
          batch.push(
            trajectory({
              group: 10 * g + 3,
              sample: s,
              reward: rng.int(2),
              termination: terminations[rng.int(terminations.length)]!,
              turns: 1 + rng.int(10),
              responseTokens: rng.int(50),
              length,
              sampled,
              // Some episodes were never graded (no similarity).
              ...(rng.int(4) > 0 ? { goldSimilarity: rng.uniform() } : {}),
              // Some changed no file; the ungraded have no patch.
              ...(rng.int(4) > 0 ? { patch: rng.int(3) === 0 ? '' : '+edit' } : {}),
            }),
          );
        }
      }
      // Interleave the groups.
      const shuffled = permutation(batch.length).map((i) => batch[i]!);
      const shaped = shapeBatch(shuffled, alg);
      const ref = reference(shuffled, alg);
      checkShaped(t, shaped, ref, `${label} #${trial}`);
      const count = 1 + rng.int(6);
      const order = permutation(shuffled.length);
      const batches = miniBatches(shuffled, shaped, alg, order, count);
      const expected = referenceMiniBatches(shuffled, ref, shaped.advantages, alg, order, count);
      checkMiniBatches(t, shuffled, batches, expected, shaped, `${label} #${trial} (${count} mini-batches)`);
      const covered = batches.flatMap((b) => b.indexes);
      t.equal(new Set(covered).size, covered.length, `${label} #${trial}: no trajectory twice`);
      t.ok(covered.every((i) => shaped.kept[i] === 1), `${label} #${trial}: only kept trajectories`);
    }
  }
});

function permutation(n: number): number[] {
  const out = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

t.test('solveCounts: per group, every sample solved, none, or some', async (t) => {
  const r = (group: number, reward: number) => trajectory({ group, reward, length: 4, sampled: [[1, 4]] });
  t.same(solveCounts([r(0, 1), r(5, 0), r(2, 1), r(0, 1), r(5, 0), r(2, 0), r(5, 0), r(9, 1), r(7, 0.5), r(7, 0)]), { all: 2, none: 1, partial: 2 });
  t.same(solveCounts([r(3, 0)]), { all: 0, none: 1, partial: 0 });
});
