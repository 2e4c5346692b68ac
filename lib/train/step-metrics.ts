/**
 * What a step reports: rewards, groups, filters, terminations, the loss's statistics, lengths,
 * turns and time (metrics.jsonl, one row a step), and the warning when the policy stopped
 * learning.
 */
import type { Trajectory } from '../agent/trajectory.js';
import type { TrainStepResult } from '../model/native-policy.js';
import { solveCounts, type ShapedBatch } from './batch.js';

export function mean(values: readonly number[]): number {
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN;
}

export function stepMetrics(
  step: number,
  trajectories: readonly Trajectory[],
  shaped: ShapedBatch,
  results: readonly TrainStepResult[],
  rounds: number,
  time: { rolloutSeconds: number; trainSeconds: number },
): Record<string, unknown> {
  const rewards = trajectories.map((t) => t.reward);
  const solve = solveCounts(trajectories);
  const terminations: Record<string, number> = {};
  for (const t of trajectories) terminations[t.termination] = (terminations[t.termination] ?? 0) + 1;
  const responses = trajectories.map((t) => t.responseTokens);
  const byTokens = (f: (r: TrainStepResult) => number) => {
    const total = results.reduce((s, r) => s + r.lossTokens, 0);
    return total > 0 ? results.reduce((s, r) => s + f(r) * r.lossTokens, 0) / total : NaN;
  };
  const generateMs = trajectories.reduce((s, t) => s + t.timings.generateMs, 0);
  const envMs = trajectories.reduce((s, t) => s + t.timings.envMs + t.timings.rewardMs, 0);
  return {
    step,
    trajectories: trajectories.length,
    reward: { mean: mean(rewards), shapedMean: mean(Array.from(shaped.rewards)), std: Math.sqrt(mean(rewards.map((r) => (r - mean(rewards)) ** 2))) },
    groups: { solveAll: solve.all, solveNone: solve.none, solvePartial: solve.partial, rounds },
    filtered: shaped.filtered.reduce((a, b) => a + b, 0),
    kept: shaped.kept.reduce((a, b) => a + b, 0),
    terminations,
    // Trajectories whose test-infrastructure changes grading reverted: a policy learning to game its reward shows here first.
    rewardHackAttempts: trajectories.filter((t) => t.reverted?.length).length,
    loss: {
      value: results.length ? results.reduce((s, r) => s + r.loss, 0) / results.length : NaN,
      entropy: byTokens((r) => r.entropy),
      approxKl: byTokens((r) => r.approxKl),
      clipFracLow: byTokens((r) => r.clipFracLow),
      clipFracHigh: byTokens((r) => r.clipFracHigh),
      ratioMax: results.length ? Math.max(...results.map((r) => r.ratioMax)) : NaN,
      gradNorm: results.length ? Math.max(...results.map((r) => r.gradNorm)) : NaN,
      lossTokens: results.reduce((s, r) => s + r.lossTokens, 0),
      optimizerSteps: results.length,
      lr: results.at(-1)?.lr ?? NaN,
    },
    length: { responseMean: mean(responses), responseMax: Math.max(0, ...responses), promptMean: mean(trajectories.map((t) => t.promptTokens)) },
    turns: { mean: mean(trajectories.map((t) => t.turns.length)), max: Math.max(0, ...trajectories.map((t) => t.turns.length)) },
    retries: trajectories.reduce((s, t) => s + t.attempts - 1, 0),
    time: {
      rolloutSeconds: time.rolloutSeconds,
      trainSeconds: time.trainSeconds,
      generateSecondsSum: generateMs / 1000,
      envSecondsSum: envMs / 1000,
      tokensPerSecondTrain: results.length ? results.reduce((s, r) => s + r.tokens, 0) / time.trainSeconds : NaN,
    },
  };
}

/**
 * Warns when the policy is not learning: entropy at ln V (uniform over the vocabulary) and a
 * zero gradient for STALL_STEPS steps in a row, what an exploded initialization or learning
 * rate leaves behind.
 */
const STALL_STEPS = 3;
export class LearningStallDetector {
  private run = 0;

  observe(metrics: Record<string, unknown>, vocabSize: number): string | null {
    const loss = metrics.loss as { entropy: number; gradNorm: number };
    const uniform = loss.entropy >= 0.98 * Math.log(vocabSize);
    this.run = uniform && loss.gradNorm < 1e-8 ? this.run + 1 : 0;
    if (this.run !== STALL_STEPS) return null;
    return `not learning: for ${STALL_STEPS} steps the entropy has been ln V (${Math.log(vocabSize).toFixed(2)}, a uniform policy) and the gradient norm 0; ` +
      'the weights are likely saturated: lower optimizer.lr or model.initStd and start again';
  }
}
