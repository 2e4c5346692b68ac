/**
 * Rejection sampling's filter (Nebius's phase 1): of a round's trajectories, keep those whose
 * patch resolved the task, and train only on the assistant turns that worked. A turn that broke
 * the action format (no tool call, a malformed one, several) or whose tool answered an error
 * stays in the context, so the turns after it are learned as they were sampled, but its own
 * tokens are masked out of the loss (agent/trajectory.ts, maskFailedTurns).
 *
 * A low-entropy policy samples the same resolved episode several times: kept as they are, an
 * easy task's copies outweigh a hard task's one (k samples, up to k copies). `distinct` keeps
 * one of each (token for token, per task), as RFT's paper (Yuan et al. 2023) keeps distinct
 * reasoning paths; the copies are counted either way.
 */
import { createHash } from 'node:crypto';

import { maskFailedTurns, type Trajectory } from '../../agent/trajectory.js';

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
  /** Turns kept in the context but masked out of the loss: a format error or a tool error. */
  maskedTurns: number;
  /** Resolved trajectories dropped because no well-formed turn was left to learn. */
  emptyAfterMasking: number;
  /** Tasks with at least one resolved trajectory. */
  tasksSolved: number;
  /** Resolved trajectories equal, token for token, to an earlier resolved one of their task (dropped when `distinct`). */
  copies: number;
}

/** A resolved episode's identity: its task and every token of it. */
const episodeKey = (t: Trajectory): string =>
  createHash('sha256').update(t.taskId).update('\0').update(new Uint8Array(t.tokens.buffer, t.tokens.byteOffset, t.tokens.byteLength)).digest('base64');

export function selectResolved(trajectories: readonly Trajectory[], { distinct = false }: { distinct?: boolean } = {}): RejectionRound {
  const round: RejectionRound = { examples: [], sampled: trajectories.length, resolved: 0, maskedTurns: 0, emptyAfterMasking: 0, tasksSolved: 0, copies: 0 };
  const solved = new Set<string>();
  const seen = new Set<string>();
  for (const t of trajectories) {
    if (t.reward !== 1) continue;
    round.resolved++;
    solved.add(t.taskId);
    const key = episodeKey(t);
    if (seen.has(key)) {
      round.copies++;
      if (distinct) continue;
    }
    seen.add(key);
    const { mask, masked } = maskFailedTurns(t);
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
