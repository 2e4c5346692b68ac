/**
 * Hugging Face tokenizers (tokenizer.json + tokenizer_config.json) through
 * @huggingface/tokenizers, HF's pure-JS implementation: no native code, never contacts the hub.
 */
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

import { Tokenizer as HfJsTokenizer } from '@huggingface/tokenizers';

import { SwerlError, invalidArg } from '../errors.js';
import type { DecodeOptions, Tokenizer } from '../types/tokenizer.js';

const TOKENIZER_FILE = 'tokenizer.json';
const CONFIG_FILE = 'tokenizer_config.json';

/** The part of @huggingface/tokenizers swerl uses (its typings do not resolve under NodeNext). */
interface HfJs {
  encode(text: string, options: { add_special_tokens: boolean }): { ids: number[] };
  decode(ids: number[], options: { skip_special_tokens: boolean; clean_up_tokenization_spaces: boolean }): string;
  token_to_id(token: string): number | undefined;
}

interface AddedTokenJson {
  id: number;
  content: string;
  special?: boolean;
}

interface TokenizerJson {
  model: { vocab?: Record<string, number> | [string, number][] };
  added_tokens?: AddedTokenJson[];
}

interface TokenizerConfig {
  eos_token?: string | { content: string } | null;
  clean_up_tokenization_spaces?: boolean;
  added_tokens_decoder?: Record<string, Omit<AddedTokenJson, 'id'>>;
}

function tokenizerError(file: string, problem: string, fix: string): SwerlError {
  return new SwerlError('ERR_SWERL_TOKENIZER', `${file} ${problem}; ${fix}`);
}

async function readJson(file: string, required: boolean): Promise<{ text: string; value: unknown } | undefined> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    if (!required) return undefined;
    throw missingTokenizerFile(file);
  }
  return parseJson(file, text);
}

function missingTokenizerFile(file: string): SwerlError {
  return tokenizerError(
    file,
    'does not exist',
    'point at a Hugging Face model directory that has the fast-tokenizer file tokenizer.json ' +
      '(tokenizer.save_pretrained(dir) writes it; a directory with only vocab.json and merges.txt needs converting)',
  );
}

function parseJson(file: string, text: string): { text: string; value: unknown } {
  try {
    return { text, value: JSON.parse(text) as unknown };
  } catch (error) {
    throw tokenizerError(file, `is not valid JSON (${(error as Error).message})`, 'download or save it again');
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Max id + 1 over the model's vocabulary and the added tokens. */
function countIds(json: TokenizerJson, added: readonly AddedTokenJson[]): number {
  const vocab = json.model.vocab ?? {};
  let max = Array.isArray(vocab) ? vocab.length - 1 : -1;
  if (!Array.isArray(vocab)) for (const id of Object.values(vocab)) max = Math.max(max, id);
  for (const token of added) max = Math.max(max, token.id);
  return max + 1;
}

class HfTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly specialTokens: Readonly<Record<string, number>>;
  readonly eosTokenIds: readonly number[];

  readonly #hf: HfJs;
  readonly #files: Record<string, string>;
  readonly #cleanUpSpaces: boolean;

  constructor(hf: HfJs, json: TokenizerJson, config: TokenizerConfig, files: Record<string, string>, configFile: string) {
    this.#hf = hf;
    this.#files = files;
    // transformers' default is false now; the JS library's would be true, which changes text.
    this.#cleanUpSpaces = config.clean_up_tokenization_spaces ?? false;
    const added = json.added_tokens ?? [];
    this.vocabSize = countIds(json, added);
    this.specialTokens = Object.freeze(Object.fromEntries(added.map((t) => [t.content, t.id])));

    const eos: number[] = [];
    const eosToken = typeof config.eos_token === 'string' ? config.eos_token : config.eos_token?.content;
    if (eosToken !== undefined && eosToken !== null) {
      const id = hf.token_to_id(eosToken);
      if (id === undefined) {
        throw tokenizerError(configFile, `names eos_token ${JSON.stringify(eosToken)}, which tokenizer.json does not have`, 'fix eos_token or the added_tokens');
      }
      eos.push(id);
    }
    const imEnd = this.specialTokens['<|im_end|>'];
    if (imEnd !== undefined && !eos.includes(imEnd)) eos.push(imEnd);
    this.eosTokenIds = Object.freeze(eos);
  }

  encode(text: string): number[] {
    return this.#hf.encode(text, { add_special_tokens: false }).ids;
  }

  decode(ids: ArrayLike<number>, options: DecodeOptions = {}): string {
    // HF drops ids it has no token for (a model's padded vocabulary rows); so do we.
    const known = Array.from(ids).filter((id) => Number.isInteger(id) && id >= 0 && id < this.vocabSize);
    if (known.length === 0) return '';
    return this.#hf.decode(known, {
      skip_special_tokens: options.skipSpecialTokens ?? false,
      clean_up_tokenization_spaces: this.#cleanUpSpaces,
    });
  }

  tokenId(token: string): number | undefined {
    return this.#hf.token_to_id(token);
  }

  toFiles(): Record<string, string> {
    return { ...this.#files };
  }
}

/**
 * Checks, synchronously and without loading it, that `dir` holds a byte-level BPE tokenizer.json
 * (what `swerl tokenizer train` writes, and what a model trained from scratch needs: every byte
 * has an id); `field` names the setting in the error.
 */
export function assertBpeTokenizerFolder(dir: string, field: string): void {
  const file = path.join(dir, TOKENIZER_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw invalidArg(field, `names ${dir}, which has no readable tokenizer.json (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, 'make one with swerl tokenizer train DIR --drills 3000, or point at a model directory that has one');
  }
  let value: { model?: { type?: unknown; vocab?: unknown } ; pre_tokenizer?: unknown };
  try {
    value = JSON.parse(text) as typeof value;
  } catch (error) {
    throw invalidArg(field, `names ${file}, which is not valid JSON (${(error as Error).message})`, 'train it again: swerl tokenizer train');
  }
  const type = value?.model?.type;
  if (type !== 'BPE') throw invalidArg(field, `names ${file}, whose model is ${JSON.stringify(type ?? null)}, not BPE`, 'a model trained from scratch takes a byte-level BPE tokenizer: swerl tokenizer train makes one');
  if (!JSON.stringify(value.pre_tokenizer ?? null).includes('ByteLevel'))
    throw invalidArg(field, `names ${file}, a BPE that is not byte-level (no ByteLevel pre-tokenizer): some text would have no ids`, 'swerl tokenizer train makes a byte-level one');
}

/**
 * Loads dir/tokenizer.json and, when there, dir/tokenizer_config.json (for eos_token and
 * clean_up_tokenization_spaces; its chat_template is ignored: swerl renders ChatML itself).
 * Added tokens listed only in tokenizer_config.json's added_tokens_decoder are added too, as
 * transformers does. Offline: nothing is downloaded.
 */
export async function loadTokenizer(dir: string): Promise<Tokenizer> {
  const tokenizerFile = path.join(dir, TOKENIZER_FILE);
  const configFile = path.join(dir, CONFIG_FILE);
  return buildTokenizer((await readJson(tokenizerFile, true))!, await readJson(configFile, false), tokenizerFile, configFile);
}

/** The tokenizer of a toFiles() result: what loadTokenizer gives for a directory of those files. */
export function tokenizerFromFiles(files: Readonly<Record<string, string>>): Tokenizer {
  const tokenizerText = files[TOKENIZER_FILE];
  if (tokenizerText === undefined) throw missingTokenizerFile(TOKENIZER_FILE);
  const configText = files[CONFIG_FILE];
  return buildTokenizer(parseJson(TOKENIZER_FILE, tokenizerText), configText === undefined ? undefined : parseJson(CONFIG_FILE, configText), TOKENIZER_FILE, CONFIG_FILE);
}

function buildTokenizer(
  tokenizer: { text: string; value: unknown },
  config: { text: string; value: unknown } | undefined,
  tokenizerFile: string,
  configFile: string,
): Tokenizer {
  if (!isObject(tokenizer.value) || !isObject(tokenizer.value.model)) {
    throw tokenizerError(tokenizerFile, 'has no "model" object', 'it is not a Hugging Face tokenizer.json; save the tokenizer again');
  }
  if (config !== undefined && !isObject(config.value)) {
    throw tokenizerError(configFile, 'is not a JSON object', 'save the tokenizer again or delete the file');
  }
  const json = tokenizer.value as unknown as TokenizerJson;
  const configValue = (config?.value ?? {}) as TokenizerConfig;
  if (json.added_tokens !== undefined && !Array.isArray(json.added_tokens)) {
    throw tokenizerError(tokenizerFile, 'has "added_tokens" that is not an array', 'save the tokenizer again');
  }
  const added = [...(json.added_tokens ?? [])];
  for (const [id, entry] of Object.entries(configValue.added_tokens_decoder ?? {})) {
    if (!added.some((t) => t.id === Number(id))) added.push({ ...entry, id: Number(id) } as AddedTokenJson);
  }
  // The JS library requires these keys to exist; tokenizer.json writers may omit the null ones.
  const complete = {
    normalizer: null, pre_tokenizer: null, post_processor: null, decoder: null, ...json, added_tokens: added,
  };

  let hf: HfJs;
  try {
    hf = new HfJsTokenizer(complete, configValue) as unknown as HfJs;
  } catch (error) {
    throw tokenizerError(
      tokenizerFile,
      `could not be loaded (${(error as Error).message})`,
      'swerl reads BPE, WordPiece and Unigram tokenizers with the standard HF components; save the tokenizer again with a current transformers',
    );
  }
  const files: Record<string, string> = { [TOKENIZER_FILE]: tokenizer.text };
  if (config !== undefined) files[CONFIG_FILE] = config.text;
  return new HfTokenizer(hf, { ...json, added_tokens: added }, configValue, files, configFile);
}
