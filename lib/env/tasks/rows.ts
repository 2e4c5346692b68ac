/**
 * Rows of a dataset file: a JSON array, or JSON Lines read as a stream. A row that cannot be
 * taken (not JSON, not UTF-8, too large, nested too deep) comes back as a parseError naming
 * what is wrong, so one bad line never stops the others from loading.
 */
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';

import { SwerlError } from '../../errors.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../util/json-depth.js';

/** The largest real SWE-bench / SWE-rebench / R2E-Gym rows are a few MB (long patches and test lists). */
export const MAX_ROW_BYTES = 64 * 1024 * 1024;
/** A .json dataset is parsed whole; past this, JSON Lines (streamed) is the way. */
export const MAX_JSON_FILE_BYTES = 256 * 1024 * 1024;

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

/** The field (top-level key) of a row that nests too deep, or null when none does. */
function tooDeep(value: unknown): string | null {
  if (!nestsDeeperThan(value, MAX_JSON_DEPTH)) return null;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return '(the row)';
  const field = Object.entries(value).find(([, v]) => nestsDeeperThan(v, MAX_JSON_DEPTH - 1))?.[0];
  return field ?? '(the row)';
}

function parseRow(line: number, text: string): Row {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { line, parseError: `is not valid JSON (${(error as Error).message})` };
  }
  const field = tooDeep(value);
  if (field !== null) return { line, parseError: `field ${field} nests more than ${MAX_JSON_DEPTH} levels deep; no real row does` };
  return { line, value };
}

function decode(bytes: Uint8Array): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

export async function* readRows(file: string): AsyncGenerator<Row> {
  if (file.endsWith('.json')) {
    const { size } = await fs.stat(file);
    if (size > MAX_JSON_FILE_BYTES) {
      throw new SwerlError('ERR_SWERL_INVALID_TASK', `${file}: is ${(size / 2 ** 20).toFixed(0)} MiB, over the ${MAX_JSON_FILE_BYTES / 2 ** 20} MiB a .json dataset may be (it is read whole); convert it to JSON Lines (.jsonl, one row per line), which is streamed`);
    }
    const text = decode(await fs.readFile(file));
    if (text === null) {
      yield { line: 1, parseError: 'is not valid UTF-8' };
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      yield { line: 1, parseError: `is not valid JSON (${(error as Error).message})` };
      return;
    }
    const rows = Array.isArray(parsed) ? parsed : [parsed];
    for (let i = 0; i < rows.length; i++) {
      const field = tooDeep(rows[i]);
      yield field === null ? { line: i + 1, value: rows[i] } : { line: i + 1, parseError: `field ${field} nests more than ${MAX_JSON_DEPTH} levels deep; no real row does` };
    }
    return;
  }
  for await (const { line, bytes, oversize } of lines(file)) {
    if (oversize) {
      yield { line, parseError: `is larger than ${MAX_ROW_BYTES / 2 ** 20} MiB; no real row is (it was skipped unread)` };
      continue;
    }
    const text = decode(bytes);
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

