/**
 * swerl's own saved trajectories (trajectories/step-N.jsonl.gz, RunDirectory.writeTrajectories)
 * as SFT examples: the token ids and the loss mask exactly as saved, never re-tokenized, so the
 * model is trained on the very ids it (or another run's model) sampled. Filters keep, say,
 * only solved episodes (minReward 1). Turns that failed (a broken action format, a call its tool
 * refused) stay in the context and out of the loss, as rejection fine-tuning treats them
 * (agent/trajectory.ts, maskFailedTurns).
 */
import { maskFailedTurns, type TurnSpan } from '../../agent/trajectory.js';
import { invalidArg } from '../../errors.js';
import type { TerminationReason } from '../../types/termination.js';
import { trajectoryExample, type SftExample } from './example.js';
import { jsonLines } from './lines.js';

export interface TrajectoryFilters {
  /** Keep trajectories whose environment reward is at least this. */
  minReward?: number;
  /** Keep trajectories that ended in one of these ways. */
  terminations?: readonly TerminationReason[];
}

export interface TrajectoryFileResult {
  examples: SftExample[];
  /** Records saved without the id of their tokenizer (runs before it was recorded): their ids could not be checked. */
  unlabeled: number;
  /** Records the filters left out. */
  filtered: number;
  /** Records without a single trained token (episodes over their prompt budget, say). */
  untrained: number;
  /** Failed turns kept in the context and masked out of the loss. */
  maskedTurns: number;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** An array of integers in [min, max], or an error naming the field and the first bad entry. */
function integers(value: unknown, where: string, field: string, min: number, max: number): number[] {
  if (!Array.isArray(value)) throw invalidArg(`${where} ${field}`, 'must be an array of integers');
  for (let i = 0; i < value.length; i++) {
    const v = value[i] as unknown;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw invalidArg(`${where} ${field}[${i}]`, `is ${JSON.stringify(v)}; expected an integer in [${min}, ${max}]`);
  }
  return value as number[];
}

/** A record's turns, where it has them: where each sits in the tokens and whether it failed. */
function readTurns(value: unknown, where: string, length: number): TurnSpan[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw invalidArg(`${where} turns`, 'must be an array of turn records');
  return value.map((turn: unknown, i) => {
    const at = `${where} turns[${i}]`;
    if (!isObject(turn)) throw invalidArg(at, 'is not a JSON object');
    const count = (field: 'contextTokens' | 'responseTokens'): number => {
      const v = turn[field];
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw invalidArg(`${at} ${field}`, `is ${JSON.stringify(v)}; expected an integer >= 0`);
      return v;
    };
    const contextTokens = count('contextTokens'), responseTokens = count('responseTokens');
    if (contextTokens + responseTokens > length) throw invalidArg(at, `spans tokens ${contextTokens} to ${contextTokens + responseTokens}, past the record's ${length}`);
    for (const field of ['formatError', 'toolError'] as const)
      if (turn[field] !== undefined && typeof turn[field] !== 'string') throw invalidArg(`${at} ${field}`, `is ${JSON.stringify(turn[field])}; expected a string`);
    return {
      contextTokens,
      responseTokens,
      ...(turn.formatError !== undefined ? { formatError: turn.formatError as string } : {}),
      ...(turn.toolError !== undefined ? { toolError: turn.toolError as string } : {}),
    };
  });
}

/** One saved record, checked: tokens, mask (0/1, as long), logprobs (when present, as long), turns (when present), reward, termination. */
function readRecord(value: unknown, where: string): { tokens: number[]; mask: number[]; logprobs?: number[]; turns: TurnSpan[]; reward: number; termination: string; tokenizer?: string } {
  if (!isObject(value)) throw invalidArg(where, 'is not a JSON object', 'a trajectory record as trajectories/step-N.jsonl.gz holds it');
  const tokens = integers(value.tokens, where, 'tokens', 0, 2 ** 31 - 1);
  const mask = integers(value.mask, where, 'mask', 0, 1);
  if (mask.length !== tokens.length) throw invalidArg(`${where} mask`, `has ${mask.length} entries for ${tokens.length} tokens`);
  let logprobs: number[] | undefined;
  if (value.logprobs !== undefined) {
    if (!Array.isArray(value.logprobs) || value.logprobs.length !== tokens.length) throw invalidArg(`${where} logprobs`, `must be an array of ${tokens.length} numbers (one per token)`);
    const bad = value.logprobs.findIndex((x) => typeof x !== 'number' || !Number.isFinite(x));
    if (bad >= 0) throw invalidArg(`${where} logprobs[${bad}]`, `is ${JSON.stringify(value.logprobs[bad])}; expected a finite number`);
    logprobs = value.logprobs as number[];
  }
  if (typeof value.reward !== 'number' || !Number.isFinite(value.reward)) throw invalidArg(`${where} reward`, `is ${JSON.stringify(value.reward)}; expected a finite number`);
  if (typeof value.termination !== 'string') throw invalidArg(`${where} termination`, `is ${JSON.stringify(value.termination)}; expected a string`);
  if (value.tokenizer !== undefined && typeof value.tokenizer !== 'string') throw invalidArg(`${where} tokenizer`, `is ${JSON.stringify(value.tokenizer)}; expected a tokenizer id string`);
  const turns = readTurns(value.turns, where, tokens.length);
  return { tokens, mask, ...(logprobs ? { logprobs } : {}), turns, reward: value.reward, termination: value.termination, ...(value.tokenizer !== undefined ? { tokenizer: value.tokenizer } : {}) };
}

/**
 * The examples of one trajectories file (.jsonl or .jsonl.gz); the id of each is `file:line`.
 * With `tokenizer` (the model's tokenizerId), a record made by another tokenizer is refused: its
 * ids would pass the vocabulary check and mean nothing to the model.
 */
export async function loadTrajectoryFile(file: string, filters: TrajectoryFilters = {}, tokenizer?: string): Promise<TrajectoryFileResult> {
  const result: TrajectoryFileResult = { examples: [], unlabeled: 0, filtered: 0, untrained: 0, maskedTurns: 0 };
  for await (const { line, value } of jsonLines(file)) {
    const where = `${file}:${line}`;
    const record = readRecord(value, where);
    if (record.tokenizer === undefined) result.unlabeled++;
    else if (tokenizer !== undefined && record.tokenizer !== tokenizer)
      throw invalidArg(
        `${where} tokenizer`,
        `is ${record.tokenizer}, and the model's tokenizer is ${tokenizer}: the ids were made by another tokenizer`,
        'train trajectories into a model with the tokenizer that made them, or play the episodes again with this model (an oracle takes the model\'s tokenizer: new EditOraclePolicy({ tokenizer: policy.tokenizer }))',
      );
    if ((filters.minReward !== undefined && record.reward < filters.minReward) || (filters.terminations && !filters.terminations.includes(record.termination as TerminationReason))) {
      result.filtered++;
      continue;
    }
    const { mask, masked } = maskFailedTurns(record);
    if (!mask.includes(1)) {
      result.untrained++;
      continue;
    }
    result.maskedTurns += masked;
    result.examples.push(trajectoryExample({ ...record, mask }, file, where));
  }
  return result;
}
