/**
 * What a step reports: rewards, groups, filters, terminations, the loss's statistics, lengths,
 * turns and time (metrics.jsonl, one row a step), and the warnings of a step that cannot teach
 * the policy anything.
 */
import { sampledTokens } from '../agent/rollout.js';
import { rewardHackAttempt, type Trajectory } from '../agent/trajectory.js';
import type { TrainStepResult } from '../model/native-policy.js';
import type { NativePrefixCacheStats } from '../native.js';
import { mean } from '../util/stats.js';
import { solveCounts, type ShapedBatch } from './batch.js';
import type { RejectionStep } from './rft/learn.js';

export function stepMetrics(
  step: number,
  trajectories: readonly Trajectory[],
  shaped: ShapedBatch,
  results: readonly TrainStepResult[],
  /** The rounds of sampling the step took, and the episodes they played (the set-aside ones included). */
  collected: { rounds: number; episodes: number },
  /**
   * rolloutSeconds: how long the step waited for its rollouts; collectSeconds (async): how long
   * they took to collect, beside the training (the rates' denominator when given).
   */
  time: { rolloutSeconds: number; trainSeconds: number; collectSeconds?: number },
) {
  const collecting = time.collectSeconds ?? time.rolloutSeconds;
  const rewards = trajectories.map((t) => t.reward);
  const solve = solveCounts(trajectories);
  const terminations: Record<string, number> = {};
  for (const t of trajectories) terminations[t.termination] = (terminations[t.termination] ?? 0) + 1;
  const responses = trajectories.map((t) => t.responseTokens);
  const byTokens = (f: (r: TrainStepResult) => number) => {
    const total = results.reduce((s, r) => s + r.lossTokens, 0);
    return total > 0 ? results.reduce((s, r) => s + f(r) * r.lossTokens, 0) / total : NaN;
  };
  const sampled = trajectories.reduce((s, t) => s + sampledTokens(t), 0);
  const generateMs = trajectories.reduce((s, t) => s + t.timings.generateMs, 0);
  const envMs = trajectories.reduce((s, t) => s + t.timings.envMs + t.timings.rewardMs, 0);
  return {
    step,
    trajectories: trajectories.length,
    episodes: collected.episodes,
    reward: { mean: mean(rewards), shapedMean: mean(Array.from(shaped.rewards)), std: Math.sqrt(mean(rewards.map((r) => (r - mean(rewards)) ** 2))) },
    groups: { solveAll: solve.all, solveNone: solve.none, solvePartial: solve.partial, rounds: collected.rounds },
    filtered: shaped.filtered.reduce((a, b) => a + b, 0),
    kept: shaped.kept.reduce((a, b) => a + b, 0),
    terminations,
    // Trajectories whose test-infrastructure changes grading reverted, or whose code tampered with
    // the test runner: a policy learning to game its reward shows here first.
    rewardHackAttempts: trajectories.filter((t) => rewardHackAttempt(t) !== null).length,
    // Patches adding lines that reach for the runner or the grader (information, not a zero).
    flaggedPatches: trajectories.filter((t) => t.patchFlags?.length).length,
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
    length: { responseMean: mean(responses), responseMax: Math.max(0, ...responses), promptMean: mean(trajectories.map((t) => t.promptTokens)), sampledTokens: sampled },
    turns: { mean: mean(trajectories.map((t) => t.turns.length)), max: Math.max(0, ...trajectories.map((t) => t.turns.length)) },
    retries: trajectories.reduce((s, t) => s + t.attempts - 1, 0),
    time: {
      rolloutSeconds: time.rolloutSeconds,
      trainSeconds: time.trainSeconds,
      generateSecondsSum: generateMs / 1000,
      envSecondsSum: envMs / 1000,
      tokensPerSecondTrain: results.length ? results.reduce((s, r) => s + r.tokens, 0) / time.trainSeconds : NaN,
      episodesPerSecond: trajectories.length / collecting,
      sampledTokensPerSecond: sampled / collecting,
    } as Record<string, number>,
  };
}

/**
 * One RL step's row of metrics.jsonl: what every step reports (stepMetrics), then what some
 * steps add. The trainer fills these; the plots, the tracker and the viewer read them.
 */
export type StepRow = ReturnType<typeof stepMetrics> & {
  prefixCache?: Record<string, number>;
  /** Rejection fine-tuning's round: what was sampled, resolved and kept. */
  rejection?: RejectionStep['round'];
  async?: { maxStaleness: number; staleness: { mean: number; max: number }; dropped: number; waitSeconds: number; collectSeconds: number };
  sampler?: { gapMean: number; gapMax: number; tokens: number; syncSeconds: number; weightVersion: number };
  curriculum?: Record<string, unknown>;
  eval?: { success: number; seconds: number };
  parallel?: { worldSize: number };
  warnings?: string[];
};

/**
 * Warns when the policy is not learning: entropy at ln V (uniform over the vocabulary) and a
 * zero gradient for STALL_STEPS steps in a row, what an exploded initialization or learning
 * rate leaves behind.
 */
const STALL_STEPS = 3;
export class LearningStallDetector {
  private run = 0;

  observe(metrics: StepRow, vocabSize: number): string | null {
    const { loss } = metrics;
    const uniform = loss.entropy >= 0.98 * Math.log(vocabSize);
    this.run = uniform && loss.gradNorm < 1e-8 ? this.run + 1 : 0;
    if (this.run !== STALL_STEPS) return null;
    return `not learning: for ${STALL_STEPS} steps the entropy has been ln V (${Math.log(vocabSize).toFixed(2)}, a uniform policy) and the gradient norm 0; ` +
      'the weights are likely saturated: lower optimizer.lr or model.initStd and start again';
  }
}

/**
 * What made a step teach the policy little or nothing, each said loudly: episodes whose prompt
 * was over the budget (they end before anything is sampled), more than half the trajectories
 * filtered, no token reaching the loss, no optimizer step.
 */
export function stepWarnings(trajectories: readonly Trajectory[], metrics: StepRow, promptBudget: number): string[] {
  const warnings: string[] = [];
  const n = trajectories.length;
  const overBudget = trajectories.filter((t) => t.termination === 'max_context' && t.turns.length === 0);
  if (overBudget.length > 0) {
    const longest = Math.max(...overBudget.map((t) => t.promptTokens));
    warnings.push(
      `${overBudget.length} of ${n} episodes ended before sampling: their opening prompts (up to ${longest} tokens) exceed rollout.promptBudget (${promptBudget}); ` +
        `raise it to at least ${longest}, or shorten the task prompts`,
    );
  }
  const { filtered, loss, rejection } = metrics;
  if (n > 0 && filtered > n / 2) {
    const reasons = Object.entries(metrics.terminations).map(([reason, count]) => `${reason} ${count}`).join(', ');
    warnings.push(
      `${filtered} of ${n} trajectories were filtered out of the loss (terminations: ${reasons}); ` +
        'raise rollout.responseBudget, rollout.maxTurns or rollout.trajectoryTimeoutMs, or set algorithm.truncation',
    );
  }
  if (rejection && rejection.examples === 0) {
    warnings.push(
      `no trajectory was kept to fine-tune on (${rejection.resolved} of ${n} resolved their task${rejection.resolved > 0 ? ', and every turn of those broke the action format' : ''}), ` +
        'so the policy did not change; rejection fine-tuning needs a policy that solves some tasks: start from a stronger checkpoint (an SFT warm-up), ' +
        'sample more (rollout.samplesPerTask, rollout.tasksPerStep) or use easier tasks',
    );
  } else if (!rejection && (loss.optimizerSteps === 0 || loss.lossTokens === 0)) {
    warnings.push(
      `${loss.optimizerSteps === 0 ? 'no optimizer step was taken' : 'no token reached the loss'}: every trajectory was filtered or had advantage 0 ` +
        '(each group all solved or all failed), so the policy did not change; use tasks it solves sometimes (swerl tasks filter --max-solve-rate), ' +
        'more rollout.samplesPerTask, or dynamic sampling (algorithm.preset dapo)',
    );
  }
  return warnings;
}

/** The prefix cache over one step's rollouts: how many prompts reused a stored prefix, and how much. */
export function prefixCacheDelta(now: NativePrefixCacheStats, before: NativePrefixCacheStats): Record<string, number> {
  const lookups = now.lookups - before.lookups;
  const reused = now.reusedTokens - before.reusedTokens;
  const prefilled = now.prefilledTokens - before.prefilledTokens;
  return {
    hitRate: lookups > 0 ? (now.hits - before.hits) / lookups : NaN,
    reusedTokens: reused,
    prefilledTokens: prefilled,
    // The share of prompt positions that cost no prefill.
    reusedFraction: reused + prefilled > 0 ? reused / (reused + prefilled) : NaN,
    bytes: now.bytes,
  };
}
