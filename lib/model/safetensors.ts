/**
 * Hugging Face safetensors checkpoints, as bytes: reading headers and tensor bytes, and writing
 * single-file or sharded checkpoints the way `save_pretrained` lays them out. Converting dtypes
 * is native code's job; nothing here interprets a tensor's bytes.
 *
 * File format: an 8-byte little-endian u64 N, N bytes of UTF-8 JSON
 * `{"__metadata__": {string: string}, "<name>": {"dtype", "shape", "data_offsets": [begin, end]}}`
 * (offsets relative to the data section right after the header), then the data section, which
 * the tensors must cover exactly: no holes, no overlaps, no trailing bytes.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

import { invalidArg, SwerlError } from '../errors.js';
import { syncDirectory } from '../util/atomic.js';

export type SafetensorsDtype = 'F64' | 'F32' | 'F16' | 'BF16' | 'I64' | 'I32' | 'I16' | 'I8' | 'U8' | 'BOOL';

const DTYPE_BYTES: Record<SafetensorsDtype, number> = {
  F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1,
};

export function dtypeBytes(dtype: SafetensorsDtype): number {
  return DTYPE_BYTES[dtype];
}

function isDtype(value: unknown): value is SafetensorsDtype {
  return typeof value === 'string' && Object.hasOwn(DTYPE_BYTES, value);
}

export interface TensorEntry {
  name: string;
  dtype: SafetensorsDtype;
  shape: number[];
  /** Absolute path of the file holding the tensor. */
  file: string;
  /** Absolute byte offset of the tensor's first byte in `file`. */
  offset: number;
  byteLength: number;
}

export const SINGLE_FILE = 'model.safetensors';
export const INDEX_FILE = 'model.safetensors.index.json';
/** Hugging Face's default `max_shard_size` ("5GB", decimal). */
export const DEFAULT_MAX_SHARD_BYTES = 5e9;
/** The safetensors library refuses headers larger than this; so do we, before allocating one. */
const MAX_HEADER_BYTES = 100_000_000;
const LENGTH_PREFIX_BYTES = 8;
const DATA_ALIGNMENT = 8;
/** One read/write call moves at most ~2 GiB (Linux, Node's limits); embedding matrices can be larger. */
const IO_CHUNK_BYTES = 1 << 30;

/** The error every reader of a checkpoint throws: the file or folder is not what it should be. */
export function checkpointError(message: string): SwerlError {
  return new SwerlError('ERR_SWERL_CHECKPOINT', message);
}

// ---------------------------------------------------------------------------------------------
// Reading

export async function readSafetensorsHeader(
  file: string,
): Promise<{ entries: TensorEntry[]; metadata: Record<string, string> }> {
  const absolute = path.resolve(file);
  return withFile(absolute, 'r', async (handle) => {
      const fileSize = (await handle.stat()).size;
      if (fileSize < LENGTH_PREFIX_BYTES) {
        throw checkpointError(
          `${absolute}: ${fileSize} bytes, shorter than the 8-byte header length; the file is truncated or not safetensors`,
        );
      }
      const prefix = await readExactly(handle, absolute, 0, LENGTH_PREFIX_BYTES, 'the header length');
      const headerLength = new DataView(prefix.buffer).getBigUint64(0, true);
      if (headerLength > BigInt(MAX_HEADER_BYTES)) {
        throw checkpointError(
          `${absolute}: header length ${headerLength} is over the safetensors limit of ${MAX_HEADER_BYTES} bytes; the file is corrupt or not safetensors`,
        );
      }
      const n = Number(headerLength);
      if (LENGTH_PREFIX_BYTES + n > fileSize) {
        throw checkpointError(
          `${absolute}: header length ${n} runs past the end of the ${fileSize}-byte file; the file is truncated`,
        );
      }
      const headerBytes = await readExactly(handle, absolute, LENGTH_PREFIX_BYTES, n, 'the header');
      const dataStart = LENGTH_PREFIX_BYTES + n;
      return parseHeader(absolute, headerBytes, dataStart, fileSize - dataStart);
  });
}

function parseHeader(
  file: string,
  headerBytes: Uint8Array,
  dataStart: number,
  dataLength: number,
): { entries: TensorEntry[]; metadata: Record<string, string> } {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(headerBytes);
  } catch {
    throw checkpointError(`${file}: the header is not valid UTF-8; the file is corrupt or not safetensors`);
  }
  let header: unknown;
  try {
    header = JSON.parse(text);
  } catch (error) {
    throw checkpointError(`${file}: the header is not valid JSON (${(error as Error).message}); the file is corrupt`);
  }
  if (!isPlainObject(header)) {
    throw checkpointError(`${file}: the header is JSON but not an object of tensors; the file is corrupt`);
  }

  const metadata: Record<string, string> = {};
  const located: { entry: TensorEntry; begin: number; end: number }[] = [];
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__') {
      if (!isPlainObject(info)) throw checkpointError(`${file}: __metadata__ is not an object of strings`);
      for (const [key, value] of Object.entries(info)) {
        if (typeof value !== 'string') {
          throw checkpointError(`${file}: __metadata__.${key} is ${JSON.stringify(value)}, not a string`);
        }
        metadata[key] = value;
      }
      continue;
    }
    const { dtype, shape, begin, end } = parseTensorInfo(file, name, info);
    const byteLength = byteLengthOf(file, name, dtype, shape);
    if (end - begin !== byteLength) {
      throw checkpointError(
        `${file}: tensor "${name}" has data_offsets [${begin}, ${end}] (${end - begin} bytes) but ${dtype} ${JSON.stringify(shape)} takes ${byteLength} bytes`,
      );
    }
    if (end > dataLength) {
      throw checkpointError(
        `${file}: tensor "${name}" ends at data offset ${end}, past the ${dataLength}-byte data section; the file is truncated`,
      );
    }
    located.push({ entry: { name, dtype, shape, file, offset: dataStart + begin, byteLength }, begin, end });
  }

  checkContiguous(file, located, dataLength);
  return { entries: located.map((l) => l.entry), metadata };
}

function parseTensorInfo(
  file: string,
  name: string,
  info: unknown,
): { dtype: SafetensorsDtype; shape: number[]; begin: number; end: number } {
  const where = `${file}: tensor "${name}"`;
  if (!isPlainObject(info)) throw checkpointError(`${where} is ${JSON.stringify(info)}, not {dtype, shape, data_offsets}`);
  const { dtype, shape, data_offsets: offsets } = info;
  if (!isDtype(dtype)) {
    throw checkpointError(`${where} has dtype ${JSON.stringify(dtype)}; known dtypes: ${Object.keys(DTYPE_BYTES).join(', ')}`);
  }
  if (!Array.isArray(shape) || !shape.every(isNonNegativeInteger)) {
    throw checkpointError(`${where} has shape ${JSON.stringify(shape)}; a shape is a list of non-negative integers`);
  }
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isNonNegativeInteger) || offsets[0] > offsets[1]) {
    throw checkpointError(`${where} has data_offsets ${JSON.stringify(offsets)}; they must be [begin, end] with 0 <= begin <= end`);
  }
  return { dtype, shape: shape as number[], begin: offsets[0] as number, end: offsets[1] as number };
}

function byteLengthOf(file: string, name: string, dtype: SafetensorsDtype, shape: number[]): number {
  let bytes = DTYPE_BYTES[dtype];
  for (const dim of shape) bytes *= dim;
  if (!Number.isSafeInteger(bytes)) {
    throw checkpointError(`${file}: tensor "${name}" of shape ${JSON.stringify(shape)} is too large to address`);
  }
  return bytes;
}

/** safetensors requires the tensors to tile the data section exactly, in offset order. */
function checkContiguous(file: string, located: { entry: TensorEntry; begin: number; end: number }[], dataLength: number): void {
  located.sort((a, b) => a.begin - b.begin || a.end - b.end);
  let covered = 0;
  let previous: string | undefined;
  for (const { entry, begin, end } of located) {
    if (begin < covered) {
      throw checkpointError(
        `${file}: tensor "${entry.name}" (data_offsets [${begin}, ${end}]) overlaps tensor "${previous}" (which ends at ${covered}); the header is corrupt`,
      );
    }
    if (begin > covered) {
      throw checkpointError(
        `${file}: tensor "${entry.name}" starts at data offset ${begin}, leaving a hole after ${previous === undefined ? 'the header' : `tensor "${previous}"`} (which ends at ${covered}); safetensors requires contiguous tensors`,
      );
    }
    covered = end;
    previous = entry.name;
  }
  if (covered !== dataLength) {
    throw checkpointError(
      `${file}: the tensors cover ${covered} bytes of the ${dataLength}-byte data section; ${dataLength - covered} trailing bytes belong to no tensor`,
    );
  }
}

/**
 * The tensors of a Hugging Face model folder: `model.safetensors`, or (when that is absent, as
 * transformers looks) the shards named by `model.safetensors.index.json`.
 */
export async function readCheckpointTensors(dir: string): Promise<Map<string, TensorEntry>> {
  const absolute = path.resolve(dir);
  const single = path.join(absolute, SINGLE_FILE);
  if (await isFile(single)) {
    const tensors = new Map<string, TensorEntry>();
    for (const entry of (await readSafetensorsHeader(single)).entries) tensors.set(entry.name, entry);
    return tensors;
  }
  const index = path.join(absolute, INDEX_FILE);
  if (await isFile(index)) return readShardedCheckpoint(absolute, index);
  throw checkpointError(
    `${absolute}: no safetensors checkpoint; looked for ${SINGLE_FILE} and ${INDEX_FILE}${await describeFolder(absolute)}`,
  );
}

async function readShardedCheckpoint(dir: string, indexFile: string): Promise<Map<string, TensorEntry>> {
  const weightMap = parseIndex(indexFile, await fs.readFile(indexFile, 'utf8'));
  const shardFiles = [...new Set(weightMap.values())];

  const tensors = new Map<string, TensorEntry>();
  for (const shard of shardFiles) {
    const shardPath = path.join(dir, shard);
    if (!(await isFile(shardPath))) {
      const example = [...weightMap].find(([, s]) => s === shard)![0];
      throw checkpointError(
        `${indexFile}: names shard ${shard} (for tensor "${example}" and others), but ${shardPath} does not exist; the download is incomplete`,
      );
    }
    for (const entry of (await readSafetensorsHeader(shardPath)).entries) {
      const earlier = tensors.get(entry.name);
      if (earlier) {
        throw checkpointError(
          `${dir}: tensor "${entry.name}" appears twice, in ${path.basename(earlier.file)} and ${shard}; remove the stale shard`,
        );
      }
      const listed = weightMap.get(entry.name);
      if (listed !== shard) {
        throw checkpointError(
          `${shardPath}: holds tensor "${entry.name}", which ${indexFile} ${listed === undefined ? 'does not name' : `places in ${listed}`}; the index and shards disagree`,
        );
      }
      tensors.set(entry.name, entry);
    }
  }
  for (const [name, shard] of weightMap) {
    if (!tensors.has(name)) {
      throw checkpointError(`${indexFile}: names tensor "${name}" in ${shard}, but ${path.join(dir, shard)} has no such tensor`);
    }
  }
  return tensors;
}

function parseIndex(indexFile: string, text: string): Map<string, string> {
  let index: unknown;
  try {
    index = JSON.parse(text);
  } catch (error) {
    throw checkpointError(`${indexFile}: not valid JSON (${(error as Error).message})`);
  }
  if (!isPlainObject(index) || !isPlainObject(index.weight_map)) {
    throw checkpointError(`${indexFile}: has no "weight_map" object mapping tensor names to shard files`);
  }
  const weightMap = new Map<string, string>();
  for (const [name, shard] of Object.entries(index.weight_map)) {
    // A shard is a file beside the index: a path elsewhere would read outside the checkpoint.
    if (typeof shard !== 'string' || shard === '' || shard !== path.basename(shard) || shard === '.' || shard === '..') {
      throw checkpointError(`${indexFile}: weight_map["${name}"] is ${JSON.stringify(shard)}; it must be a file name in the same folder`);
    }
    weightMap.set(name, shard);
  }
  return weightMap;
}

async function describeFolder(dir: string): Promise<string> {
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return ' (the folder does not exist)';
  }
  const weights = names.filter((n) => /\.(safetensors|bin|pt|pth|gguf)$/.test(n) || n.endsWith('.index.json')).sort();
  if (weights.length === 0) return ' (the folder holds no weight files)';
  return `; found only ${weights.join(', ')} (convert other formats to safetensors, or rename a single file to ${SINGLE_FILE})`;
}

/**
 * Exactly the tensor's bytes, by a positioned read (never the whole file), in a Uint8Array that
 * owns its ArrayBuffer (offset 0), so it can be handed to native code as is.
 */
export async function readTensorBytes(entry: TensorEntry): Promise<Uint8Array> {
  return withFile(entry.file, 'r', async (handle) => {
      return await readExactly(handle, entry.file, entry.offset, entry.byteLength, `tensor "${entry.name}"`);
  });
}

/**
 * Runs `use` on `file` opened for reading ('r') or for creating ('wx': never overwrite, so old
 * shards can never mix with new ones), and closes it whatever happens.
 */
async function withFile<T>(file: string, mode: 'r' | 'wx', use: (handle: fs.FileHandle) => Promise<T>): Promise<T> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, mode);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw checkpointError(`${file}: already exists; write the checkpoint into an empty folder`);
    throw checkpointError(`${file}: cannot ${mode === 'r' ? 'open' : 'create'} (${code ?? (error as Error).message})`);
  }
  try {
    return await use(handle);
  } finally {
    await handle.close();
  }
}

async function readExactly(
  handle: fs.FileHandle,
  file: string,
  position: number,
  length: number,
  what: string,
): Promise<Uint8Array> {
  const out = new Uint8Array(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(out, done, Math.min(IO_CHUNK_BYTES, length - done), position + done);
    if (bytesRead === 0) {
      throw checkpointError(
        `${file}: ${what} needs bytes ${position}..${position + length}, but the file ends at ${position + done}; it is truncated or changed since its header was read`,
      );
    }
    done += bytesRead;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Writing

export interface TensorToWrite {
  name: string;
  dtype: SafetensorsDtype;
  shape: number[];
}

export interface WriteCheckpointOptions {
  /** Tensor bytes per shard before a new one starts (a larger tensor gets a shard alone). */
  maxShardBytes?: number;
  /** Merged over {"format": "pt"} into every file's __metadata__. */
  metadata?: Record<string, string>;
}

/**
 * Writes `tensors` into the existing folder `dir` (making that atomic, by writing a temporary
 * folder and renaming it, is the caller's job): `model.safetensors` when everything fits in one
 * shard, else `model-0000i-of-0000n.safetensors` plus `model.safetensors.index.json`. Shards are
 * filled in the given order without splitting a tensor, and the data keeps that order.
 * `getBytes(name)` is called once per tensor, in order, just before its bytes are written, so
 * the whole model is never held twice. Returns the absolute paths written.
 */
export async function writeSafetensorsCheckpoint(
  dir: string,
  tensors: TensorToWrite[],
  getBytes: (name: string) => Uint8Array | Promise<Uint8Array>,
  options: WriteCheckpointOptions = {},
): Promise<{ files: string[] }> {
  const absolute = path.resolve(dir);
  const maxShardBytes = options.maxShardBytes ?? DEFAULT_MAX_SHARD_BYTES;
  if (!(Number.isFinite(maxShardBytes) && maxShardBytes > 0)) {
    throw invalidArg('options.maxShardBytes', `is ${maxShardBytes}`, 'give a positive number of bytes');
  }
  const metadata = { format: 'pt', ...validateMetadata(options.metadata ?? {}) };
  const sized = validateTensors(tensors);
  if (!(await isDirectory(absolute))) {
    throw invalidArg('dir', `${absolute} is not an existing folder`, 'create it first (writeSafetensorsCheckpoint writes into it)');
  }

  const shards = planShards(sized, maxShardBytes);
  const names = shards.length === 1 ? [SINGLE_FILE] : shards.map((_, i) => shardFileName(i + 1, shards.length));
  const written: string[] = [];
  try {
    for (let i = 0; i < shards.length; i++) {
      const file = path.join(absolute, names[i]!);
      written.push(file);
      await writeSafetensorsFile(file, shards[i]!, metadata, getBytes);
    }
    if (shards.length > 1) {
      const index = path.join(absolute, INDEX_FILE);
      written.push(index);
      await writeIndex(index, shards, names);
    }
    await syncDirectory(absolute);
  } catch (error) {
    // Leave no partial checkpoint behind for a later reader to trip on.
    await Promise.all(written.map((file) => fs.rm(file, { force: true })));
    throw error;
  }
  return { files: written };
}

interface SizedTensor extends TensorToWrite {
  byteLength: number;
}

function validateTensors(tensors: TensorToWrite[]): SizedTensor[] {
  const seen = new Set<string>();
  return tensors.map((tensor, i) => {
    const field = `tensors[${i}]`;
    if (typeof tensor.name !== 'string' || tensor.name === '' || tensor.name === '__metadata__') {
      throw invalidArg(`${field}.name`, `is ${JSON.stringify(tensor.name)}`, 'give a non-empty name other than __metadata__');
    }
    if (seen.has(tensor.name)) throw invalidArg(`${field}.name`, `"${tensor.name}" is given twice`, 'name each tensor once');
    seen.add(tensor.name);
    if (!isDtype(tensor.dtype)) {
      throw invalidArg(`${field}.dtype`, `is ${JSON.stringify(tensor.dtype)} for "${tensor.name}"`, `use one of ${Object.keys(DTYPE_BYTES).join(', ')}`);
    }
    if (!Array.isArray(tensor.shape) || !tensor.shape.every(isNonNegativeInteger)) {
      throw invalidArg(`${field}.shape`, `is ${JSON.stringify(tensor.shape)} for "${tensor.name}"`, 'give non-negative integers');
    }
    const byteLength = tensor.shape.reduce((bytes, dim) => bytes * dim, DTYPE_BYTES[tensor.dtype]);
    if (!Number.isSafeInteger(byteLength)) throw invalidArg(`${field}.shape`, `of "${tensor.name}" is too large to address`);
    return { name: tensor.name, dtype: tensor.dtype, shape: [...tensor.shape], byteLength };
  });
}

function validateMetadata(metadata: Record<string, string>): Record<string, string> {
  for (const [key, value] of Object.entries(metadata)) {
    if (typeof value !== 'string') throw invalidArg(`options.metadata.${key}`, `is ${JSON.stringify(value)}`, 'safetensors metadata values are strings');
  }
  return metadata;
}

/** Greedy, in order, as huggingface_hub splits state dicts; at least one (possibly empty) shard. */
function planShards(tensors: SizedTensor[], maxShardBytes: number): SizedTensor[][] {
  const shards: SizedTensor[][] = [[]];
  let size = 0;
  for (const tensor of tensors) {
    const current = shards[shards.length - 1]!;
    if (current.length > 0 && size + tensor.byteLength > maxShardBytes) {
      shards.push([tensor]);
      size = tensor.byteLength;
    } else {
      current.push(tensor);
      size += tensor.byteLength;
    }
  }
  return shards;
}

export function shardFileName(index: number, count: number): string {
  const pad = (k: number) => String(k).padStart(5, '0');
  return `model-${pad(index)}-of-${pad(count)}.safetensors`;
}

/** The header bytes of one file: JSON padded with spaces so the data section starts 8-aligned. */
export function encodeSafetensorsHeader(tensors: TensorToWrite[], metadata: Record<string, string>): Uint8Array {
  // Written by hand rather than from an object: JS objects put integer-like keys first, and
  // the header must list tensors in data order.
  const parts = [`"__metadata__":${JSON.stringify(sortedObject(metadata))}`];
  let offset = 0;
  for (const tensor of tensors) {
    const byteLength = tensor.shape.reduce((bytes, dim) => bytes * dim, DTYPE_BYTES[tensor.dtype]);
    parts.push(
      `${JSON.stringify(tensor.name)}:{"dtype":${JSON.stringify(tensor.dtype)},"shape":${JSON.stringify(tensor.shape)},"data_offsets":[${offset},${offset + byteLength}]}`,
    );
    offset += byteLength;
  }
  const json = new TextEncoder().encode(`{${parts.join(',')}}`);
  const padded = Math.ceil((LENGTH_PREFIX_BYTES + json.length) / DATA_ALIGNMENT) * DATA_ALIGNMENT - LENGTH_PREFIX_BYTES;
  if (padded > MAX_HEADER_BYTES) throw checkpointError(`a safetensors header of ${padded} bytes is over the ${MAX_HEADER_BYTES}-byte limit; use smaller shards`);
  const out = new Uint8Array(LENGTH_PREFIX_BYTES + padded).fill(0x20);
  new DataView(out.buffer).setBigUint64(0, BigInt(padded), true);
  out.set(json, LENGTH_PREFIX_BYTES);
  return out;
}

async function writeSafetensorsFile(
  file: string,
  tensors: SizedTensor[],
  metadata: Record<string, string>,
  getBytes: (name: string) => Uint8Array | Promise<Uint8Array>,
): Promise<void> {
  return withFile(file, 'wx', async (handle) => {
      const header = encodeSafetensorsHeader(tensors, metadata);
      let position = await writeAll(handle, header, 0);
      for (const tensor of tensors) {
        const bytes = await getBytes(tensor.name);
        if (!(bytes instanceof Uint8Array) || bytes.length !== tensor.byteLength) {
          const got = bytes instanceof Uint8Array ? `${bytes.length} bytes` : `a ${typeof bytes}, not a Uint8Array`;
          throw checkpointError(
            `${file}: getBytes("${tensor.name}") returned ${got}; ${tensor.dtype} ${JSON.stringify(tensor.shape)} takes ${tensor.byteLength} bytes`,
          );
        }
        position = await writeAll(handle, bytes, position);
      }
      await handle.sync();
  });
}

async function writeIndex(file: string, shards: SizedTensor[][], names: string[]): Promise<void> {
  let totalSize = 0;
  const weightMap: [string, string][] = [];
  shards.forEach((shard, i) => {
    for (const tensor of shard) {
      totalSize += tensor.byteLength;
      weightMap.push([tensor.name, names[i]!]);
    }
  });
  // transformers writes json.dumps(index, indent=2, sort_keys=True) + "\n"; so do we.
  weightMap.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const lines = weightMap.map(([name, shard]) => `    ${JSON.stringify(name)}: ${JSON.stringify(shard)}`);
  const text = `{\n  "metadata": {\n    "total_size": ${totalSize}\n  },\n  "weight_map": {\n${lines.join(',\n')}\n  }\n}\n`;
  return withFile(file, 'wx', async (handle) => {
      await writeAll(handle, new TextEncoder().encode(text), 0);
      await handle.sync();
  });
}

async function writeAll(handle: fs.FileHandle, bytes: Uint8Array, position: number): Promise<number> {
  let done = 0;
  while (done < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, done, Math.min(IO_CHUNK_BYTES, bytes.length - done), position + done);
    done += bytesWritten;
  }
  return position + done;
}

// ---------------------------------------------------------------------------------------------

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNonNegativeInteger(value: unknown): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function sortedObject(record: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

async function isFile(file: string): Promise<boolean> {
  return (await fs.stat(file).catch(() => undefined))?.isFile() ?? false;
}

async function isDirectory(dir: string): Promise<boolean> {
  return (await fs.stat(dir).catch(() => undefined))?.isDirectory() ?? false;
}
