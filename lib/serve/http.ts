/**
 * HTTP plumbing of `swerl serve`: request bodies with a size limit, OpenAI-style errors and
 * server-sent events. No framework: node:http is all the server needs.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SwerlError } from '../errors.js';

/** An error that becomes an OpenAI-style error response. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly type = status === 404 ? 'not_found_error' : status >= 500 ? 'server_error' : 'invalid_request_error',
  ) {
    super(message);
  }
}

export const badRequest = (param: string, message: string) => new HttpError(400, `${param} ${message}`, param);

/**
 * The request body, refused with 413 as soon as its content-length or the bytes read so far
 * pass `limitBytes`: never buffered past the limit (node reads and drops the rest after the
 * answer, so the client, still sending, gets the 413 rather than a broken pipe). The bytes are
 * a buffer of their own, so they can be moved to another thread.
 */
export async function readBody(req: IncomingMessage, limitBytes: number): Promise<Uint8Array> {
  const declared = Number(req.headers['content-length']);
  if (declared > limitBytes) throw tooLarge(limitBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limitBytes) throw tooLarge(limitBytes);
    chunks.push(chunk as Buffer);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return bytes;
}

const tooLarge = (limitBytes: number) => new HttpError(413, `the request body is larger than ${limitBytes} bytes (--max-body-bytes)`);

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendError(res: ServerResponse, error: HttpError): void {
  sendJson(res, error.status, { error: { message: error.message, type: error.type, param: error.param, code: error.status } });
}

/** Server-sent events, as OpenAI streams them: `data: {json}` per event, then `data: [DONE]`. */
export class EventStream {
  constructor(private readonly res: ServerResponse) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.flushHeaders();
  }

  send(data: unknown): void {
    if (this.res.writableEnded || this.res.destroyed) throw new SwerlError('ERR_SWERL_ABORTED', 'the client closed the stream');
    this.res.write(`data: ${JSON.stringify(data)}\n\n`);
  }

  end(): void {
    if (this.res.writableEnded || this.res.destroyed) return;
    this.res.write('data: [DONE]\n\n');
    this.res.end();
  }
}

// Field readers for request bodies: the value, or the default when absent/null; a 400 naming
// the field otherwise.
export function optionalNumber(body: Record<string, unknown>, field: string, fallback: number, check?: (v: number) => string | undefined): number {
  const v = body[field];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw badRequest(field, 'must be a number');
  const problem = check?.(v);
  if (problem) throw badRequest(field, problem);
  return v;
}

export function optionalInteger(body: Record<string, unknown>, field: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `in [${min}, ${max}]`;
  return optionalNumber(body, field, fallback, (v) => (Number.isInteger(v) && v >= min && v <= max ? undefined : `must be an integer ${range}`));
}

export function optionalBoolean(body: Record<string, unknown>, field: string, fallback: boolean): boolean {
  const v = body[field];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'boolean') throw badRequest(field, 'must be true or false');
  return v;
}

export function stopStrings(body: Record<string, unknown>): string[] {
  const v = body.stop;
  if (v === undefined || v === null) return [];
  const list = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(list) || list.length > 4 || !list.every((s) => typeof s === 'string' && s.length > 0))
    throw badRequest('stop', 'must be a non-empty string or an array of at most 4 of them');
  return list as string[];
}
