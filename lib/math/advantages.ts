/** Group-relative advantages (docs/loss.md, "Advantages"). */
import { native } from '../native.js';
import { optionsParser, type Input } from '../schema.js';
import { invalidArg } from '../errors.js';
import { float32Array, int32Array } from './validate.js';

export const ADVANTAGE_ESTIMATORS = ['grpo', 'drgrpo', 'rloo', 'maxrl'] as const;
export type AdvantageEstimator = (typeof ADVANTAGE_ESTIMATORS)[number];

const ADVANTAGE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    /**
     * grpo: (R - mean) / (std + 1e-6), std with Bessel's correction; drgrpo: R - mean;
     * rloo (GRPO++'s, the default): R - mean of the others = n/(n-1) (R - mean);
     * maxrl (MaxRL, Tajwar et al. 2026): (R - mean) / mean, 0 where the mean is not above 0.
     * With 0/1 rewards a task's expected gradient is w(p) grad p, w falling from n-1 for a
     * task rarely solved to 1 for one always solved (docs/loss.md); rloo's is grad p for
     * every task. Rewards must not be negative.
     */
    estimator: { type: 'string', enum: ADVANTAGE_ESTIMATORS, default: 'rloo' },
  },
} as const;
export type AdvantageOptions = Input<typeof ADVANTAGE_SCHEMA>;

const parseOptions = optionsParser(ADVANTAGE_SCHEMA);

/**
 * One advantage per trajectory. rewards[i] belongs to the group groups[i] (any integer id,
 * usually the task); a group of one gets 0.
 */
export function computeAdvantages(
  rewards: ArrayLike<number>,
  groups: ArrayLike<number>,
  options: AdvantageOptions = {},
): Float32Array {
  const { estimator } = parseOptions(options, 'computeAdvantages options');
  const r = float32Array(rewards, 'rewards');
  const g = int32Array(groups, 'groups', { length: r.length, lengthOf: 'one group id per reward' });
  if (estimator === 'maxrl') {
    const i = r.findIndex((x) => x < 0);
    if (i >= 0) throw invalidArg(`rewards[${i}]`, `is ${r[i]}: the maxrl estimator divides by a group's mean reward, so rewards must be >= 0`, "use the rloo estimator, or leave out the settings that give negative rewards (emptyPatchPenalty, overlong, truncation: 'penalize')");
  }
  return native().computeAdvantages({ rewards: r, groups: g, estimator });
}
