/**
 * A byte-level tokenizer for tiny models trained from scratch: ids 0..255 are the UTF-8 bytes,
 * 256..264 are ChatML's tokens. Its toFiles() is a genuine HF tokenizer.json (byte-level BPE
 * with no merges) that encodes the same, so a saved model loads in transformers and vLLM.
 */
import { BYTE_TO_CHAR, CHAR_TO_BYTE, byteLevelTokenizerJson } from './byte-level.js';
import type { DecodeOptions, Tokenizer } from '../types/tokenizer.js';

/**
 * Qwen3's ChatML tokens in ByteTokenizer's id order (256 + index). As in Qwen3's own
 * tokenizer, only the first three are special: transformers and vLLM skip special tokens when
 * they decode by default, and the <tool_call>/<think> tags must survive that for tool parsing.
 */
export const CHATML_TOKENS = [
  { content: '<|endoftext|>', special: true },
  { content: '<|im_start|>', special: true },
  { content: '<|im_end|>', special: true },
  { content: '<think>', special: false },
  { content: '</think>', special: false },
  { content: '<tool_call>', special: false },
  { content: '</tool_call>', special: false },
  { content: '<tool_response>', special: false },
  { content: '</tool_response>', special: false },
] as const;

const FIRST_ADDED_ID = 256;

/** tokenizer.json's `added_tokens` entries for `tokens`, numbered from `firstId`. */
export function addedTokensJson(tokens: readonly { content: string; special: boolean }[], firstId: number) {
  return tokens.map((token, i) => ({ id: firstId + i, content: token.content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: token.special }));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export class ByteTokenizer implements Tokenizer {
  readonly vocabSize = FIRST_ADDED_ID + CHATML_TOKENS.length;
  readonly specialTokens: Readonly<Record<string, number>>;
  readonly eosTokenIds: readonly number[];

  readonly #addedText: readonly string[] = CHATML_TOKENS.map((t) => t.content);
  // Longest first, so that at any position the longest added token wins, as in HF's matcher.
  readonly #addedPattern = new RegExp(
    `(${[...this.#addedText].sort((a, b) => b.length - a.length).map(escapeRegExp).join('|')})`,
  );
  readonly #utf8 = new TextEncoder();
  // fatal: false gives U+FFFD for invalid bytes; ignoreBOM keeps a U+FEFF the model wrote.
  readonly #text = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

  constructor() {
    this.specialTokens = Object.freeze(Object.fromEntries(this.#addedText.map((text, i) => [text, FIRST_ADDED_ID + i])));
    this.eosTokenIds = Object.freeze([this.specialTokens['<|im_end|>']!]);
  }

  encode(text: string): number[] {
    const ids: number[] = [];
    // split() with a capturing group alternates plain text (even indexes) and added tokens (odd).
    text.split(this.#addedPattern).forEach((part, i) => {
      if (i % 2 === 1) ids.push(this.specialTokens[part]!);
      else for (const byte of this.#utf8.encode(part)) ids.push(byte);
    });
    return ids;
  }

  decode(ids: ArrayLike<number>, options: DecodeOptions = {}): string {
    let out = '';
    let bytes: number[] = [];
    // Bytes are decoded a run at a time between added tokens, as HF's ByteLevel decoder does,
    // so a cut-short character on either side of a token becomes U+FFFD there.
    const flush = (): void => {
      if (bytes.length > 0) out += this.#text.decode(Uint8Array.from(bytes));
      bytes = [];
    };
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      if (Number.isInteger(id) && id >= 0 && id < FIRST_ADDED_ID) {
        bytes.push(id);
      } else if (Number.isInteger(id) && id >= FIRST_ADDED_ID && id < this.vocabSize) {
        flush();
        const token = CHATML_TOKENS[id - FIRST_ADDED_ID]!;
        if (!(options.skipSpecialTokens && token.special)) out += token.content;
      }
    }
    flush();
    return out;
  }

  tokenId(token: string): number | undefined {
    return this.specialTokens[token] ?? (token.length === 1 ? CHAR_TO_BYTE.get(token) : undefined);
  }

  toFiles(): Record<string, string> {
    const addedTokens = addedTokensJson(CHATML_TOKENS, FIRST_ADDED_ID);
    // No merges, so every byte stays its own piece; splitting text into words first would
    // change nothing and is left off (ByteLevel alone, use_regex false).
    const tokenizerJson = byteLevelTokenizerJson(addedTokens, Object.fromEntries(BYTE_TO_CHAR.map((char, byte) => [char, byte])), []);
    const tokenizerConfig = {
      added_tokens_decoder: Object.fromEntries(addedTokens.map(({ id, ...entry }) => [String(id), entry])),
      additional_special_tokens: ['<|im_start|>', '<|im_end|>'],
      bos_token: null,
      clean_up_tokenization_spaces: false,
      eos_token: '<|im_end|>',
      errors: 'replace',
      pad_token: '<|endoftext|>',
      split_special_tokens: false,
      tokenizer_class: 'PreTrainedTokenizerFast',
      unk_token: null,
    };
    return {
      'tokenizer.json': `${JSON.stringify(tokenizerJson, null, 2)}\n`,
      'tokenizer_config.json': `${JSON.stringify(tokenizerConfig, null, 2)}\n`,
    };
  }
}
