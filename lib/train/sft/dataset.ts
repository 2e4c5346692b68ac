/**
 * The data of an SFT run, ready to train on: loaded (data.ts), held to maxLength, split into
 * training and held-out examples, checked to be trainable, and summed up for the run's
 * metrics, console and summary. Nothing is dropped or cut without being counted and said.
 */
import { invalidArg } from '../../errors.js';
import type { Tokenizer } from '../../types/tokenizer.js';
import { loadSftData, type SftFileReport } from './data.js';
import { fitLength, splitHeldOut, trainedTokens, type SftExample } from './example.js';
import type { SftConfig } from './options.js';

export interface SftDataSummary {
  files: SftFileReport[];
  /** Examples loaded (after the trajectory filters). */
  loaded: number;
  train: number;
  heldOut: number;
  /** Over maxLength: dropped (or truncated to no trained token), and truncated. */
  dropped: number;
  truncated: number;
  /** The longest example as loaded, in tokens. */
  longest: number;
  /** Tokens and trained tokens of the training examples. */
  tokens: number;
  trainedTokens: number;
}

export interface SftDataset {
  train: SftExample[];
  heldOut: SftExample[];
  summary: SftDataSummary;
  /** What the console should be told (over-long examples dropped or cut). */
  warnings: string[];
}

export async function prepareSftDataset(options: SftConfig, tokenizer: Tokenizer, enableThinking: boolean, seed: number): Promise<SftDataset> {
  const data = await loadSftData({
    paths: options.data,
    format: options.format,
    tokenizer,
    enableThinking,
    ...(options.minReward !== undefined ? { minReward: options.minReward } : {}),
    ...(options.terminations !== undefined ? { terminations: options.terminations } : {}),
  });
  const examples = options.trainOn === 'all' ? data.examples.map(everyToken) : data.examples;
  const fit = fitLength(examples, options.maxLength, options.overlong);
  const warnings: string[] = [];
  const unlabeled = data.files.reduce((n, f) => n + f.unlabeled, 0);
  if (unlabeled > 0)
    warnings.push(`${unlabeled} trajectories were saved without the id of the tokenizer that made them (runs older than the check): their ids are trusted to be this model's tokenizer's`);
  if (fit.dropped + fit.truncated > 0) {
    warnings.push(
      `${fit.dropped + fit.truncated} of ${data.examples.length} examples are longer than sft.maxLength (${options.maxLength} tokens; the longest has ${fit.longest}): ` +
        `${fit.dropped} dropped, ${fit.truncated} truncated (sft.overlong "${options.overlong}"); raise sft.maxLength to keep them whole`,
    );
  }
  if (fit.examples.length === 0)
    throw invalidArg('config.sft.maxLength', `(${options.maxLength}) leaves no example: all ${data.examples.length} are longer (the shortest has ${data.examples.reduce((m, e) => Math.min(m, e.tokens.length), Infinity)} tokens)`, 'raise it, or set sft.overlong to "truncate"');
  const { train, heldOut } = splitHeldOut(fit.examples, options.heldOutFraction, seed);
  if (options.heldOutFraction > 0 && fit.examples.length < 2)
    throw invalidArg('config.sft.heldOutFraction', `needs at least 2 examples, and the data has ${fit.examples.length}`, 'add data or set it to 0');
  if (options.sequencesPerStep > train.length)
    throw invalidArg('config.sft.sequencesPerStep', `(${options.sequencesPerStep}) exceeds the ${train.length} training examples`, `lower it to at most ${train.length}, or add data`);
  const summary: SftDataSummary = {
    files: data.files,
    loaded: data.examples.length,
    train: train.length,
    heldOut: heldOut.length,
    dropped: fit.dropped,
    truncated: fit.truncated,
    longest: fit.longest,
    tokens: train.reduce((s, e) => s + e.tokens.length, 0),
    trainedTokens: train.reduce((s, e) => s + trainedTokens(e), 0),
  };
  return { train, heldOut, summary, warnings };
}

/**
 * The example with every token trained but the first, which nothing predicts. The sampler's
 * logprobs go: they cover the assistant's tokens only.
 */
function everyToken({ tokens, source, id }: SftExample): SftExample {
  const mask = new Uint8Array(tokens.length).fill(1);
  mask[0] = 0;
  return { tokens, mask, source, id };
}
