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
import { invalidArg } from '../errors.js';
import { ADVANTAGE_ESTIMATORS } from '../math/advantages.js';
import { LOSS_DEFAULTS, LOSS_FIELDS } from '../math/policy-loss.js';
import { TURN_PENALTY_DEFAULTS } from '../math/reward-shaping.js';
import { AGGREGATIONS } from '../math/token-weights.js';
import { integer, optionsParser, type Infer } from '../schema.js';

export const ALGORITHM_PRESETS = ['grpo++', 'grpo', 'drgrpo', 'dapo', 'nebius', 'rft'] as const;
export type AlgorithmPreset = (typeof ALGORITHM_PRESETS)[number];

/**
 * The config's `algorithm` section: every field the presets set, each declared once here; a
 * config names a preset and overrides any of them. No defaults in the schema: what the config
 * leaves out, the preset fills.
 */
const ALGORITHM_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    preset: { enum: ALGORITHM_PRESETS, default: 'grpo++' },
    estimator: { enum: ADVANTAGE_ESTIMATORS },
    /** How max_context / max_steps / timeout trajectories are treated. */
    truncation: { enum: ['mask', 'penalize', 'none'] },
    /** Nebius's turn penalty (truncation 'penalize'): 0 below threshold turns, -1 at maxTurns. */
    turnPenalty: {
      type: 'object',
      additionalProperties: false,
      required: ['threshold', 'maxTurns'],
      properties: { threshold: integer(0, 100_000), maxTurns: integer(1, 100_000) },
    },
    /**
     * Graded credit for episodes the tests did not resolve: their reward becomes partialCredit x
     * how close their patch comes to the task's gold patch (SWE-RL's similarity,
     * lib/env/reward/similarity.ts), so a group whose samples all failed still ranks them, and a
     * near miss is pushed down less than an edit elsewhere. A resolved episode keeps 1. 0 = off
     * (DeepSWE's binary reward). Needs SWE tasks with gold patches; rejection fine-tuning keeps
     * resolved episodes only, so it takes none.
     */
    partialCredit: { type: 'number', minimum: 0, exclusiveMaximum: 1 },
    /**
     * The reward of an unresolved SWE episode that changed no file is -emptyPatchPenalty: a group
     * whose samples all failed still ranks an attempt above submitting nothing (a line copied
     * over itself, which the editor refuses, over and over), which rejection fine-tuning, keeping
     * resolved episodes only, cannot learn. 0 = off (DeepSWE's binary reward).
     */
    emptyPatchPenalty: { type: 'number', minimum: 0, maximum: 1 },
    /**
     * Scales the negative advantages (the pushes against a group's worse samples) by this much,
     * the positive ones kept: 1 is the estimator's own (every preset's); 0 learns only from a
     * group's better samples, weighted by how far they beat the baseline.
     */
    negativeScale: { type: 'number', minimum: 0, maximum: 1 },
    /** Which groups/samples reach the loss. */
    groupFilter: { enum: ['none', 'informative', 'nonzero-advantage'] },
    /** With groupFilter 'informative': sample more groups until the batch is full, at most this many extra rounds. */
    resampleRounds: integer(0, 100),
    /** DAPO's soft overlong penalty on the response length; null = off. */
    overlong: {
      type: ['object', 'null'],
      additionalProperties: false,
      required: ['maxLength', 'bufferLength'],
      properties: { maxLength: integer(1, 2 ** 24), bufferLength: integer(1, 2 ** 24) },
    },
    aggregation: { enum: AGGREGATIONS },
    /** L of seq-mean-token-sum-norm; null = the rollout's response budget. */
    normLength: { type: ['integer', 'null'], minimum: 1, maximum: 2 ** 24 },
    // The loss's fields and bounds are the loss's (lib/math/policy-loss.ts).
    clipLow: LOSS_FIELDS.clipLow,
    /** null = no upper clip. */
    clipHigh: LOSS_FIELDS.clipHigh,
    dualClip: LOSS_FIELDS.dualClip,
    entropyCoef: LOSS_FIELDS.entropyCoef,
    /** A KL term against the initial weights (a frozen copy of the policy); null = none. */
    kl: { ...LOSS_FIELDS.kl, type: ['object', 'null'] },
    /** Optimizer steps per training step (the batch is split into this many mini-batches). */
    miniBatches: integer(1, 100_000),
    /** Passes over the batch (PPO epochs). */
    epochs: integer(1, 100),
    /**
     * Rejection fine-tuning instead of a policy gradient: the step's resolved trajectories,
     * format-error turns masked, fine-tuned on by NLL, `sequencesPerStep` to an optimizer step,
     * `epochs` times over (lib/train/rft); `distinct` keeps one of a task's resolved episodes
     * that are equal token for token (off: Nebius's recipe keeps them all). null: the
     * policy-gradient loss.
     */
    rejection: {
      type: ['object', 'null'],
      additionalProperties: false,
      required: ['epochs', 'sequencesPerStep'],
      properties: { epochs: integer(1, 100), sequencesPerStep: integer(1, 100_000), distinct: { type: 'boolean', default: false } },
    },
  },
} as const;

/** The fields that grade unresolved SWE episodes by their patch (batch.ts, gradedReward). */
export const UNRESOLVED_GRADING = ['partialCredit', 'emptyPatchPenalty'] as const;

/** The resolved algorithm: every field present. */
export type AlgorithmConfig = Required<Infer<typeof ALGORITHM_SCHEMA>>;
type PresetFields = Omit<AlgorithmConfig, 'preset'>;

/** Nebius's rejection fine-tuning hyper-parameters: the rft preset's optimizer, where the config leaves a field out. */
export const RFT_OPTIMIZER_DEFAULTS = { lr: 5e-6, weightDecay: 0.1, warmupSteps: 10, schedule: 'cosine' } as const;

/** The one default table: GRPO++ (DeepSWE) but for truncation; each preset overrides what its paper changes. */
const DEFAULTS: PresetFields = {
  estimator: 'rloo',
  truncation: 'none',
  turnPenalty: { ...TURN_PENALTY_DEFAULTS },
  partialCredit: 0,
  emptyPatchPenalty: 0,
  negativeScale: 1,
  groupFilter: 'none',
  resampleRounds: 0,
  overlong: null,
  aggregation: 'seq-mean-token-sum-norm',
  normLength: null,
  ...LOSS_DEFAULTS,
  kl: null,
  miniBatches: 1,
  epochs: 1,
  rejection: null,
};

const SYMMETRIC_CLIP = { clipLow: 0.2, clipHigh: 0.2 } as const;

const OVERRIDES: Record<AlgorithmPreset, Partial<PresetFields>> = {
  'grpo++': { truncation: 'mask' },
  grpo: { estimator: 'grpo', aggregation: 'seq-mean-token-mean', ...SYMMETRIC_CLIP },
  drgrpo: { estimator: 'drgrpo', ...SYMMETRIC_CLIP },
  dapo: {
    estimator: 'grpo',
    aggregation: 'token-mean',
    groupFilter: 'informative',
    resampleRounds: 3,
    // Filled from the response budget when the config leaves it out (see resolveAlgorithm).
    overlong: { maxLength: 0, bufferLength: 0 },
  },
  nebius: { estimator: 'grpo', aggregation: 'token-mean', truncation: 'penalize', groupFilter: 'nonzero-advantage', clipHigh: 0.3 },
  rft: { rejection: { epochs: 1, sequencesPerStep: 8, distinct: false } },
};

/** Every preset's fields in full: the default table under the preset's overrides. */
export const PRESETS = Object.fromEntries(ALGORITHM_PRESETS.map((name) => [name, { ...DEFAULTS, ...OVERRIDES[name] }])) as Record<AlgorithmPreset, PresetFields>;

const parseAlgorithmOverrides = optionsParser(ALGORITHM_SCHEMA);

/** The config's algorithm section: the preset's fields under the config's overrides, budgets filled in. */
export function resolveAlgorithm(raw: unknown, responseBudget: number, field = 'config.algorithm'): AlgorithmConfig {
  const overrides = parseAlgorithmOverrides(raw, field);
  const algorithm: AlgorithmConfig = { ...structuredClone(PRESETS[overrides.preset]), ...overrides };
  algorithm.normLength ??= responseBudget;
  if (algorithm.overlong && algorithm.overlong.maxLength === 0) {
    // DAPO: a buffer of a fifth of the budget (4096 of 20480 in the paper).
    algorithm.overlong = { maxLength: responseBudget, bufferLength: Math.max(1, Math.floor(responseBudget / 5)) };
  }
  if (algorithm.turnPenalty.threshold >= algorithm.turnPenalty.maxTurns)
    throw invalidArg(`${field}.turnPenalty`, `has threshold ${algorithm.turnPenalty.threshold} >= maxTurns ${algorithm.turnPenalty.maxTurns}`, 'the penalty grows from 0 at threshold turns to -1 at maxTurns: make threshold smaller');
  for (const grading of UNRESOLVED_GRADING) {
    if (algorithm[grading] > 0 && algorithm.rejection)
      throw invalidArg(`${field}.${grading}`, `(${algorithm[grading]}) grades unresolved episodes, and rejection fine-tuning (${field}.rejection) trains on resolved ones only`, `remove ${grading}, or use a policy-gradient preset such as grpo++`);
  }
  if (algorithm.estimator === 'maxrl') {
    // maxrl divides by a group's mean reward: every setting that can make a reward negative is refused here, not at a step's advantages.
    const negative = algorithm.emptyPatchPenalty > 0 ? 'emptyPatchPenalty' : algorithm.overlong ? 'overlong' : algorithm.truncation === 'penalize' ? 'truncation' : undefined;
    if (negative !== undefined)
      throw invalidArg(`${field}.estimator`, `is 'maxrl', which divides by a group's mean reward, and ${field}.${negative} makes rewards negative`, `remove ${negative}, or use the rloo estimator`);
  }
  if (algorithm.overlong && algorithm.overlong.bufferLength > algorithm.overlong.maxLength)
    throw invalidArg(`${field}.overlong.bufferLength`, `(${algorithm.overlong.bufferLength}) exceeds maxLength (${algorithm.overlong.maxLength})`);
  return algorithm;
}

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
