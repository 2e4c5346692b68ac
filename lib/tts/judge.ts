/**
 * The execution-free verifier (DeepSWE, R2E-Gym): a judge model reads the issue, the
 * candidate's patch and its condensed trajectory (judge-prompt.ts) and answers YES or NO. Its
 * score is p(YES) / (p(YES) + p(NO)), read from the answers' logprobs given the prompt: no
 * sampling, so a score is a pure function of the judge and the candidate. Any ScoringPolicy
 * is a judge: NativePolicy from its forward pass, RemotePolicy from the servers' prompt
 * logprobs.
 *
 * An answer is its text and the <|im_end|> that closes the turn: p("NO" and then the end),
 * not p of a prefix of "NOT ...". A byte tokenizer spells "YES" in 3 tokens; their logprobs
 * add up to the whole answer's. Training (swerl train-verifier) puts its loss on exactly these
 * ids after exactly these prompts: judgeSequence() builds both.
 */
import { SwerlError, invalidArg } from '../errors.js';
import type { ScoringPolicy } from '../types/policy.js';
import type { Tokenizer } from '../types/tokenizer.js';
import { judgePrompt, type JudgeInput, type JudgePromptOptions } from './judge-prompt.js';

export {
  DEFAULT_JUDGE_TOKEN_BUDGET,
  JUDGE_RENDER,
  JUDGE_SYSTEM_PROMPT,
  episodeChat,
  judgePrompt,
  type JudgeCut,
  type JudgeInput,
  type JudgePrompt,
  type JudgePromptOptions,
} from './judge-prompt.js';

export const JUDGE_ANSWERS = { yes: 'YES', no: 'NO' } as const;

export interface JudgeScoreOptions extends JudgePromptOptions {
  /** Candidates per logprobs call (each is two sequences: the prompt with YES, with NO). Default 8. */
  batchSize?: number;
}

/** The ids of an answer: its text, then the <|im_end|> that ends the judge's turn. */
export function answerIds(tokenizer: Tokenizer, resolved: boolean): Int32Array {
  const end = tokenizer.specialTokens['<|im_end|>'];
  if (end === undefined) throw invalidArg('tokenizer', 'has no <|im_end|> token', 'the judge is a ChatML model: use a Qwen tokenizer or ByteTokenizer');
  return Int32Array.from([...tokenizer.encode(resolved ? JUDGE_ANSWERS.yes : JUDGE_ANSWERS.no), end]);
}

/** A training sequence: the prompt, then the answer for the label; mask 1 exactly on the answer's ids. */
export function judgeSequence(tokenizer: Tokenizer, prompt: ArrayLike<number>, resolved: boolean): { tokens: Int32Array; mask: Uint8Array } {
  const answer = answerIds(tokenizer, resolved);
  const tokens = new Int32Array(prompt.length + answer.length);
  tokens.set(prompt);
  tokens.set(answer, prompt.length);
  const mask = new Uint8Array(tokens.length);
  mask.fill(1, prompt.length);
  return { tokens, mask };
}

/** exp(a) / (exp(a) + exp(b)) without overflow: the sigmoid of a - b. */
export function twoWaySoftmax(a: number, b: number): number {
  const d = a - b;
  return d >= 0 ? 1 / (1 + Math.exp(-d)) : Math.exp(d) / (1 + Math.exp(d));
}

/** The sum of the last `n` entries (the answer's logprobs), in float64. */
function answerLogprob(logprobs: Float32Array, n: number): number {
  let sum = 0;
  for (let i = logprobs.length - n; i < logprobs.length; i++) sum += logprobs[i]!;
  return sum;
}

const BROKEN_SCORER = 'a ScoringPolicy gives one logprob per token of each sequence';

function checkedBatchSize(options: { batchSize?: number }): number {
  const batchSize = options.batchSize ?? 8;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw invalidArg('batchSize', `is ${batchSize}`, 'give a whole number >= 1 (default 8)');
  return batchSize;
}

/** p(YES) / (p(YES) + p(NO)) after each rendered prompt (judgePrompt().ids). */
export async function scoreJudgePrompts(scorer: ScoringPolicy, prompts: readonly ArrayLike<number>[], options: { batchSize?: number } = {}): Promise<number[]> {
  const batchSize = checkedBatchSize(options);
  const yes = answerIds(scorer.tokenizer, true);
  const no = answerIds(scorer.tokenizer, false);
  const scores: number[] = [];
  for (let at = 0; at < prompts.length; at += batchSize) {
    const part = prompts.slice(at, at + batchSize);
    const sequences = part.flatMap((prompt) => [judgeSequence(scorer.tokenizer, prompt, true).tokens, judgeSequence(scorer.tokenizer, prompt, false).tokens]);
    const logprobs = await scorer.logprobs(sequences);
    if (logprobs.length !== sequences.length) throw invalidArg('scorer.logprobs()', `returned ${logprobs.length} arrays for ${sequences.length} sequences`, BROKEN_SCORER);
    part.forEach((_, k) => {
      const [lpYes, lpNo] = [logprobs[2 * k]!, logprobs[2 * k + 1]!];
      if (lpYes.length !== sequences[2 * k]!.length || lpNo.length !== sequences[2 * k + 1]!.length)
        throw invalidArg('scorer.logprobs()', `returned ${lpYes.length} and ${lpNo.length} logprobs for sequences of ${sequences[2 * k]!.length} and ${sequences[2 * k + 1]!.length} tokens`, BROKEN_SCORER);
      const score = twoWaySoftmax(answerLogprob(lpYes, yes.length), answerLogprob(lpNo, no.length));
      if (Number.isNaN(score)) throw new SwerlError('ERR_SWERL_NUMERIC', `candidate ${at + k}: the judge gave both answers logprob -Infinity (or NaN)`);
      scores.push(score);
    });
  }
  return scores;
}

/** The judge's score of each candidate, in [0, 1]. */
export async function judgeScores(scorer: ScoringPolicy, inputs: readonly JudgeInput[], options: JudgeScoreOptions = {}): Promise<number[]> {
  if (!Array.isArray(inputs)) throw invalidArg('inputs', 'must be an array of {issue, patch, messages?}');
  const { batchSize, ...promptOptions } = options;
  checkedBatchSize({ ...(batchSize !== undefined ? { batchSize } : {}) });
  const prompts = inputs.map((input, i) => judgePrompt(scorer.tokenizer, input, promptOptions, `inputs[${i}]`).ids);
  return scoreJudgePrompts(scorer, prompts, batchSize !== undefined ? { batchSize } : {});
}
