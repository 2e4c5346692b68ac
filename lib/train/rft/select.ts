/**
 * Rejection sampling's filter (Nebius's phase 1): of a round's trajectories, keep those whose
 * patch resolved the task, and train only on their well-formed assistant turns. A turn that
 * broke the action format (no tool call, a malformed one, several: TurnRecord.formatError)
 * stays in the context, so the turns after it are learned as they were sampled, but its own
 * tokens are masked out of the loss.
 */
import type { Trajectory } from '../../agent/trajectory.js';

/** One sequence to fine-tune on: the conversation as sampled, 1 on the tokens to learn. */
export interface RejectionExample {
  id: string;
  tokens: Int32Array;
  mask: Uint8Array;
  /** The sampler's logprobs (ratio statistics only: the loss is the NLL). */
  logprobs: Float32Array;
}

export interface RejectionRound {
  examples: RejectionExample[];
  sampled: number;
  /** Resolved trajectories (reward 1). */
  resolved: number;
  /** Turns kept in the context but masked out of the loss for a format error. */
  maskedTurns: number;
  /** Resolved trajectories dropped because no well-formed turn was left to learn. */
  emptyAfterMasking: number;
  /** Tasks with at least one resolved trajectory. */
  tasksSolved: number;
}

/** The trajectory's loss mask with its format-error turns zeroed; how many turns that zeroed. */
export function maskFormatErrors(trajectory: Trajectory): { mask: Uint8Array; masked: number } {
  const mask = Uint8Array.from(trajectory.mask);
  let masked = 0;
  for (const turn of trajectory.turns) {
    if (turn.formatError === undefined) continue;
    mask.fill(0, turn.contextTokens, turn.contextTokens + turn.responseTokens);
    masked++;
  }
  return { mask, masked };
}

export function selectResolved(trajectories: readonly Trajectory[]): RejectionRound {
  const round: RejectionRound = { examples: [], sampled: trajectories.length, resolved: 0, maskedTurns: 0, emptyAfterMasking: 0, tasksSolved: 0 };
  const solved = new Set<string>();
  for (const t of trajectories) {
    if (t.reward !== 1) continue;
    round.resolved++;
    solved.add(t.taskId);
    const { mask, masked } = maskFormatErrors(t);
    round.maskedTurns += masked;
    if (!mask.includes(1)) {
      round.emptyAfterMasking++;
      continue;
    }
    round.examples.push({ id: `${t.taskId}#${t.sample}`, tokens: t.tokens, mask, logprobs: t.logprobs });
  }
  round.tasksSolved = solved.size;
  return round;
}
