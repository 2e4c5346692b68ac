/**
 * `swerl serve`: the native policy behind an OpenAI-compatible HTTP API, token-in/token-out
 * for RL samplers. Routes:
 *   GET  /health (load, weight version, prefix-cache counters), GET /v1/models
 *   POST /v1/completions        prompt as text or token ids; choices carry token_ids and
 *                               logprobs of the sampled tokens (prompt_logprobs: 0, the prompt
 *                               tokens'); stream: true for SSE
 *   POST /v1/chat/completions   Qwen3 chat template, `tools` rendered into the system turn and
 *                               <tool_call> blocks parsed back into tool_calls; SSE too
 *   POST /generate              SGLang's native API (input_ids in, output_ids and
 *                               meta_info.output_token_logprobs out; input_token_logprobs
 *                               with logprob_start_len)
 *   POST /update_weights_from_disk {model_path}   SGLang's name: swaps the weights between
 *                               decode steps; requests in flight finish on the old weights
 * This file is the server: settings, authorization, routing, the HTTP lifecycle. The routes
 * live in openai.ts and sglang.ts, each choice's sampling in choices.ts, request parsing in
 * requests.ts. Concurrent requests share the policy's decode batches. Sampling is pure temperature unless a
 * request asks for top_p / top_k. Bad requests get OpenAI-style error JSON with its status.
 *
 * Bounded as a server on a shared machine must be: POST bodies must be application/json (415:
 * no web page's simple post gets through) and at most maxBodyBytes (413 as they stream in);
 * n at most maxN; max_tokens within the context; text prompts refused by their bytes before
 * they are tokenized; an API key when one is set (401; /health stays open, as in vLLM); weight
 * updates only from under weightsRoot. Bodies are parsed and tokenized on a worker thread
 * (request-decoder.ts), so /health and the decode loop never wait on a large one.
 */
import { timingSafeEqual } from 'node:crypto';
import { existsSync, realpathSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

import { invalidArg, SwerlError } from '../errors.js';
import type { NativePolicy } from '../model/native-policy.js';
import { ChoiceAborts } from './choices.js';
import { HttpError, readBody, sendError, sendJson } from './http.js';
import { chatCompletions, completions, now, type ServedModel } from './openai.js';
import { RequestDecoder } from './request-decoder.js';
import type { RequestLimits, Route } from './requests.js';
import { WeightUpdates, sglangGenerate } from './sglang.js';


export interface ServeOptions {
  host?: string;
  /** 0 picks a free port. Default 8000. */
  port?: number;
  /** The model id clients name; default 'swerl'. */
  modelName?: string;
  /** Largest request body accepted, refused with 413 as it streams in. Default 16 MiB. */
  maxBodyBytes?: number;
  /** Most choices one request may ask for (n, times the prompts of a batched completion). Default 64. */
  maxN?: number;
  /**
   * When set, every route but GET /health needs `Authorization: Bearer <apiKey>` (as vLLM's
   * --api-key). Default: none (the server listens on loopback by default).
   */
  apiKey?: string;
  /**
   * /update_weights_from_disk loads only directories under this folder (symlinks resolved).
   * Default: none, and weight updates are refused.
   */
  weightsRoot?: string;
}

const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;
const DEFAULT_MAX_N = 64;

export interface RunningServer {
  readonly url: string;
  readonly port: number;
  /** Stops listening, cancels generations in flight and closes every connection. */
  close(): Promise<void>;
}

/** ServeOptions checked, with their defaults. */
interface ServeSettings {
  host: string;
  port: number;
  modelName: string;
  maxBodyBytes: number;
  maxN: number;
  apiKey?: Buffer;
  weightsRoot?: string;
}

function serveSettings(options: ServeOptions): ServeSettings {
  const positive = (field: 'maxBodyBytes' | 'maxN', fallback: number) => {
    const v = options[field] ?? fallback;
    if (!Number.isSafeInteger(v) || v < 1) throw invalidArg(`serve.${field}`, `is ${v}`, 'give a positive integer');
    return v;
  };
  const port = options.port ?? 8000;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw invalidArg('serve.port', `is ${port}`, 'give a port number, 0 for any free one');
  if (options.apiKey === '') throw invalidArg('serve.apiKey', 'is empty', 'give a key, or leave it out to serve without one');
  let weightsRoot: string | undefined;
  if (options.weightsRoot !== undefined) {
    if (!existsSync(options.weightsRoot) || !statSync(options.weightsRoot).isDirectory())
      throw invalidArg('serve.weightsRoot', `${options.weightsRoot} is not a directory`, 'give the folder that holds the checkpoints to load (--weights-root)');
    weightsRoot = realpathSync(options.weightsRoot);
  }
  return {
    host: options.host ?? '127.0.0.1',
    port,
    modelName: options.modelName ?? 'swerl',
    maxBodyBytes: positive('maxBodyBytes', DEFAULT_MAX_BODY_BYTES),
    maxN: positive('maxN', DEFAULT_MAX_N),
    ...(options.apiKey !== undefined ? { apiKey: Buffer.from(options.apiKey) } : {}),
    ...(weightsRoot !== undefined ? { weightsRoot } : {}),
  };
}

const ROUTES: Record<string, Route> = {
  '/v1/completions': 'completions',
  '/v1/chat/completions': 'chat',
  '/generate': 'generate',
  '/update_weights_from_disk': 'weights',
};

export async function startServer(policy: NativePolicy, options: ServeOptions = {}): Promise<RunningServer> {
  const { host: listenHost, port: listenPort, modelName, maxBodyBytes, maxN, apiKey, weightsRoot } = serveSettings(options);
  const maxContext = policy.config.hf.max_position_embeddings ?? Infinity;
  const limits: RequestLimits = { modelName, vocab: policy.config.native.vocabSize, maxContext, maxN };
  const decoder = await RequestDecoder.start(policy.tokenizer, limits);
  const created = now();
  const served: ServedModel = { policy, modelName };
  const weights = new WeightUpdates(policy, weightsRoot);

  function authorized(req: IncomingMessage): boolean {
    if (!apiKey) return true;
    const given = Buffer.from(/^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '');
    return given.length === apiKey.length && timingSafeEqual(given, apiKey);
  }

  /**
   * A POST body, read within the size limit and decoded on the request worker. It must say it
   * is JSON: a web page's form or text/plain post (sent without a CORS preflight) is refused.
   */
  async function post(req: IncomingMessage, route: Route, res: ServerResponse, signal: AbortSignal): Promise<void> {
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json') throw new HttpError(415, `the request's content-type is ${JSON.stringify(type || '(none)')}; send application/json`);
    const request = await decoder.decode(route, await readBody(req, maxBodyBytes));
    const aborts = new ChoiceAborts(signal);
    switch (request.route) {
      case 'completions': return completions(served, res, request, aborts);
      case 'chat': return chatCompletions(served, res, request, aborts);
      case 'generate': return sglangGenerate(policy, res, request, aborts);
      case 'weights': return weights.handle(res, request);
    }
  }

  async function route(req: IncomingMessage, res: ServerResponse, signal: AbortSignal): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const pathname = url.pathname.replace(/\/+$/, '') || '/';
    if (!(req.method === 'GET' && pathname === '/health') && !authorized(req)) throw new HttpError(401, 'this server needs an API key: send Authorization: Bearer <key>');
    res.setHeader('x-swerl-weight-version', String(policy.weights.version));
    if (req.method === 'GET' && pathname === '/health') {
      const load = policy.load;
      const cache = policy.prefixCache;
      const prefixCache = {
        lookups: cache.lookups, hits: cache.hits, reused_tokens: cache.reusedTokens, prefilled_tokens: cache.prefilledTokens,
        evictions: cache.evictions, entries: cache.entries, bytes: cache.bytes,
      };
      return sendJson(res, 200, { status: 'ok', model: modelName, weight_version: policy.weights.version, running: load.running, waiting: load.waiting, prefix_cache: prefixCache });
    }
    if (req.method === 'GET' && pathname === '/v1/models')
      return sendJson(res, 200, { object: 'list', data: [{ id: modelName, object: 'model', created, owned_by: 'swerl', max_model_len: Number.isFinite(maxContext) ? maxContext : null }] });
    const postRoute = ROUTES[pathname];
    if (req.method === 'POST' && postRoute) return post(req, postRoute, res, signal);
    const known = ['/health', '/v1/models', ...Object.keys(ROUTES)];
    if (known.includes(pathname)) throw new HttpError(405, `${req.method} is not allowed on ${pathname}`);
    throw new HttpError(404, `no route ${req.method} ${pathname}; this server has ${known.join(', ')}`);
  }

  const server: Server = createServer((req, res) => {
    const aborter = new AbortController();
    // The client went away before the answer was complete: stop its generations.
    res.on('close', () => {
      if (!res.writableFinished) aborter.abort();
    });
    route(req, res, aborter.signal).catch((error: unknown) => {
      if (aborter.signal.aborted) return;
      const http = error instanceof HttpError ? error
        : error instanceof SwerlError && error.code === 'ERR_SWERL_INVALID_ARG' ? new HttpError(400, error.message)
        : new HttpError(500, `internal error: ${error instanceof Error ? error.message : String(error)}`);
      if (res.headersSent) {
        // Mid-stream: say so in the stream, then end it.
        if (!res.writableEnded) res.end(`data: ${JSON.stringify({ error: { message: http.message, type: http.type, code: http.status } })}\n\n`);
        return;
      }
      sendError(res, http);
    });
  });
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(listenPort, listenHost, () => resolve());
    });
  } catch (error) {
    await decoder.close();
    throw error;
  }
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }).then(() => decoder.close()),
  };
}
