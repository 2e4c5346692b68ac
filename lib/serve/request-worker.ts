/**
 * The request worker's thread (see request-decoder.ts): parses, checks and tokenizes request
 * bodies with its own copy of the served tokenizer, one at a time, and posts back the parsed
 * request or the HttpError's fields.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';

import { tokenizerFromFiles } from '../model/hf-tokenizer.js';
import { ByteTokenizer } from '../model/byte-tokenizer.js';
import { HttpError } from './http.js';
import type { DecodeJob, DecodeReply, WorkerData } from './request-decoder.js';
import { parseBody, parseRequest, type ParsedRequest } from './requests.js';

const { limits, tokenizer: source } = workerData as WorkerData;
const tokenizer = source.kind === 'byte' ? new ByteTokenizer() : tokenizerFromFiles(source.files);
const port = parentPort!;

/**
 * Where CPU is short, the event loop (/health, the decode steps) goes first: this thread gives
 * way (nice 10). Linux names a thread's own id in /proc/thread-self; elsewhere it keeps its
 * priority.
 */
function yieldCpu(): void {
  try {
    setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), 10);
  } catch {
    // Not Linux, or not allowed: the same priority as the event loop.
  }
}
yieldCpu();

/** The buffers of a request's prompts, moved to the main thread rather than copied. */
function promptBuffers(request: ParsedRequest): ArrayBuffer[] {
  const prompts = request.route === 'completions' ? request.prompts : request.route === 'weights' ? [] : [request.prompt];
  return [...new Set(prompts.map((p) => p.buffer as ArrayBuffer))];
}

function errorReply(id: number, error: unknown): DecodeReply {
  const http = error instanceof HttpError ? error : new HttpError(500, `internal error: ${error instanceof Error ? error.message : String(error)}`);
  return { id, error: { status: http.status, message: http.message, param: http.param, type: http.type } };
}

port.on('message', ({ id, route, bytes }: DecodeJob) => {
  let request: ParsedRequest;
  try {
    request = parseRequest(route, parseBody(bytes), limits, tokenizer);
  } catch (error) {
    return port.postMessage(errorReply(id, error));
  }
  port.postMessage({ id, request } satisfies DecodeReply, promptBuffers(request));
});
port.postMessage('ready');
