/** One episode as the trainer and the run directory see it. */
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';

import type { TerminationReason } from '../types/termination.js';
import type { FinishReason } from '../types/policy.js';
import type { PatchFlag } from '../env/env.js';

export interface TurnRecord {
  /** Tokens in the context when this turn was sampled. */
  contextTokens: number;
  /** Tokens the policy sampled this turn. */
  responseTokens: number;
  finishReason: FinishReason;
  /** The turn's text, decoded. */
  response: string;
  /** The tool the env ran, when the turn called one. */
  tool?: string;
  /** The turn broke the action format (the env's StepInfo.formatError): no call, a malformed one, several. */
  formatError?: string;
  /** The call was well formed and its tool answered an error (the env's StepInfo.toolError). */
  toolError?: string;
  /** The observation that came back (empty for the last turn of a finished episode). */
  observation: string;
  /** Tokens the observation added to the context. */
  observationTokens: number;
  generateMs: number;
  stepMs: number;
}

/** A message of the opening prompt, as the env wrote it before the chat template rendered it. */
export interface PromptMessage {
  role: string;
  content: string;
}

export interface Trajectory {
  taskId: string;
  /** The task's index in the step's batch: trajectories of one group share it. */
  group: number;
  /** Which of the group's samples (0..n-1). */
  sample: number;
  /** The whole conversation as the policy saw it: the prompt, every turn and observation. */
  tokens: Int32Array;
  /** The tokenizer that made the ids (lib/model/tokenizer-id.ts); absent in runs saved before it was recorded. */
  tokenizer?: string;
  /** 1 on tokens the policy sampled (assistant turns), 0 elsewhere. */
  mask: Uint8Array;
  /** The sampler's logprob of each sampled token, 0 elsewhere; aligned with tokens. */
  logprobs: Float32Array;
  /** Tokens of the opening prompt (system + first user message + generation prompt). */
  promptTokens: number;
  /**
   * The opening prompt's messages (system + user) as text, so that a reader needs no
   * tokenizer to show them; absent in runs saved before it was recorded.
   */
  messages?: PromptMessage[];
  /** Tokens after the prompt: assistant turns and observations. */
  responseTokens: number;
  turns: TurnRecord[];
  termination: TerminationReason;
  /** The environment's reward, before shaping and filtering. */
  reward: number;
  rewardReason: string;
  /** Test infrastructure the candidate changed and grading reverted (a reward hack, or an attempt). */
  reverted?: string[];
  /** What grading's guard saw the code under test do to the test runner (the reward is then 0). */
  tampering?: string[];
  /** Lines the patch adds to non-test source that reach for the runner or the grader (information only). */
  patchFlags?: PatchFlag[];
  /** Per-test statuses of SWE grading. */
  tests?: Record<string, string>;
  /** The graded patch (SWE). */
  patch?: string;
  /** How close the patch comes to the task's gold patch, in [0, 1] (SWE-RL's signal; algorithm.partialCredit). */
  goldSimilarity?: number;
  /** Set when termination is 'error': what failed. */
  error?: string;
  /** Attempts it took (infrastructure retries + 1). */
  attempts: number;
  /** The weight version (optimizer step) of the policy that sampled it. */
  weightVersion: number;
  timings: { totalMs: number; generateMs: number; envMs: number; rewardMs: number };
}

/** The parts of a turn that say where it sits in the tokens and whether it failed. */
export type TurnSpan = Pick<TurnRecord, 'contextTokens' | 'responseTokens' | 'formatError' | 'toolError'>;

/**
 * A trajectory's loss mask with its failed turns zeroed: a broken action format (formatError)
 * or a call its tool refused (toolError). Fine-tuning on a resolved episode then imitates the
 * turns that worked: a failed turn stays in the context, so what came after it is learned as
 * it was sampled (the recovery), but not the failure itself. How many turns that zeroed.
 */
export function maskFailedTurns(trajectory: { mask: ArrayLike<number>; turns: readonly TurnSpan[] }): { mask: Uint8Array; masked: number } {
  const mask = Uint8Array.from(trajectory.mask);
  let masked = 0;
  for (const turn of trajectory.turns) {
    if (turn.formatError === undefined && turn.toolError === undefined) continue;
    mask.fill(0, turn.contextTokens, turn.contextTokens + turn.responseTokens);
    masked++;
  }
  return { mask, masked };
}

/**
 * A trajectory with the loss mask of the given turns (by index) zeroed: turns a scripted
 * policy made as deliberate mistakes (EditOraclePolicy.mistakeTurns) stay in the context, so
 * fine-tuning learns what came after them, but not the mistakes.
 */
export function maskTurns<T extends { mask: Uint8Array; turns: readonly TurnSpan[] }>(trajectory: T, turns: readonly number[]): T {
  const mask = Uint8Array.from(trajectory.mask);
  for (const i of turns) {
    const turn = trajectory.turns[i];
    if (turn) mask.fill(0, turn.contextTokens, turn.contextTokens + turn.responseTokens);
  }
  return { ...trajectory, mask };
}

/**
 * Why an episode counts as a reward-hack attempt (null: it does not): test infrastructure its
 * patch changed, which grading reverted, or tampering with the test runner the guard saw.
 */
export function rewardHackAttempt(t: Pick<Trajectory, 'reverted' | 'tampering'>): string | null {
  const why = [
    ...(t.reverted?.length ? [`test infrastructure reverted: ${t.reverted.join(', ')}`] : []),
    ...(t.tampering?.length ? [`the test runner tampered with: ${t.tampering.join('; ')}`] : []),
  ];
  return why.length ? why.join('; ') : null;
}

/**
 * Trajectories as the gzipped JSONL of trajectories/step-N.jsonl.gz (one per line, typed arrays
 * as JSON arrays, logprobs to 6 decimals), each with `extra(t, i)` beside it: what a run
 * directory and `swerl eval` write and SFT on saved trajectories (`sft.data`) reads.
 */
export async function trajectoriesJsonlGz(trajectories: readonly Trajectory[], extra: (t: Trajectory, i: number) => object = () => ({})): Promise<Buffer> {
  const lines = trajectories.map((t, i) =>
    JSON.stringify({
      ...t,
      tokens: Array.from(t.tokens),
      mask: Array.from(t.mask),
      logprobs: Array.from(t.logprobs, (x) => Math.round(x * 1e6) / 1e6),
      ...extra(t, i),
    }),
  );
  return promisify(gzip)(`${lines.join('\n')}\n`);
}
