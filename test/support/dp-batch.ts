/**
 * The global batches of the data-parallel tests: random token sequences of a seeded length,
 * each with a seeded advantage, token weights of the whole batch (1 / the global count of
 * trained tokens: the global denominator). One process training on `globalBatch` and the
 * ranks on their shares (lib/train/parallel.ts's rankShare) must agree.
 */
import type { TrainSequence } from '../../lib/model/native-policy.js';
import { mulberry32 } from '../../lib/util/random.js';

export const DP_VOCAB = 265;

/** The loss of step `step`: the policy gradient (RL) and NLL (SFT, rejection fine-tuning) in turn. */
export function stepObjective(step: number): 'policy-gradient' | 'nll' {
  return step % 2 === 0 ? 'policy-gradient' : 'nll';
}

export function globalBatch(step: number, seed: number, sequences = 6): TrainSequence[] {
  const rand = mulberry32(seed * 1000 + step);
  const drafts = Array.from({ length: sequences }, () => {
    const length = 8 + Math.floor(rand() * 24);
    const tokens = Array.from({ length }, () => Math.floor(rand() * 256));
    const prompt = 2 + Math.floor(rand() * 4);
    return { tokens, prompt, advantage: rand() * 2 - 1, oldLogprobs: tokens.map(() => -5 - rand()) };
  });
  const trained = drafts.reduce((n, d) => n + d.tokens.length - d.prompt, 0);
  return drafts.map((d) => ({
    tokens: d.tokens,
    weights: d.tokens.map((_, j) => (j >= d.prompt ? 1 / trained : 0)),
    oldLogprobs: d.oldLogprobs,
    advantage: d.advantage,
  }));
}
