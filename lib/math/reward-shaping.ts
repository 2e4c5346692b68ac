/**
 * Reward shaping and group filters over whole trajectories, applied before advantages
 * (docs/loss.md, "Truncation policies" and "Group filters").
 */
import { invalidArg } from '../errors.js';
import { native } from '../native.js';
import { optionsParser } from '../schema.js';
import { sequenceLayout } from './sequences.js';
import { float32Array, int32Array, maskArray } from './validate.js';
import { TERMINATION_REASONS, type TerminationReason } from '../types/termination.js';

function terminationCodes(reasons: ArrayLike<string>, field: string, length: number): Uint8Array {
  if (!Array.isArray(reasons)) throw invalidArg(field, 'must be an array of termination reasons');
  if (reasons.length !== length) {
    throw invalidArg(field, `has ${reasons.length} elements but must have ${length} (one per reward)`);
  }
  return Uint8Array.from(reasons, (reason, i) => {
    const code = TERMINATION_REASONS.indexOf(reason as TerminationReason);
    if (code < 0) {
      throw invalidArg(`${field}[${i}]`, `is ${JSON.stringify(reason)}`, `use one of ${TERMINATION_REASONS.join(', ')}`);
    }
    return code;
  });
}

export interface CompactFilterArgs {
  rewards: ArrayLike<number>;
  terminations: ArrayLike<TerminationReason>;
  /** Optional token mask of the flattened batch, with seqLengths or sequenceIds. */
  mask?: ArrayLike<number | boolean>;
  seqLengths?: ArrayLike<number>;
  sequenceIds?: ArrayLike<number>;
}

/**
 * DeepSWE compact filtering (the `mask` truncation policy): trajectories that ended by
 * max_context, max_steps or timeout get reward 0 and, when a mask is given, every token
 * masked out; they stay in their group for the baseline. env_timeout and error are kept.
 */
export function compactFilter(args: CompactFilterArgs): {
  rewards: Float32Array;
  filtered: Uint8Array;
  mask?: Uint8Array;
} {
  const rewards = float32Array(args.rewards, 'compactFilter.rewards');
  const terminations = terminationCodes(args.terminations, 'compactFilter.terminations', rewards.length);
  if (args.mask === undefined) return native().compactFilter({ rewards, terminations });
  const mask = maskArray(args.mask, 'compactFilter.mask');
  const layout = sequenceLayout(
    { seqLengths: args.seqLengths, sequenceIds: args.sequenceIds, numSequences: rewards.length },
    mask.length,
    'compactFilter',
  );
  if (layout.numSequences !== rewards.length) {
    throw invalidArg('compactFilter.seqLengths', `describes ${layout.numSequences} sequences`, `it must describe ${rewards.length}, one per reward`);
  }
  return native().compactFilter({ rewards, terminations, mask, sequenceIds: layout.sequenceIds });
}

/** Nebius's turn penalty's defaults: 0 below 10 turns, -1 at 40. */
export const TURN_PENALTY_DEFAULTS = { threshold: 10, maxTurns: 40 } as const;

const parseTurnPenalty = optionsParser({
  type: 'object',
  additionalProperties: false,
  properties: {
    threshold: { type: 'number', minimum: 0, default: TURN_PENALTY_DEFAULTS.threshold },
    maxTurns: { type: 'number', exclusiveMinimum: 0, default: TURN_PENALTY_DEFAULTS.maxTurns },
  },
});

/**
 * Nebius's `penalize` truncation policy: adds 0 if turns < threshold, else
 * (threshold - turns) / (maxTurns - threshold), which reaches -1 at maxTurns.
 */
export function turnPenalty(
  rewards: ArrayLike<number>,
  turns: ArrayLike<number>,
  options: { threshold?: number; maxTurns?: number } = {},
): Float32Array {
  const { threshold, maxTurns } = parseTurnPenalty(options, 'turnPenalty options');
  if (!(maxTurns > threshold)) {
    throw invalidArg('turnPenalty options.maxTurns', `is ${maxTurns}`, `it must be greater than threshold (${threshold})`);
  }
  const r = float32Array(rewards, 'turnPenalty rewards');
  const t = int32Array(turns, 'turnPenalty turns', { length: r.length, lengthOf: 'one per reward', min: 0 });
  return native().turnPenalty({ rewards: r, turns: t, threshold, maxTurns });
}

const parseOverlong = optionsParser({
  type: 'object',
  additionalProperties: false,
  required: ['maxLength', 'bufferLength'],
  properties: {
    maxLength: { type: 'number', exclusiveMinimum: 0 },
    bufferLength: { type: 'number', exclusiveMinimum: 0 },
  },
});

/**
 * DAPO's soft overlong penalty on response lengths |y|: adds 0 if |y| <= maxLength -
 * bufferLength, ((maxLength - bufferLength) - |y|) / bufferLength up to maxLength, -1 beyond.
 */
export function overlongPenalty(
  rewards: ArrayLike<number>,
  lengths: ArrayLike<number>,
  options: { maxLength: number; bufferLength: number },
): Float32Array {
  const { maxLength, bufferLength } = parseOverlong(options, 'overlongPenalty options');
  if (bufferLength > maxLength) {
    throw invalidArg('overlongPenalty options.bufferLength', `is ${bufferLength}`, `it must be <= maxLength (${maxLength})`);
  }
  const r = float32Array(rewards, 'overlongPenalty rewards');
  const l = int32Array(lengths, 'overlongPenalty lengths', { length: r.length, lengthOf: 'one per reward', min: 0 });
  return native().overlongPenalty({ rewards: r, lengths: l, maxLength, bufferLength });
}

/**
 * DAPO dynamic sampling: 1 for trajectories whose group has rewards that differ, 0 for every
 * member of a group whose rewards are all equal (no learning signal; a group of one included).
 */
export function keepInformativeGroups(rewards: ArrayLike<number>, groups: ArrayLike<number>): Uint8Array {
  const r = float32Array(rewards, 'keepInformativeGroups rewards');
  const g = int32Array(groups, 'keepInformativeGroups groups', { length: r.length, lengthOf: 'one per reward' });
  return native().keepInformativeGroups({ rewards: r, groups: g });
}

/** Nebius: 1 for samples with a nonzero advantage, 0 for the rest. */
export function keepNonzeroAdvantages(advantages: ArrayLike<number>): Uint8Array {
  return native().keepNonzeroAdvantages({ advantages: float32Array(advantages, 'keepNonzeroAdvantages advantages') });
}
