/** How tokens of a flattened batch map to their sequences (trajectories). */
import { invalidArg } from '../errors.js';
import { int32Array } from './validate.js';

export interface SequenceLayout {
  /** Sequence index of every token, in [0, numSequences). */
  sequenceIds: Int32Array;
  numSequences: number;
}

/**
 * From exactly one of seqLengths (tokens per sequence, in order, summing to T) or
 * sequenceIds (per token, 0-based). `where` prefixes field names in errors.
 */
export function sequenceLayout(
  args: { seqLengths?: ArrayLike<number>; sequenceIds?: ArrayLike<number>; numSequences?: number },
  tokens: number,
  where: string,
): SequenceLayout {
  const { seqLengths, sequenceIds } = args;
  if ((seqLengths === undefined) === (sequenceIds === undefined)) {
    throw invalidArg(`${where}.seqLengths / ${where}.sequenceIds`, 'are both missing or both given', 'give exactly one');
  }
  if (seqLengths !== undefined) {
    const lengths = int32Array(seqLengths, `${where}.seqLengths`, { min: 0 });
    const total = lengths.reduce((a, b) => a + b, 0);
    if (total !== tokens) {
      throw invalidArg(`${where}.seqLengths`, `sums to ${total}`, `it must sum to the number of tokens, ${tokens}`);
    }
    const ids = new Int32Array(tokens);
    let t = 0;
    lengths.forEach((n, s) => {
      ids.fill(s, t, t + n);
      t += n;
    });
    return { sequenceIds: ids, numSequences: lengths.length };
  }
  const ids = int32Array(sequenceIds, `${where}.sequenceIds`, { length: tokens, lengthOf: 'one per token', min: 0 });
  let max = -1;
  for (const id of ids) max = Math.max(max, id);
  const numSequences = args.numSequences ?? max + 1;
  if (!Number.isInteger(numSequences) || numSequences <= max) {
    throw invalidArg(`${where}.numSequences`, `is ${numSequences}`, `it must be an integer > the largest sequence id (${max})`);
  }
  return { sequenceIds: ids, numSequences };
}
