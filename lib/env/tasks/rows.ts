/**
 * Rows of a dataset file: a JSON array, or JSON Lines read as a stream. A row that cannot be
 * taken (not JSON, not UTF-8, too large, nested too deep, too many arrays and objects) comes
 * back as a parseError naming what is wrong, so one bad row never stops the others from
 * loading. Its text is measured before JSON.parse builds anything from it (json-text.ts).
 */
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';

import { SwerlError } from '../../errors.js';
import { MAX_JSON_DEPTH } from '../../util/json-depth.js';
import { measureJsonText, topLevelElements, type JsonTextExcess } from './json-text.js';

/** The largest real SWE-bench / SWE-rebench / R2E-Gym rows are a few MB (long patches and test lists). */
export const MAX_ROW_BYTES = 64 * 1024 * 1024;
/** A .json dataset is parsed whole; past this, JSON Lines (streamed) is the way. */
export const MAX_JSON_FILE_BYTES = 256 * 1024 * 1024;
/**
 * Arrays and objects in one row. Real rows hold a handful (test lists, install_config); the
 * bound keeps a 64 MiB row of "{}," from becoming 20 million objects (1.3 GB).
 */
export const MAX_ROW_CONTAINERS = 1_000_000;

const ROW_LIMITS = { depth: MAX_JSON_DEPTH, containers: MAX_ROW_CONTAINERS };

export interface Row {
  /** 1-based line in a JSONL file; 1-based index in a JSON array. */
  line: number;
  value?: unknown;
  /** Set instead of value when the row cannot be taken. */
  parseError?: string;
}

// Not fatal-tolerant: a row of invalid UTF-8 is refused, not loaded with U+FFFD in its patch.
// (ignoreBOM: false drops a leading byte-order mark, which JSON.parse would refuse.)
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

function describeExcess({ kind, path }: JsonTextExcess): string {
  // Read after "the row ": "the row field deep nests ...", or "the row nests ..." when it is itself too deep.
  const field = typeof path[0] === 'string' ? `field ${JSON.stringify(path[0]).slice(1, -1).slice(0, 200)} ` : '';
  return kind === 'depth'
    ? `${field}nests more than ${MAX_JSON_DEPTH} levels deep; no real row does`
    : `${field}holds more than ${MAX_ROW_CONTAINERS} arrays and objects; no real row does`;
}

/** One row's JSON text: measured, then parsed. */
export function parseRowText(text: string): { value: unknown } | { error: string } {
  const excess = measureJsonText(text, ROW_LIMITS);
  if (excess !== null) return { error: describeExcess(excess) };
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    return { error: `is not valid JSON (${(error as Error).message})` };
  }
}

function parseRow(line: number, text: string): Row {
  const parsed = parseRowText(text);
  return 'value' in parsed ? { line, value: parsed.value } : { line, parseError: parsed.error };
}

/** UTF-8 bytes as text (a leading byte-order mark dropped), or null when they are not UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

/** The rows of a whole .json file: its array's elements, each measured and parsed alone. */
function* jsonFileRows(text: string): Generator<Row> {
  const elements = topLevelElements(text);
  if (elements === null) {
    yield parseRow(1, text);  // one row, not in an array
    return;
  }
  const { spans, unclosed, trailing } = elements;
  for (let i = 0; i < spans.length; i++) {
    const [start, end] = spans[i]!;
    yield end - start > MAX_ROW_BYTES
      ? { line: i + 1, parseError: `is larger than ${MAX_ROW_BYTES / 2 ** 20} MiB; no real row is` }
      : parseRow(i + 1, text.slice(start, end));
  }
  if (unclosed) yield { line: spans.length + 1, parseError: 'is missing: the file ends before its array closes (truncated?)' };
  if (trailing) yield { line: spans.length + 1, parseError: 'is past the array\'s closing bracket; a .json dataset is one array, nothing after it' };
}

export async function* readRows(file: string): AsyncGenerator<Row> {
  if (file.endsWith('.json')) {
    const { size } = await fs.stat(file);
    if (size > MAX_JSON_FILE_BYTES) {
      throw new SwerlError('ERR_SWERL_INVALID_TASK', `${file}: is ${(size / 2 ** 20).toFixed(0)} MiB, over the ${MAX_JSON_FILE_BYTES / 2 ** 20} MiB a .json dataset may be (it is read whole); convert it to JSON Lines (.jsonl, one row per line), which is streamed`);
    }
    const text = decodeUtf8(await fs.readFile(file));
    if (text === null) {
      yield { line: 1, parseError: 'is not valid UTF-8' };
      return;
    }
    yield* jsonFileRows(text);
    return;
  }
  for await (const { line, bytes, oversize } of lines(file)) {
    if (oversize) {
      yield { line, parseError: `is larger than ${MAX_ROW_BYTES / 2 ** 20} MiB; no real row is (it was skipped unread)` };
      continue;
    }
    const text = decodeUtf8(bytes);
    if (text === null) {
      yield { line, parseError: 'is not valid UTF-8' };
      continue;
    }
    if (text.trim() === '') continue;
    yield parseRow(line, text);
  }
}

/**
 * The lines of a file as bytes, never holding more than MAX_ROW_BYTES of one line: a longer
 * line is read past and reported as oversize.
 */
async function* lines(file: string): AsyncGenerator<{ line: number; bytes: Uint8Array; oversize: boolean }> {
  let parts: Buffer[] = [];
  let held = 0;
  let oversize = false;
  let line = 0;
  const take = () => {
    const bytes = Buffer.concat(parts, held);
    const result = { line: ++line, bytes, oversize };
    parts = [];
    held = 0;
    oversize = false;
    return result;
  };
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let nl = chunk.indexOf(0x0a, start); nl >= 0; nl = chunk.indexOf(0x0a, start)) {
      hold(chunk.subarray(start, nl));
      yield take();
      start = nl + 1;
    }
    hold(chunk.subarray(start));
  }
  if (held > 0 || oversize) yield take();

  function hold(piece: Buffer): void {
    if (oversize || piece.length === 0) return;
    if (held + piece.length > MAX_ROW_BYTES) {
      oversize = true;
      parts = [];
      held = 0;
      return;
    }
    parts.push(piece);
    held += piece.length;
  }
}

