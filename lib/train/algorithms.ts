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
 */
import type { AdvantageEstimator } from '../math/advantages.js';
import type { Aggregation } from '../math/token-weights.js';

export const ALGORITHM_PRESETS = ['grpo++', 'grpo', 'drgrpo', 'dapo', 'nebius'] as const;
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
}

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
};
