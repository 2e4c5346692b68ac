/**
 * GPT-2's byte-level alphabet ("bytes_to_unicode"), which byte-level BPE tokenizers (GPT-2,
 * Qwen, Llama 3) use to spell every byte as one printable character in tokenizer.json: the
 * printable Latin-1 bytes stand for themselves, the other 68 are shifted to U+0100 and up
 * (so a space is "Ġ" and a newline "Ċ").
 */

function printable(byte: number): boolean {
  return (byte >= 0x21 && byte <= 0x7e) || (byte >= 0xa1 && byte <= 0xac) || (byte >= 0xae && byte <= 0xff);
}

/** BYTE_TO_CHAR[b] is the character that spells byte b. */
export const BYTE_TO_CHAR: readonly string[] = (() => {
  const chars: string[] = [];
  let shifted = 0;
  for (let byte = 0; byte < 256; byte++) {
    chars.push(String.fromCharCode(printable(byte) ? byte : 256 + shifted++));
  }
  return chars;
})();

export const CHAR_TO_BYTE: ReadonlyMap<string, number> = new Map(BYTE_TO_CHAR.map((char, byte) => [char, byte]));

/** The 256 characters in GPT-2's vocabulary order (by code point), which Qwen's ids 0..255 follow. */
export function byteLevelAlphabet(): string[] {
  return [...BYTE_TO_CHAR].sort((a, b) => a.charCodeAt(0) - b.charCodeAt(0));
}

/** The ByteLevel step of tokenizer.json's pipeline (no prefix space; splitting into words, where wanted, comes before it). */
export const BYTE_LEVEL_STEP = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false } as const;

/**
 * A byte-level BPE tokenizer.json: no normalizer, `preTokenizer` (default ByteLevel alone),
 * ByteLevel post-processing and decoding, and a BPE model of `vocab` and `merges` with no
 * dropout, no unknown token, no affixes and no byte fallback.
 */
export function byteLevelTokenizerJson(addedTokens: readonly object[], vocab: Record<string, number>, merges: readonly (readonly [string, string])[], preTokenizer: object = BYTE_LEVEL_STEP): object {
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: addedTokens,
    normalizer: null,
    pre_tokenizer: preTokenizer,
    post_processor: BYTE_LEVEL_STEP,
    decoder: BYTE_LEVEL_STEP,
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: merges.map(([a, b]) => [a, b]),
    },
  };
}
