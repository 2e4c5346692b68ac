/**
 * JSON Lines files, plain or gzipped (told by their first bytes, not their name), read as a
 * stream: a dataset of long agent trajectories can be larger than a string may be.
 */
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';

import { SwerlError, invalidArg } from '../../errors.js';

export interface JsonLine {
  /** 1-based line number in the (decompressed) file. */
  line: number;
  value: unknown;
}

async function isGzip(file: string): Promise<boolean> {
  const handle = await fs.open(file, 'r');
  try {
    const head = Buffer.alloc(2);
    const { bytesRead } = await handle.read(head, 0, 2, 0);
    return bytesRead === 2 && head[0] === 0x1f && head[1] === 0x8b;
  } finally {
    await handle.close();
  }
}

/** Each non-blank line of a JSONL file, parsed; a line that is not JSON is an error naming the file and line. */
export async function* jsonLines(file: string): AsyncGenerator<JsonLine> {
  let gzip: boolean;
  try {
    gzip = await isGzip(file);
  } catch (error) {
    throw invalidArg(file, `cannot be read: ${(error as Error).message}`);
  }
  const raw = createReadStream(file);
  // pipeline hands a read error of the file on to the gunzip stream, and readline rethrows
  // its input's errors from the loop.
  const input = gzip ? pipeline(raw, createGunzip(), () => undefined) : raw;
  let line = 0;
  try {
    for await (const text of createInterface({ input, crlfDelay: Infinity })) {
      line++;
      if (text.trim() === '') continue;
      let value: unknown;
      try {
        // A byte-order mark (an editor's) is not JSON.
        value = JSON.parse(line === 1 ? text.replace(/^\uFEFF/, '') : text);
      } catch (error) {
        throw invalidArg(`${file}:${line}`, `is not valid JSON: ${(error as Error).message}`, 'one JSON object per line');
      }
      yield { line, value };
    }
  } catch (error) {
    if (error instanceof SwerlError) throw error;
    throw invalidArg(file, `cannot be read${gzip ? ' (gzip)' : ''} after line ${line}: ${(error as Error).message}`);
  } finally {
    // Stopped early (an error, or a caller that had enough): the streams go quietly.
    for (const stream of new Set([input, raw])) {
      stream.on('error', () => undefined);
      stream.destroy();
    }
  }
}

/** The first record of a JSONL file (undefined when it has none), for telling formats apart. */
export async function firstJsonLine(file: string): Promise<JsonLine | undefined> {
  for await (const record of jsonLines(file)) return record;
  return undefined;
}
