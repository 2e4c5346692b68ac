/**
 * From a step's trajectories to the sequences of its optimizer steps, as plain data: reward
 * shaping (partial credit, empty-patch penalty, truncation policy, overlong penalty),
 * advantages per group (their negative side scaled by negativeScale), group filters,
 * mini-batches and token weights. No model here, so every rule is unit-tested on its own.
 *
 * Filtered trajectories (compact filtering) stay in their group with reward 0 and every token
 * masked: they pull the baseline down and are not trained on.
 */
import type { Trajectory } from '../agent/trajectory.js';
import { computeAdvantages } from '../math/advantages.js';
import { compactFilter, keepInformativeGroups, keepNonzeroAdvantages, overlongPenalty, turnPenalty } from '../math/reward-shaping.js';
import { tokenWeights } from '../math/token-weights.js';
import type { TrainSequence } from '../model/native-policy.js';
import type { AlgorithmConfig } from './algorithms.js';

export interface ShapedBatch {
  /** Rewards after the truncation policy and overlong penalty (the advantages' input). */
  rewards: Float32Array;
  advantages: Float32Array;
  /** Per trajectory: 1 when compact filtering masked it. */
  filtered: Uint8Array;
  /** Per trajectory: 1 when it reaches the loss (group filters). */
  kept: Uint8Array;
  /** Per trajectory: the loss mask after filtering. */
  masks: Uint8Array[];
}

/** Applies the algorithm's truncation policy, penalties, advantages and filters. */
export function shapeBatch(trajectories: readonly Trajectory[], algorithm: AlgorithmConfig): ShapedBatch {
  const n = trajectories.length;
  let rewards: Float32Array = Float32Array.from(trajectories, (t) => gradedReward(t, algorithm));
  const groups = Int32Array.from(trajectories, (t) => t.group);
  let filtered: Uint8Array = new Uint8Array(n);
  let masks: Uint8Array[] = trajectories.map((t) => t.mask);

  if (algorithm.truncation === 'mask' && n > 0) {
    const seqLengths = trajectories.map((t) => t.tokens.length);
    const flat = concatMasks(masks);
    const out = compactFilter({ rewards, terminations: trajectories.map((t) => t.termination), mask: flat, seqLengths });
    rewards = out.rewards;
    filtered = out.filtered;
    masks = splitMask(out.mask!, seqLengths);
  } else if (algorithm.truncation === 'penalize' && n > 0) {
    rewards = turnPenalty(rewards, trajectories.map((t) => t.turns.length), algorithm.turnPenalty);
  }
  if (algorithm.overlong && n > 0) {
    rewards = overlongPenalty(rewards, trajectories.map((t) => t.responseTokens), algorithm.overlong);
    // A compact-filtered trajectory keeps reward 0 (docs/loss.md), overlong or not.
    rewards = rewards.map((r, i) => (filtered[i] === 1 ? 0 : r));
  }

  const advantages = n > 0 ? computeAdvantages(rewards, groups, { estimator: algorithm.estimator }) : new Float32Array(0);
  if (algorithm.negativeScale !== 1) for (let i = 0; i < n; i++) if (advantages[i]! < 0) advantages[i]! *= algorithm.negativeScale;
  let kept: Uint8Array = new Uint8Array(n).fill(1);
  if (algorithm.groupFilter === 'informative' && n > 0) kept = keepInformativeGroups(rewards, groups);
  else if (algorithm.groupFilter === 'nonzero-advantage' && n > 0) kept = keepNonzeroAdvantages(advantages);
  return { rewards, advantages, filtered, kept, masks };
}

/**
 * A trajectory's reward before the truncation policy. An unresolved episode's is 0 but for
 * algorithm.partialCredit (credit x its patch's similarity to the gold patch; 0 for an episode
 * never graded, which failed before its reward; that every task has a gold patch is checked
 * when the run starts, assertGoldPatches) and algorithm.emptyPatchPenalty (-penalty for a
 * graded patch that changes nothing).
 */
function gradedReward(t: Trajectory, algorithm: AlgorithmConfig): number {
  if (t.reward === 1) return 1;
  if (algorithm.emptyPatchPenalty > 0 && t.patch === '') return -algorithm.emptyPatchPenalty;
  return algorithm.partialCredit > 0 ? algorithm.partialCredit * (t.goldSimilarity ?? 0) : t.reward;
}

export interface MiniBatch {
  sequences: TrainSequence[];
  /** Indexes of the trajectories in it. */
  indexes: number[];
  /** Tokens with weight > 0. */
  lossTokens: number;
}

/**
 * Splits the kept trajectories into `count` mini-batches of near-equal size (in `order`), and
 * gives each token its weight within its mini-batch. Trajectories with nothing to train
 * (all masked) still count in the mini-batch's sequence count B, as they did in the group.
 * Sequences that cannot change the loss (advantage 0, no entropy or KL term) are left out
 * after the weights are computed, which leaves the gradient exactly as it was.
 */
export function miniBatches(
  trajectories: readonly Trajectory[],
  shaped: ShapedBatch,
  algorithm: AlgorithmConfig,
  order: readonly number[],
  count: number,
): MiniBatch[] {
  const keptOrder = order.filter((i) => shaped.kept[i] === 1);
  const batches: MiniBatch[] = [];
  // min(count, kept) contiguous parts whose sizes differ by at most one (the larger first).
  const parts = Math.max(1, Math.min(count, keptOrder.length));
  for (let part = 0, start = 0; part < parts && start < keptOrder.length; part++) {
    const size = Math.floor(keptOrder.length / parts) + (part < keptOrder.length % parts ? 1 : 0);
    const indexes = keptOrder.slice(start, start + size);
    start += size;
    const masks = indexes.map((i) => shaped.masks[i]!);
    const seqLengths = masks.map((m) => m.length);
    const flat = concatMasks(masks);
    const hasLossTokens = flat.some((m) => m === 1);
    const weights = hasLossTokens
      ? tokenWeights({ mask: flat, seqLengths, aggregation: algorithm.aggregation, ...(algorithm.aggregation === 'seq-mean-token-sum-norm' ? { maxLength: algorithm.normLength! } : {}) })
      : new Float32Array(flat.length);
    const onlyPolicyGradient = algorithm.entropyCoef === 0 && algorithm.kl === null;
    const sequences: TrainSequence[] = [];
    const used: number[] = [];
    let lossTokens = 0;
    let offset = 0;
    indexes.forEach((index, k) => {
      const w = weights.subarray(offset, offset + seqLengths[k]!);
      offset += seqLengths[k]!;
      const advantage = shaped.advantages[index]!;
      const tokensWithWeight = countPositive(w);
      if (tokensWithWeight === 0 || (onlyPolicyGradient && advantage === 0)) return;
      const t = trajectories[index]!;
      sequences.push({ tokens: t.tokens, weights: w, oldLogprobs: t.logprobs, advantage });
      used.push(index);
      lossTokens += tokensWithWeight;
    });
    if (sequences.length > 0) batches.push({ sequences, indexes: used, lossTokens });
  }
  return batches;
}

function countPositive(values: Float32Array): number {
  let n = 0;
  for (const v of values) if (v > 0) n++;
  return n;
}

function concatMasks(masks: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(masks.reduce((s, m) => s + m.length, 0));
  let at = 0;
  for (const m of masks) {
    out.set(m, at);
    at += m.length;
  }
  return out;
}

function splitMask(flat: Uint8Array, lengths: readonly number[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let at = 0;
  for (const length of lengths) {
    out.push(flat.slice(at, at + length));
    at += length;
  }
  return out;
}

/** Per-group solve counts: every sample solved, none, or some. */
export function solveCounts(trajectories: readonly Trajectory[]): { all: number; none: number; partial: number } {
  const byGroup = new Map<number, number[]>();
  for (const t of trajectories) byGroup.set(t.group, [...(byGroup.get(t.group) ?? []), t.reward > 0 ? 1 : 0]);
  const counts = { all: 0, none: 0, partial: 0 };
  for (const solved of byGroup.values()) {
    const k = solved.reduce((a, b) => a + b, 0);
    if (k === solved.length) counts.all++;
    else if (k === 0) counts.none++;
    else counts.partial++;
  }
  return counts;
}
