/**
 * Which tokenizer made a sequence of ids: a short, readable name of a tokenizer's contents
 * (`bpe-2048:1f3a9c0e2b7d`, `byte-265:…`). Saved trajectories carry it, so that ids made by one
 * tokenizer are never trained into a model that reads another (byte ids pass a 2048-token
 * model's vocabulary check, and mean nothing to it).
 */
import { createHash } from 'node:crypto';

import type { Tokenizer } from '../types/tokenizer.js';

const cache = new WeakMap<Tokenizer, string>();

/** The parts of tokenizer.json that decide ids (the vocabulary, merges, added tokens, splitting), hashed. */
function digest(tokenizerJson: string): string {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(tokenizerJson) as Record<string, unknown>;
  } catch {
    return createHash('sha256').update(tokenizerJson).digest('hex').slice(0, 12);
  }
  const added = (value.added_tokens as { id: number; content: string }[] | undefined)?.map((t) => [t.id, t.content]) ?? [];
  const decisive = [value.model, added, value.normalizer ?? null, value.pre_tokenizer ?? null];
  return createHash('sha256').update(JSON.stringify(decisive)).digest('hex').slice(0, 12);
}

/** `<kind>-<ids>:<digest>`: the kind is the model's type (bpe, wordpiece, unigram) or byte for swerl's byte tokenizer. */
export function tokenizerId(tokenizer: Tokenizer): string {
  const known = cache.get(tokenizer);
  if (known !== undefined) return known;
  const json = tokenizer.toFiles()['tokenizer.json'] ?? '';
  let kind = 'unknown';
  try {
    const model = (JSON.parse(json) as { model?: { type?: string; merges?: unknown[] } }).model;
    kind = model?.type === 'BPE' && (model.merges?.length ?? 0) === 0 ? 'byte' : String(model?.type ?? 'unknown').toLowerCase();
  } catch {
    // an unreadable file still gets a digest
  }
  const id = `${kind}-${tokenizer.vocabSize}:${digest(json)}`;
  cache.set(tokenizer, id);
  return id;
}
