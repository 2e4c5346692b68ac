/**
 * The SFT core, on examples in memory: which examples make step k (epochs of seeded
 * permutations, a pure function of the seed and the step, so a resumed run sees what the
 * uninterrupted one would have), one optimizer step of token-mean NLL through the native
 * policy's fused loss (objective 'nll'), the NLL of held-out examples, and the loop over steps.
 * sft() wraps it with a run directory; rejection fine-tuning calls it on the rollouts it kept.
 */
import { SwerlError, invalidArg } from '../../errors.js';
import type { NativePolicy, TrainSequence } from '../../model/native-policy.js';
import { mixSeed, tasksForStep } from '../../util/random.js';
import { trainedTokens, type SftExample } from './example.js';

/** The examples of step `step` (1-based): sequencesPerStep at a time through a fresh permutation each epoch. */
export function stepExamples<T>(examples: readonly T[], sequencesPerStep: number, seed: number, step: number): T[] {
  if (examples.length === 0) throw invalidArg('examples', 'is empty');
  return tasksForStep(examples.length, sequencesPerStep, mixSeed(seed, 0x5f7), step - 1).map((i) => examples[i]!);
}

/**
 * A batch as trainStep's sequences: weight 1 / (trained tokens of the batch) on each trained
 * token, so the loss is the token-mean NLL over the batch. Old logprobs are the data's sampler
 * logprobs where it has them (they only feed the ratio statistics), else 0.
 */
export function sftSequences(batch: readonly SftExample[]): TrainSequence[] {
  const total = batch.reduce((s, e) => s + trainedTokens(e), 0);
  if (total === 0) throw invalidArg('batch', 'has no trained token', 'every example needs a mask with a 1');
  return batch.map((e) => ({
    tokens: e.tokens,
    weights: Float32Array.from(e.mask, (m) => m / total),
    oldLogprobs: e.logprobs ?? new Float32Array(e.tokens.length),
    advantage: 1,
  }));
}

export interface SftStepResult {
  /** Token-mean negative log-likelihood of the batch's trained tokens under the weights before the step (nats/token). */
  nll: number;
  /** Global gradient norm before clipping. */
  gradNorm: number;
  lr: number;
  /** Mean entropy of the policy at the trained positions. */
  entropy: number;
  /** Every token of the batch, and the trained ones. */
  tokens: number;
  trainedTokens: number;
  seconds: number;
}

/** One optimizer step on a batch: AdamW at the policy's schedule (or `lr`), clipped by global norm. */
export async function sftStep(policy: NativePolicy, batch: readonly SftExample[], options: { lr?: number } = {}): Promise<SftStepResult> {
  const sequences = sftSequences(batch);
  const result = await policy.trainStep({ sequences, loss: { objective: 'nll' }, ...(options.lr !== undefined ? { lr: options.lr } : {}) });
  if (!Number.isFinite(result.loss) || !Number.isFinite(result.gradNorm))
    throw new SwerlError('ERR_SWERL_NUMERIC', `the NLL is ${result.loss} and the gradient norm ${result.gradNorm}`);
  return {
    nll: result.loss,
    gradNorm: result.gradNorm,
    lr: result.lr,
    entropy: result.entropy,
    tokens: result.tokens,
    trainedTokens: result.lossTokens,
    seconds: result.seconds,
  };
}

/** Token-mean NLL of examples' trained tokens under the policy as it is (forward only, no update). */
export async function heldOutNll(policy: NativePolicy, examples: readonly SftExample[], chunk = 32): Promise<{ nll: number; tokens: number }> {
  let sum = 0;
  let tokens = 0;
  for (let at = 0; at < examples.length; at += chunk) {
    const part = examples.slice(at, at + chunk);
    const logprobs = await policy.logprobs(part.map((e) => e.tokens));
    part.forEach((e, k) => {
      const lp = logprobs[k]!;
      for (let i = 0; i < e.mask.length; i++) {
        if (e.mask[i] !== 1) continue;
        sum -= lp[i]!;
        tokens++;
      }
    });
  }
  return { nll: tokens > 0 ? sum / tokens : NaN, tokens };
}

/** A step as metrics.jsonl holds it (sft() adds elapsed time, the data's counts and greedy eval). */
export type SftStepRow = {
  step: number;
  /** Epochs of the training examples completed by the end of this step. */
  epoch: number;
  loss: { nll: number; gradNorm: number; lr: number; entropy: number };
  tokens: { total: number; trained: number };
  heldOut?: { nll: number; tokens: number };
  time: { stepSeconds: number; trainSeconds: number; tokensPerSecond: number };
};

export interface SftLoopOptions {
  sequencesPerStep: number;
  seed: number;
  /** The last step (inclusive). */
  steps: number;
  /** Steps already taken (a resumed run): the loop starts at startStep + 1. */
  startStep?: number;
  heldOut?: readonly SftExample[];
  /** Held-out NLL every this many steps and after the last (0: after the last only). */
  heldOutEvery?: number;
  /** Checked before each step: an aborted signal ends the loop with stopped: true. */
  signal?: AbortSignal;
  /** After each step, awaited before the next: metrics, checkpoints, evaluation. */
  onStep?: (row: SftStepRow) => Promise<void> | void;
}

export interface SftLoopResult {
  /** The last step completed. */
  step: number;
  stopped: boolean;
  last?: SftStepRow;
}

/** Steps startStep + 1 .. steps over the training examples. */
export async function sftLoop(policy: NativePolicy, train: readonly SftExample[], options: SftLoopOptions): Promise<SftLoopResult> {
  const { sequencesPerStep, seed, steps, heldOut = [], heldOutEvery = 0 } = options;
  let step = options.startStep ?? 0;
  let last: SftStepRow | undefined;
  while (step < steps) {
    if (options.signal?.aborted) return { step, stopped: true, ...(last ? { last } : {}) };
    const next = step + 1;
    const started = performance.now();
    const result = await sftStep(policy, stepExamples(train, sequencesPerStep, seed, next));
    const row: SftStepRow = {
      step: next,
      epoch: (next * sequencesPerStep) / train.length,
      loss: { nll: result.nll, gradNorm: result.gradNorm, lr: result.lr, entropy: result.entropy },
      tokens: { total: result.tokens, trained: result.trainedTokens },
      time: { stepSeconds: 0, trainSeconds: result.seconds, tokensPerSecond: result.seconds > 0 ? result.tokens / result.seconds : NaN },
    };
    if (heldOut.length > 0 && (next === steps || (heldOutEvery > 0 && next % heldOutEvery === 0))) row.heldOut = await heldOutNll(policy, heldOut);
    row.time.stepSeconds = (performance.now() - started) / 1000;
    await options.onStep?.(row);
    step = next;
    last = row;
  }
  return { step, stopped: false, ...(last ? { last } : {}) };
}
