/**
 * One supervised example: token ids and the mask of the ids trained on (1 = the model learns to
 * produce this token), whatever file it came from. Both loaders (chat JSONL, saved
 * trajectories) and in-memory callers (rejection fine-tuning's kept rollouts) make these, and
 * the SFT loop takes nothing else.
 */
import { invalidArg } from '../../errors.js';
import { mixSeed, permutation } from '../../util/random.js';

export interface SftExample {
  tokens: Int32Array;
  /** 1 on trained tokens; never on token 0, which nothing predicts. */
  mask: Uint8Array;
  /** The sampler's logprobs of the trained tokens, when the data has them (ratio statistics only). */
  logprobs?: Float32Array;
  /** Where it came from: a file path, or a caller's label. */
  source: string;
  /** Unique within a dataset: `file:line` for files. */
  id: string;
}

/** Trained tokens of an example. */
export function trainedTokens(example: SftExample): number {
  let n = 0;
  for (const m of example.mask) n += m;
  return n;
}

/** An example from a trajectory (the agent loop's Trajectory, or a record read back from a run), ids and mask as they are. */
export function trajectoryExample(trajectory: { tokens: ArrayLike<number>; mask: ArrayLike<number>; logprobs?: ArrayLike<number> }, source: string, id: string): SftExample {
  const tokens = Int32Array.from(trajectory.tokens);
  const mask = Uint8Array.from(trajectory.mask);
  if (mask.length !== tokens.length) throw invalidArg(`${id} mask`, `has ${mask.length} entries for ${tokens.length} tokens`);
  if (mask[0] === 1) throw invalidArg(`${id} mask[0]`, 'is 1: the first token has nothing predicting it');
  const example: SftExample = { tokens, mask, source, id };
  if (trajectory.logprobs !== undefined && trajectory.logprobs.length === tokens.length) example.logprobs = Float32Array.from(trajectory.logprobs);
  return example;
}

export type OverlongPolicy = 'drop' | 'truncate';

export interface LengthFit {
  examples: SftExample[];
  /** Longer than maxLength and dropped (or truncated to nothing trainable). */
  dropped: number;
  truncated: number;
  /** The longest example before fitting. */
  longest: number;
}

/** Holds every example to maxLength tokens: longer ones are dropped, or cut to their first maxLength tokens. */
export function fitLength(examples: readonly SftExample[], maxLength: number, overlong: OverlongPolicy): LengthFit {
  const out: SftExample[] = [];
  let dropped = 0;
  let truncated = 0;
  let longest = 0;
  for (const e of examples) {
    longest = Math.max(longest, e.tokens.length);
    if (e.tokens.length <= maxLength) {
      out.push(e);
      continue;
    }
    if (overlong === 'drop') {
      dropped++;
      continue;
    }
    const cut: SftExample = { ...e, tokens: e.tokens.slice(0, maxLength), mask: e.mask.slice(0, maxLength) };
    if (e.logprobs) cut.logprobs = e.logprobs.slice(0, maxLength);
    if (trainedTokens(cut) === 0) dropped++;
    else {
      out.push(cut);
      truncated++;
    }
  }
  return { examples: out, dropped, truncated, longest };
}

/**
 * A held-out share of the examples, drawn by the seed (a pure function of it and the count), and
 * the rest for training in their load order. At least one example on each side when the
 * fraction is above 0.
 */
export function splitHeldOut(examples: readonly SftExample[], fraction: number, seed: number): { train: SftExample[]; heldOut: SftExample[] } {
  if (fraction <= 0) return { train: [...examples], heldOut: [] };
  const count = Math.min(examples.length - 1, Math.max(1, Math.round(fraction * examples.length)));
  const held = new Set(permutation(examples.length, mixSeed(seed, 0x4e1d)).slice(0, count));
  return { train: examples.filter((_, i) => !held.has(i)), heldOut: examples.filter((_, i) => held.has(i)) };
}

/** Every id below the model's vocabulary, or an error naming the example, the position and the fix. */
export function assertFitsVocabulary(examples: readonly SftExample[], vocabSize: number): void {
  for (const e of examples) {
    for (let i = 0; i < e.tokens.length; i++) {
      const id = e.tokens[i]!;
      if (id < 0 || id >= vocabSize)
        throw invalidArg(
          `${e.id} tokens[${i}]`,
          `is ${id}, outside the model's vocabulary of ${vocabSize} ids`,
          'trajectories are trained with the model (and tokenizer) that sampled them: use that model, or chat data, which is tokenized for the model',
        );
    }
  }
}
