/**
 * Request bodies parsed, checked and tokenized on a worker thread. On the server's own thread a
 * 2 MB prompt took 2 s to tokenize and 12 MB of small JSON arrays 1.1 s to parse, and neither
 * /health nor any decode step could run meanwhile; there they queue behind each other only.
 */
import { Worker } from 'node:worker_threads';

import { ByteTokenizer } from '../model/byte-tokenizer.js';
import type { Tokenizer } from '../types/tokenizer.js';
import { HttpError } from './http.js';
import type { ParsedRequest, RequestLimits, Route } from './requests.js';

/** What the worker needs to parse requests exactly as this server would. */
export interface WorkerData {
  limits: RequestLimits;
  tokenizer: { kind: 'byte' } | { kind: 'hf'; files: Record<string, string> };
}

export interface DecodeJob {
  id: number;
  route: Route;
  bytes: Uint8Array;
}

export type DecodeReply =
  | { id: number; request: ParsedRequest; error?: undefined }
  | { id: number; error: { status: number; message: string; param: string | null; type: string } };

// Under tap the sources run as TypeScript; built, as JavaScript next to this file.
const WORKER_FILE = new URL(import.meta.url.endsWith('.ts') ? './request-worker.ts' : './request-worker.js', import.meta.url);

export class RequestDecoder {
  private worker!: Worker;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (r: ParsedRequest) => void; reject: (e: HttpError) => void }>();
  private closed = false;

  private constructor(private readonly data: WorkerData) {}

  /** Starts the worker and waits until it has loaded the tokenizer (its errors surface here). */
  static async start(tokenizer: Tokenizer, limits: RequestLimits): Promise<RequestDecoder> {
    const decoder = new RequestDecoder({
      limits,
      tokenizer: tokenizer instanceof ByteTokenizer ? { kind: 'byte' } : { kind: 'hf', files: tokenizer.toFiles() },
    });
    await decoder.spawn();
    return decoder;
  }

  /** The request `bytes` (moved to the worker: the caller must not use them again) ask for. */
  decode(route: Route, bytes: Uint8Array): Promise<ParsedRequest> {
    if (this.closed) return Promise.reject(new HttpError(503, 'the server is shutting down'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, route, bytes } satisfies DecodeJob, [bytes.buffer as ArrayBuffer]);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.worker.terminate();
  }

  private spawn(): Promise<void> {
    const worker = new Worker(WORKER_FILE, { workerData: this.data });
    this.worker = worker;
    // The HTTP server keeps the process alive; a forgotten decoder must not.
    worker.unref();
    let ready = false;
    let failure: Error | undefined;
    worker.on('error', (error) => (failure = error));
    worker.on('message', (reply: DecodeReply | 'ready') => {
      if (reply === 'ready') return void (ready = true);
      const waiting = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (reply.error) waiting?.reject(new HttpError(reply.error.status, reply.error.message, reply.error.param, reply.error.type));
      else waiting?.resolve(reply.request);
    });
    worker.on('exit', (code) => {
      // Out of memory, say: the requests it held fail, and the next ones go to a new worker.
      const why = failure?.message ?? `exit code ${code}`;
      for (const { reject } of this.pending.values()) reject(new HttpError(500, `the request worker stopped (${why})`));
      this.pending.clear();
      if (ready && !this.closed) void this.spawn().catch(() => undefined);
    });
    return new Promise((resolve, reject) => {
      worker.on('message', (message) => message === 'ready' && resolve());
      worker.once('exit', () => reject(failure ?? new Error('the request worker exited before it was ready')));
    });
  }
}
