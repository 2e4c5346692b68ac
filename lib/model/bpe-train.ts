/**
 * Trains a byte-level BPE tokenizer for a domain (code, tool calls, tool output) and writes it
 * as a Hugging Face tokenizer.json, which loadTokenizer, transformers and vLLM load as any other.
 *
 * Why our own trainer: the maintained one, Hugging Face's `tokenizers` on npm (0.23), exposes
 * `Tokenizer.train(files)` with the model's default trainer only: no vocabulary size, no added
 * tokens, no initial byte alphabet. The algorithm is small: count the pre-split pieces of the
 * corpus, then merge the most frequent adjacent pair of symbols, again and again.
 *
 * The pre-split decides what the model can copy. A line copied out of a file view into a tool
 * call (`<parameter=old_str>for i in range(2, n):</parameter>`) must tokenize exactly as it did
 * in the view, so no piece may reach across the line's ends: words, digit runs, space runs and
 * punctuation runs are kept apart, a punctuation run never holds `<` but at its start nor `>`
 * but at its end (so `):` stays apart from the `</` after it, `>` from a `}` after it), and
 * merges never cross pieces. GPT-2's split (" for" with its space) fails this: after `>` the
 * same word has no space before it.
 */
import { invalidArg } from '../errors.js';
import { BYTE_LEVEL_STEP, BYTE_TO_CHAR, byteLevelAlphabet, byteLevelTokenizerJson } from './byte-level.js';
import { addedTokensJson, CHATML_TOKENS } from './byte-tokenizer.js';

/** The pre-split (a Hugging Face Split pattern, isolated): see the file's comment. */
export const DOMAIN_PRE_SPLIT =
  '[\\p{L}\\p{M}_]+|\\p{N}+| +|\\t+|\\n+|\\s|<[^\\p{L}\\p{M}\\p{N}_\\s<>]*>?|[^\\p{L}\\p{M}\\p{N}_\\s<>]+>?|>';

export interface AddedToken {
  content: string;
  /** Special tokens are dropped by decode(skipSpecialTokens), as in Hugging Face. */
  special: boolean;
}

export interface BpeTrainOptions {
  /** Ids in all: the 256 bytes, the merges and the added tokens. */
  vocabSize: number;
  /** A merge is learned only while its pair occurs at least this often. */
  minFrequency?: number;
  /** The pre-split pattern (JavaScript and Hugging Face regex syntax alike, Unicode classes allowed). */
  preSplit?: string;
  /** Tokens matched whole before pre-splitting; ChatML's by default, as Qwen3 has them. */
  addedTokens?: readonly AddedToken[];
  /** The eos_token of tokenizer_config.json; must be one of the added tokens. */
  eosToken?: string;
}

export interface BpeTrainResult {
  /** tokenizer.json and tokenizer_config.json, ready to write into a model directory. */
  files: Record<string, string>;
  /** Merges learned (vocabSize - 256 - added tokens at most; fewer when pairs ran out). */
  merges: number;
  /** Ids in all. */
  vocabSize: number;
  /** Distinct pre-split pieces of the corpus and their total count. */
  pieces: { distinct: number; total: number };
}

export const MIN_BPE_VOCAB = 256 + CHATML_TOKENS.length;
export const MAX_BPE_VOCAB = 1 << 20;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The pre-split as a JavaScript RegExp, or an error naming the field. */
export function compilePreSplit(pattern: string, field = 'preSplit'): RegExp {
  let re: RegExp;
  try {
    re = new RegExp(pattern, 'gu');
  } catch (error) {
    throw invalidArg(field, `is not a valid regular expression (${(error as Error).message})`);
  }
  if (re.test('')) throw invalidArg(field, 'matches the empty string', 'every alternative must consume at least one character');
  return re;
}

/** Every pre-split piece of `text` (the text between added tokens), gaps included, in order. */
function splitPieces(text: string, re: RegExp, out: (piece: string) => void): void {
  let at = 0;
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (m.index > at) out(text.slice(at, m.index));
    out(m[0]);
    at = m.index + m[0].length;
  }
  if (at < text.length) out(text.slice(at));
}

const utf8 = new TextEncoder();

/** A piece in byte-level characters (how tokenizer.json spells its vocabulary). */
function byteLevel(piece: string): string[] {
  return Array.from(utf8.encode(piece), (b) => BYTE_TO_CHAR[b]!);
}

interface Word {
  symbols: string[];
  count: number;
}

function pairKey(a: string, b: string): string {
  return `${a}\u0000${b}`;
}

/** Counts of adjacent symbol pairs over all words, and where each pair occurs. */
function countPairs(words: readonly Word[]): { counts: Map<string, number>; where: Map<string, Set<number>> } {
  const counts = new Map<string, number>();
  const where = new Map<string, Set<number>>();
  words.forEach((w, i) => {
    for (let k = 0; k + 1 < w.symbols.length; k++) {
      const key = pairKey(w.symbols[k]!, w.symbols[k + 1]!);
      counts.set(key, (counts.get(key) ?? 0) + w.count);
      let set = where.get(key);
      if (!set) where.set(key, (set = new Set()));
      set.add(i);
    }
  });
  return { counts, where };
}

/** Merges `a b` into `ab` in one word, left to right; returns the pairs removed and added. */
function mergeWord(word: Word, a: string, b: string, ab: string, delta: (key: string, by: number) => void): void {
  const s = word.symbols;
  const out: string[] = [];
  for (let k = 0; k < s.length; k++) {
    if (k + 1 < s.length && s[k] === a && s[k + 1] === b) {
      out.push(ab);
      k++;
    } else {
      out.push(s[k]!);
    }
  }
  for (let k = 0; k + 1 < s.length; k++) delta(pairKey(s[k]!, s[k + 1]!), -word.count);
  for (let k = 0; k + 1 < out.length; k++) delta(pairKey(out[k]!, out[k + 1]!), word.count);
  word.symbols = out;
}

export function validateBpeOptions(options: BpeTrainOptions): Required<BpeTrainOptions> {
  const added = options.addedTokens ?? CHATML_TOKENS;
  const { vocabSize } = options;
  const least = 256 + added.length;
  if (!Number.isInteger(vocabSize) || vocabSize < least || vocabSize > MAX_BPE_VOCAB)
    throw invalidArg('vocabSize', `is ${JSON.stringify(vocabSize)}; it must be an integer in [${least}, ${MAX_BPE_VOCAB}] (the 256 bytes and ${added.length} added tokens come first)`);
  const minFrequency = options.minFrequency ?? 2;
  if (!Number.isInteger(minFrequency) || minFrequency < 1) throw invalidArg('minFrequency', `is ${JSON.stringify(minFrequency)}; it must be an integer >= 1`);
  const preSplit = options.preSplit ?? DOMAIN_PRE_SPLIT;
  compilePreSplit(preSplit);
  const contents = new Set<string>();
  added.forEach((t, i) => {
    if (typeof t?.content !== 'string' || t.content.length === 0) throw invalidArg(`addedTokens[${i}].content`, 'must be a non-empty string');
    if (contents.has(t.content)) throw invalidArg(`addedTokens[${i}].content`, `repeats ${JSON.stringify(t.content)}`);
    contents.add(t.content);
  });
  const eosToken = options.eosToken ?? '<|im_end|>';
  if (!contents.has(eosToken)) throw invalidArg('eosToken', `is ${JSON.stringify(eosToken)}, which is not one of the added tokens`, 'add it to addedTokens or name another');
  return { vocabSize, minFrequency, preSplit, addedTokens: added, eosToken };
}

/**
 * Learns merges from `texts` (each document whole: added tokens inside it are cut out first, as
 * encoding does) and returns the tokenizer files. Deterministic: ties between equally frequent
 * pairs go to the pair whose symbols sort first.
 */
export function trainBpe(texts: Iterable<string>, options: BpeTrainOptions): BpeTrainResult {
  const o = validateBpeOptions(options);
  const re = compilePreSplit(o.preSplit);
  const addedPattern = new RegExp(`(${[...o.addedTokens].map((t) => t.content).sort((a, b) => b.length - a.length).map(escapeRegExp).join('|')})`);

  const counts = new Map<string, number>();
  let total = 0;
  for (const text of texts) {
    text.split(addedPattern).forEach((part, i) => {
      if (i % 2 === 1 || part.length === 0) return;
      splitPieces(part, re, (piece) => {
        counts.set(piece, (counts.get(piece) ?? 0) + 1);
        total++;
      });
    });
  }
  // Sorted, so that the words' order (and so every tie below) does not depend on the corpus's order.
  const words: Word[] = [...counts.entries()].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0)).map(([piece, count]) => ({ symbols: byteLevel(piece), count }));

  const vocab = new Map<string, number>();
  for (const char of byteLevelAlphabet()) vocab.set(char, vocab.size);
  const merges: [string, string][] = [];
  const budget = o.vocabSize - 256 - o.addedTokens.length;
  const { counts: pairs, where } = countPairs(words);
  while (merges.length < budget) {
    let best: string | undefined;
    let bestCount = 0;
    for (const [key, count] of pairs) {
      if (count > bestCount || (count === bestCount && best !== undefined && key < best)) {
        best = key;
        bestCount = count;
      }
    }
    if (best === undefined || bestCount < o.minFrequency) break;
    const [a, b] = best.split('\u0000') as [string, string];
    const ab = a + b;
    merges.push([a, b]);
    vocab.set(ab, vocab.size);
    const touched = [...where.get(best)!];
    const delta = (key: string, by: number, wordIndex: number): void => {
      const next = (pairs.get(key) ?? 0) + by;
      if (next <= 0) pairs.delete(key);
      else pairs.set(key, next);
      if (by > 0) {
        let set = where.get(key);
        if (!set) where.set(key, (set = new Set()));
        set.add(wordIndex);
      }
    };
    for (const i of touched) mergeWord(words[i]!, a, b, ab, (key, by) => delta(key, by, i));
    where.delete(best);
    pairs.delete(best);
  }

  const firstAdded = vocab.size;
  const addedTokens = addedTokensJson(o.addedTokens, firstAdded);
  const tokenizerJson = byteLevelTokenizerJson(addedTokens, Object.fromEntries(vocab), merges, {
    type: 'Sequence',
    pretokenizers: [{ type: 'Split', pattern: { Regex: o.preSplit }, behavior: 'Isolated', invert: false }, BYTE_LEVEL_STEP],
  });
  const specials = o.addedTokens.filter((t) => t.special).map((t) => t.content);
  const tokenizerConfig = {
    added_tokens_decoder: Object.fromEntries(addedTokens.map(({ id, ...entry }) => [String(id), entry])),
    additional_special_tokens: specials.filter((t) => t !== '<|endoftext|>'),
    bos_token: null,
    clean_up_tokenization_spaces: false,
    eos_token: o.eosToken,
    errors: 'replace',
    pad_token: specials.includes('<|endoftext|>') ? '<|endoftext|>' : null,
    split_special_tokens: false,
    tokenizer_class: 'PreTrainedTokenizerFast',
    unk_token: null,
  };
  return {
    files: {
      'tokenizer.json': `${JSON.stringify(tokenizerJson)}\n`,
      'tokenizer_config.json': `${JSON.stringify(tokenizerConfig, null, 2)}\n`,
    },
    merges: merges.length,
    vocabSize: firstAdded + addedTokens.length,
    pieces: { distinct: words.length, total },
  };
}
