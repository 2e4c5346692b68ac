/**
 * The algorithm presets. Every field can be overridden in the config's `algorithm` section;
 * the preset only fills what the config leaves out.
 *
 *   grpo++  DeepSWE: leave-one-out advantages without std, clip-higher 0.2/0.28, no KL and no
 *           entropy bonus, Dr.GRPO's seq-mean-token-sum-norm with L = the response budget,
 *           compact filtering (max_context / max_steps / timeout -> reward 0, tokens masked).
 *   grpo    DeepSeekMath: mean/std group advantages, symmetric clip 0.2, per-sequence mean.
 *   drgrpo  Dr.GRPO: mean-centred advantages without std, sum over tokens normalized by L.
 *   dapo    DAPO: clip-higher 0.2/0.28, token-mean, drop all-equal groups and sample more,
 *           soft overlong penalty.
 *   nebius  Nebius SWE-agent RL: mean/std advantages, drop zero-advantage samples, token-mean,
 *           turn-count penalty instead of masking, clip 0.2/0.3.
 *   rft     Nebius's phase 1, rejection fine-tuning: each step samples, keeps the trajectories
 *           that resolved their task, masks their format-error turns, and fine-tunes on them
 *           (token-mean NLL, one epoch); with the optimizer defaults of their recipe (lr 5e-6,
 *           weight decay 0.1, 10 warmup steps, cosine to 0) where the config sets none.
 */
import type { AdvantageEstimator } from '../math/advantages.js';
import type { Aggregation } from '../math/token-weights.js';

export const ALGORITHM_PRESETS = ['grpo++', 'grpo', 'drgrpo', 'dapo', 'nebius', 'rft'] as const;
export type AlgorithmPreset = (typeof ALGORITHM_PRESETS)[number];

export interface AlgorithmConfig {
  preset: AlgorithmPreset;
  estimator: AdvantageEstimator;
  /** How max_context / max_steps / timeout trajectories are treated. */
  truncation: 'mask' | 'penalize' | 'none';
  /** Nebius's turn penalty (truncation 'penalize'): 0 below threshold turns, -1 at maxTurns. */
  turnPenalty: { threshold: number; maxTurns: number };
  /** Which groups/samples reach the loss. */
  groupFilter: 'none' | 'informative' | 'nonzero-advantage';
  /** With groupFilter 'informative': sample more groups until the batch is full, at most this many extra rounds. */
  resampleRounds: number;
  /** DAPO's soft overlong penalty on the response length; null = off. */
  overlong: { maxLength: number; bufferLength: number } | null;
  aggregation: Aggregation;
  /** L of seq-mean-token-sum-norm; null = the rollout's response budget. */
  normLength: number | null;
  clipLow: number;
  /** null = no upper clip. */
  clipHigh: number | null;
  dualClip: number | null;
  entropyCoef: number;
  /** A KL term against the initial weights (a frozen copy of the policy); null = none. */
  kl: { coef: number; kind: 'k1' | 'k2' | 'k3' } | null;
  /** Optimizer steps per training step (the batch is split into this many mini-batches). */
  miniBatches: number;
  /** Passes over the batch (PPO epochs). */
  epochs: number;
  /**
   * Rejection fine-tuning instead of a policy gradient: the step's resolved trajectories,
   * format-error turns masked, fine-tuned on by NLL, `sequencesPerStep` to an optimizer step,
   * `epochs` times over (lib/train/rft). null: the policy-gradient loss.
   */
  rejection: { epochs: number; sequencesPerStep: number } | null;
}

/** Nebius's rejection fine-tuning hyper-parameters: the rft preset's optimizer, where the config leaves a field out. */
export const RFT_OPTIMIZER_DEFAULTS = { lr: 5e-6, weightDecay: 0.1, warmupSteps: 10, schedule: 'cosine' } as const;

type PresetFields = Omit<AlgorithmConfig, 'preset'>;

const COMMON: PresetFields = {
  estimator: 'rloo',
  truncation: 'none',
  turnPenalty: { threshold: 10, maxTurns: 40 },
  groupFilter: 'none',
  resampleRounds: 0,
  overlong: null,
  aggregation: 'seq-mean-token-sum-norm',
  normLength: null,
  clipLow: 0.2,
  clipHigh: 0.28,
  dualClip: null,
  entropyCoef: 0,
  kl: null,
  miniBatches: 1,
  epochs: 1,
  rejection: null,
};

export const PRESETS: Record<AlgorithmPreset, PresetFields> = {
  'grpo++': { ...COMMON, estimator: 'rloo', truncation: 'mask', aggregation: 'seq-mean-token-sum-norm', clipLow: 0.2, clipHigh: 0.28 },
  grpo: { ...COMMON, estimator: 'grpo', aggregation: 'seq-mean-token-mean', clipLow: 0.2, clipHigh: 0.2 },
  drgrpo: { ...COMMON, estimator: 'drgrpo', aggregation: 'seq-mean-token-sum-norm', clipLow: 0.2, clipHigh: 0.2 },
  dapo: {
    ...COMMON,
    estimator: 'grpo',
    aggregation: 'token-mean',
    clipLow: 0.2,
    clipHigh: 0.28,
    groupFilter: 'informative',
    resampleRounds: 3,
    // Filled from the response budget when the config leaves it out (see resolveAlgorithm).
    overlong: { maxLength: 0, bufferLength: 0 },
  },
  nebius: {
    ...COMMON,
    estimator: 'grpo',
    aggregation: 'token-mean',
    truncation: 'penalize',
    groupFilter: 'nonzero-advantage',
    clipLow: 0.2,
    clipHigh: 0.3,
  },
  rft: { ...COMMON, truncation: 'none', rejection: { epochs: 1, sequencesPerStep: 8 } },
};

/**
 * Optimizer steps in a run of `steps` steps (the learning-rate schedule's length). Rejection
 * fine-tuning takes a step per sequencesPerStep resolved trajectories: counted as if every
 * trajectory resolved, so a cosine schedule never runs past its end.
 */
export function optimizerStepsPerRun(algorithm: AlgorithmConfig, steps: number, trajectoriesPerStep: number): number {
  if (algorithm.rejection) return steps * Math.ceil((trajectoriesPerStep * algorithm.rejection.epochs) / algorithm.rejection.sequencesPerStep);
  return steps * algorithm.miniBatches * algorithm.epochs;
}

/**
 * A warm-up that takes half of a run's optimizer steps or more (the rft preset's 10, say, in a
 * run of a few steps) leaves the run training below optimizer.lr most of the time: said when
 * the run starts, with the fix. Null when the warm-up is short enough.
 */
export function warmupWarning(algorithm: AlgorithmConfig, warmupSteps: number, optimizerSteps: number): string | null {
  if (warmupSteps === 0 || 2 * warmupSteps < optimizerSteps) return null;
  const most = algorithm.rejection ? ' at most (rejection fine-tuning steps only on resolved episodes, so fewer)' : '';
  return (
    `optimizer.warmupSteps (${warmupSteps}) is half or more of the run's ${optimizerSteps} optimizer steps${most}: ` +
    'the learning rate stays below optimizer.lr for most of the run; set optimizer.warmupSteps lower (0 for none)'
  );
}
