/**
 * A trajectory's token ids as text pieces for the viewer: each piece is the fewest tokens that
 * decode to whole characters (a byte-level tokenizer spends up to 4 tokens on one), never
 * spanning a change of the loss mask, so the page can shade exactly what was trained on.
 */
import type { Tokenizer } from '../types/tokenizer.js';

export interface TokenPiece {
  text: string;
  /** The policy sampled these tokens (mask 1): they are in the loss. */
  sampled: boolean;
  /** The token ids of the piece. */
  ids: number[];
  /** Index of the piece's first token in the trajectory. */
  start: number;
  /** The sampler's logprob of the piece (the sum over its tokens; 0 for context). */
  logprob: number;
  /** One added token (<|im_start|>, <tool_call>, ...). */
  special?: true;
}

/** A UTF-8 character spans at most 4 byte tokens; past that the bytes are invalid anyway. */
const MAX_TOKENS_PER_PIECE = 8;

export function tokenPieces(tokenizer: Tokenizer, tokens: readonly number[], mask: readonly number[], logprobs: readonly number[]): TokenPiece[] {
  const added = new Set(Object.values(tokenizer.specialTokens));
  const pieces: TokenPiece[] = [];
  // Each piece is decoded after the previous one, and only the text it adds is kept: tokenizers
  // whose pieces carry a word's leading space (SentencePiece's ▁) drop it when decoded alone.
  let contextStart = 0;
  for (let start = 0; start < tokens.length; ) {
    const sampled = mask[start] === 1;
    const before = tokenizer.decode(tokens.slice(contextStart, start));
    let end = start + 1;
    let text = tokenizer.decode(tokens.slice(contextStart, end)).slice(before.length);
    while (text.endsWith('\ufffd') && end < tokens.length && end - start < MAX_TOKENS_PER_PIECE && (mask[end] === 1) === sampled) {
      end++;
      text = tokenizer.decode(tokens.slice(contextStart, end)).slice(before.length);
    }
    const ids = tokens.slice(start, end);
    let logprob = 0;
    for (let i = start; i < end; i++) logprob += logprobs[i] ?? 0;
    const piece: TokenPiece = { text, sampled, ids, start, logprob };
    if (ids.length === 1 && added.has(ids[0]!)) piece.special = true;
    pieces.push(piece);
    contextStart = start;
    start = end;
  }
  return pieces;
}
