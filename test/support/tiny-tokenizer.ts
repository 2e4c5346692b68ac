/**
 * A tiny but real Qwen2/Qwen3-style Hugging Face tokenizer: byte-level BPE over GPT-2's byte
 * alphabet with a few dozen merges, Qwen2's NFC normalizer and Split regex pre-tokenizer, and
 * Qwen3's 26 added tokens (same order and special flags) after the base vocabulary.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

import { byteLevelAlphabet, BYTE_TO_CHAR } from '../../lib/model/byte-level.js';

// Qwen2's pre-tokenizer regex, as in Qwen2/Qwen3 tokenizer.json.
const QWEN2_SPLIT =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/** Qwen3's added tokens in id order, and whether HF marks each special. */
const QWEN3_ADDED_TOKENS: [string, boolean][] = [
  ['<|endoftext|>', true], ['<|im_start|>', true], ['<|im_end|>', true],
  ['<|object_ref_start|>', true], ['<|object_ref_end|>', true], ['<|box_start|>', true], ['<|box_end|>', true],
  ['<|quad_start|>', true], ['<|quad_end|>', true], ['<|vision_start|>', true], ['<|vision_end|>', true],
  ['<|vision_pad|>', true], ['<|image_pad|>', true], ['<|video_pad|>', true],
  ['<tool_call>', false], ['</tool_call>', false],
  ['<|fim_prefix|>', false], ['<|fim_middle|>', false], ['<|fim_suffix|>', false], ['<|fim_pad|>', false],
  ['<|repo_name|>', false], ['<|file_sep|>', false],
  ['<tool_response>', false], ['</tool_response>', false], ['<think>', false], ['</think>', false],
];

/** Merges in rank order, written with plain characters (" " and "\n" are spelled Ġ and Ċ below). */
const MERGES: [string, string][] = [
  [' ', 't'], ['h', 'e'], ['i', 'n'], ['\n', '\n'], [' t', 'he'], ['e', 'r'], ['o', 'n'], ['r', 'e'],
  ['u', 's'], ['us', 'er'], ['a', 's'], ['s', 'i'], ['as', 'si'], ['s', 't'], ['assi', 'st'], ['a', 'n'],
  ['an', 't'], ['assist', 'ant'], ['s', 'y'], ['sy', 'st'], ['e', 'm'], ['syst', 'em'], ['t', 'o'],
  ['o', 'l'], ['to', 'ol'], ['n', 'a'], ['m', 'e'], ['na', 'me'], ['"', ':'], [' ', '"'], ['i', 'l'],
  ['f', 'il'], ['fil', 'e'], [' ', 'a'], ['in', 'g'], [' ', 'c'], ['a', 'l'], ['al', 'l'], [' ', 'f'],
];

function spell(text: string): string {
  return Array.from(new TextEncoder().encode(text), (byte) => BYTE_TO_CHAR[byte]).join('');
}

function tinyTokenizerFiles(): { tokenizerJson: object; tokenizerConfig: object; vocabSize: number } {
  const vocab: Record<string, number> = {};
  for (const char of byteLevelAlphabet()) vocab[char] = Object.keys(vocab).length;
  const merges = MERGES.map(([a, b]) => {
    const [left, right] = [spell(a), spell(b)];
    if (!(left in vocab) || !(right in vocab)) throw new Error(`merge ${a}+${b} uses a piece not yet in the vocabulary`);
    vocab[left + right] = Object.keys(vocab).length;
    return `${left} ${right}`;
  });
  const firstAdded = Object.keys(vocab).length;
  const addedTokens = QWEN3_ADDED_TOKENS.map(([content, special], i) => ({
    id: firstAdded + i, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special,
  }));
  const tokenizerJson = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: addedTokens,
    normalizer: { type: 'NFC' },
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: QWEN2_SPLIT }, behavior: 'Isolated', invert: false },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
      ],
    },
    post_processor: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    model: {
      type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '',
      fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab, merges,
    },
  };
  const tokenizerConfig = {
    add_prefix_space: false,
    added_tokens_decoder: Object.fromEntries(addedTokens.map(({ id, ...entry }) => [String(id), entry])),
    additional_special_tokens: QWEN3_ADDED_TOKENS.filter(([, special]) => special).map(([content]) => content).slice(1),
    bos_token: null,
    clean_up_tokenization_spaces: false,
    eos_token: '<|im_end|>',
    errors: 'replace',
    model_max_length: 4096,
    pad_token: '<|endoftext|>',
    split_special_tokens: false,
    tokenizer_class: 'Qwen2Tokenizer',
    unk_token: null,
  };
  return { tokenizerJson, tokenizerConfig, vocabSize: firstAdded + addedTokens.length };
}

/** Writes tokenizer.json and tokenizer_config.json into dir (created if needed). */
export async function writeTinyTokenizer(dir: string): Promise<{ vocabSize: number }> {
  const { tokenizerJson, tokenizerConfig, vocabSize } = tinyTokenizerFiles();
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, 'tokenizer.json'), `${JSON.stringify(tokenizerJson, null, 2)}\n`);
  await fs.writeFile(path.join(dir, 'tokenizer_config.json'), `${JSON.stringify(tokenizerConfig, null, 2)}\n`);
  return { vocabSize };
}
