/**
 * `swerl serve`: the native policy behind an OpenAI-compatible HTTP API, token-in/token-out
 * for RL samplers. Routes:
 *   GET  /health, GET /v1/models
 *   POST /v1/completions        prompt as text or token ids; choices carry token_ids and
 *                               logprobs of the sampled tokens; stream: true for SSE
 *   POST /v1/chat/completions   Qwen3 chat template, `tools` rendered into the system turn and
 *                               <tool_call> blocks parsed back into tool_calls; SSE too
 *   POST /generate              SGLang's native API (input_ids in, output_ids and
 *                               meta_info.output_token_logprobs out)
 *   POST /update_weights_from_disk {model_path}   SGLang's name: swaps the weights between
 *                               decode steps; requests in flight finish on the old weights
 * Concurrent requests share the policy's decode batches. Sampling is pure temperature unless a
 * request asks for top_p / top_k. Bad requests get OpenAI-style error JSON with its status.
 *
 * Bounded as a server on a shared machine must be: POST bodies must be application/json (415:
 * no web page's simple post gets through) and at most maxBodyBytes (413 as they stream in);
 * n at most maxN; max_tokens within the context; text prompts refused by their bytes before
 * they are tokenized; an API key when one is set (401; /health stays open, as in vLLM); weight
 * updates only from under weightsRoot. Bodies are parsed and tokenized on a worker thread
 * (request-decoder.ts), so /health and the decode loop never wait on a large one.
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { existsSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

import { invalidArg, SwerlError } from '../errors.js';
import { parseToolCalls } from '../model/chat-template.js';
import type { NativePolicy } from '../model/native-policy.js';
import { EventStream, HttpError, readBody, sendError, sendJson } from './http.js';
import { RequestDecoder } from './request-decoder.js';
import type { ChatRequest, CompletionRequest, GenerateRequest, RequestLimits, Route, Sampling, WeightsRequest } from './requests.js';
import { TextStreamer } from './text-streamer.js';

export { MAX_PROMPT_BYTES_PER_TOKEN } from './requests.js';

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

/**
 * One abort listener per request, fanned out to its choices: n choices each listening on the
 * request's signal made every abort (and every listener added) cost O(n).
 */
class ChoiceAborts {
  private readonly children = new Set<AbortController>();
  constructor(private readonly signal: AbortSignal) {
    signal.addEventListener('abort', () => this.children.forEach((c) => c.abort()), { once: true });
  }
  child(): AbortController {
    const controller = new AbortController();
    if (this.signal.aborted) controller.abort();
    else this.children.add(controller);
    return controller;
  }
  release(controller: AbortController): void {
    this.children.delete(controller);
  }
}

export interface RunningServer {
  readonly url: string;
  readonly port: number;
  /** Stops listening, cancels generations in flight and closes every connection. */
  close(): Promise<void>;
}

interface Completion {
  tokens: number[];
  logprobs: number[];
  text: string;
  finishReason: 'stop' | 'length';
}

type Listener = (delta: { text: string; tokens: number[]; logprobs: number[] }) => void;

const now = () => Math.floor(Date.now() / 1000);

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
  let updates: Promise<unknown> = Promise.resolve();

  /** One generation, with stop strings and streaming deltas; rejects 'cancelled' as an abort. */
  async function generate(prompt: Int32Array, s: Sampling, index: number, aborts: ChoiceAborts, listener?: Listener): Promise<Completion> {
    const stopper = aborts.child();
    // Text is decoded token by token only when someone reads it as it comes (a stream, stop
    // strings); otherwise once at the end.
    const streamer = listener !== undefined || s.stop.length > 0 ? new TextStreamer(policy.tokenizer, s.stop) : undefined;
    try {
      const g = await policy.generate({
        prompt,
        maxTokens: s.maxTokens,
        temperature: s.temperature,
        topP: s.topP,
        topK: s.topK,
        ...(s.seed !== undefined ? { seed: s.seed + index } : {}),
        ...(s.stopTokens ? { stopTokens: s.stopTokens } : {}),
        signal: stopper.signal,
        ...(streamer
          ? {
              onToken: (token: number, logprob: number) => {
                const delta = streamer.push(token, logprob);
                if (streamer.stopped) stopper.abort();
                if (listener && (delta.text || delta.tokens.length)) listener(delta);
              },
            }
          : {}),
      });
      if (g.finishReason === 'cancelled' && !streamer?.stopped) throw new HttpError(499, 'the client closed the request');
      const rest = streamer?.finish();
      if (listener && rest && (rest.text || rest.tokens.length)) listener(rest);
      return {
        tokens: Array.from(g.tokens),
        logprobs: Array.from(g.logprobs),
        text: streamer ? streamer.text : policy.tokenizer.decode(g.tokens, { skipSpecialTokens: true }),
        finishReason: g.finishReason === 'length' && !streamer?.stopped ? 'length' : 'stop',
      };
    } finally {
      aborts.release(stopper);
    }
  }

  function tokenStrings(tokens: number[], asIds: boolean): string[] {
    return tokens.map((t) => (asIds ? `token_id:${t}` : policy.tokenizer.decode([t])));
  }

  function completionLogprobs(tokens: number[], logprobs: number[], asIds: boolean, offset: number) {
    const strings = tokenStrings(tokens, asIds);
    const textOffset: number[] = [];
    let at = offset;
    for (const s of strings) {
      textOffset.push(at);
      at += s.length;
    }
    return { tokens: strings, token_logprobs: logprobs, top_logprobs: null, text_offset: textOffset };
  }

  async function completions(res: ServerResponse, r: CompletionRequest, signal: ChoiceAborts): Promise<void> {
    const s = r.sampling;
    const id = `cmpl-${randomUUID()}`;
    const jobs = r.prompts.flatMap((prompt, p) => Array.from({ length: s.n }, (_, k) => ({ prompt, index: p * s.n + k })));

    if (r.stream) {
      const stream = new EventStream(res);
      const chunk = (index: number, text: string, extra: object) => ({ id, object: 'text_completion', created: now(), model: modelName, choices: [{ index, text, ...extra }] });
      const results = await Promise.all(
        jobs.map(async ({ prompt, index }) => {
          let offset = 0;
          const done = await generate(prompt, s, index, signal, (d) => {
            stream.send(chunk(index, d.text, { logprobs: r.logprobs ? completionLogprobs(d.tokens, d.logprobs, r.tokensAsIds, offset) : null, token_ids: d.tokens, finish_reason: null }));
            offset += d.text.length;
          });
          stream.send(chunk(index, '', { logprobs: null, token_ids: [], finish_reason: done.finishReason }));
          return { done, prompt };
        }),
      );
      if (r.includeUsage) stream.send({ id, object: 'text_completion', created: now(), model: modelName, choices: [], usage: usage(results) });
      stream.end();
      return;
    }
    const results = await Promise.all(jobs.map(async ({ prompt, index }) => ({ done: await generate(prompt, s, index, signal), prompt, index })));
    sendJson(res, 200, {
      id,
      object: 'text_completion',
      created: now(),
      model: modelName,
      choices: results.map(({ done, prompt, index }) => ({
        index,
        text: done.text,
        logprobs: r.logprobs ? completionLogprobs(done.tokens, done.logprobs, r.tokensAsIds, 0) : null,
        finish_reason: done.finishReason,
        token_ids: done.tokens,
        prompt_token_ids: Array.from(prompt),
      })),
      usage: usage(results),
    });
  }

  function usage(results: { done: Completion; prompt: Int32Array }[]) {
    const promptTokens = [...new Set(results.map((r) => r.prompt))].reduce((a, p) => a + p.length, 0);
    const completionTokens = results.reduce((a, r) => a + r.done.tokens.length, 0);
    return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  }

  function chatMessage(text: string, parseTools: boolean) {
    if (!parseTools) return { role: 'assistant', content: text };
    const parsed = parseToolCalls(text);
    if (parsed.toolCalls.length === 0) return { role: 'assistant', content: text };
    return {
      role: 'assistant',
      content: parsed.content === '' ? null : parsed.content,
      tool_calls: parsed.toolCalls.map((c) => ({
        id: `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`,
        type: 'function',
        function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
      })),
    };
  }

  function chatLogprobs(tokens: number[], logprobs: number[]) {
    return {
      content: tokens.map((t, i) => {
        const token = policy.tokenizer.decode([t]);
        return { token, logprob: logprobs[i]!, bytes: Array.from(Buffer.from(token, 'utf8')), top_logprobs: [] };
      }),
    };
  }

  async function chatCompletions(res: ServerResponse, r: ChatRequest, signal: ChoiceAborts): Promise<void> {
    const { sampling: s, prompt, parseTools } = r;
    const id = `chatcmpl-${randomUUID()}`;
    const finishOf = (done: Completion, message: { tool_calls?: unknown[] }) => (message.tool_calls ? 'tool_calls' : done.finishReason);

    if (r.stream) {
      const stream = new EventStream(res);
      const chunk = (index: number, delta: object, extra: object = {}) => ({ id, object: 'chat.completion.chunk', created: now(), model: modelName, choices: [{ index, delta, logprobs: null, finish_reason: null, ...extra }] });
      const results = await Promise.all(
        Array.from({ length: s.n }, async (_, index) => {
          stream.send(chunk(index, { role: 'assistant', content: '' }));
          // With tools, the text is held until the end: whether it is a tool call is known then.
          const done = await generate(prompt, s, index, signal, parseTools ? undefined : (d) =>
            stream.send(chunk(index, { content: d.text }, { logprobs: r.logprobs ? chatLogprobs(d.tokens, d.logprobs) : null, token_ids: d.tokens })));
          const message = chatMessage(done.text, parseTools);
          if (parseTools) {
            const { role: _role, ...delta } = message;
            stream.send(chunk(index, delta, { logprobs: r.logprobs ? chatLogprobs(done.tokens, done.logprobs) : null, token_ids: done.tokens }));
          }
          stream.send(chunk(index, {}, { finish_reason: finishOf(done, message) }));
          return { done, prompt };
        }),
      );
      if (r.includeUsage) stream.send({ id, object: 'chat.completion.chunk', created: now(), model: modelName, choices: [], usage: usage(results) });
      stream.end();
      return;
    }
    const results = await Promise.all(Array.from({ length: s.n }, async (_, index) => ({ done: await generate(prompt, s, index, signal), prompt, index })));
    sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created: now(),
      model: modelName,
      choices: results.map(({ done, index }) => {
        const message = chatMessage(done.text, parseTools);
        return { index, message, logprobs: r.logprobs ? chatLogprobs(done.tokens, done.logprobs) : null, finish_reason: finishOf(done, message), token_ids: done.tokens };
      }),
      prompt_token_ids: Array.from(prompt),
      usage: usage(results),
    });
  }

  async function sglangGenerate(res: ServerResponse, r: GenerateRequest, signal: ChoiceAborts): Promise<void> {
    const done = await generate(r.prompt, r.sampling, 0, signal);
    const meta: Record<string, unknown> = {
      id: randomUUID().replace(/-/g, ''),
      finish_reason: { type: done.finishReason },
      prompt_tokens: r.prompt.length,
      completion_tokens: done.tokens.length,
      weight_version: String(policy.weights.version),
    };
    if (r.returnLogprob) meta.output_token_logprobs = done.tokens.map((t, i) => [done.logprobs[i], t, null]);
    sendJson(res, 200, { text: done.text, output_ids: done.tokens, meta_info: meta });
  }

  async function updateWeights(res: ServerResponse, { modelPath: dir }: WeightsRequest): Promise<void> {
    const refuse = (message: string) => sendJson(res, 400, { success: false, message, error: { message, type: 'invalid_request_error', param: 'model_path', code: 400 } });
    if (weightsRoot === undefined) return refuse('weight updates are off on this server: start it with --weights-root DIR (weightsRoot) to load checkpoints from under DIR');
    if (!existsSync(dir) || !statSync(dir).isDirectory()) return refuse(`model_path ${dir} is not a directory`);
    // Symlinks and .. resolved first: the folder actually read must be under the root.
    const real = realpathSync(dir);
    if (real !== weightsRoot && !real.startsWith(weightsRoot + path.sep))
      return refuse(`model_path ${dir} is outside ${weightsRoot}, the only folder this server loads weights from (--weights-root)`);
    const started = performance.now();
    const update = updates.then(() => policy.reloadWeights(real));
    updates = update.catch(() => undefined);
    try {
      const version = await update;
      sendJson(res, 200, { success: true, message: `Succeeded to update model weights from ${dir}.`, weight_version: version, seconds: (performance.now() - started) / 1000 });
    } catch (error) {
      refuse(`could not load ${dir}: ${(error as Error).message}`);
    }
  }

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
      case 'completions': return completions(res, request, aborts);
      case 'chat': return chatCompletions(res, request, aborts);
      case 'generate': return sglangGenerate(res, request, aborts);
      case 'weights': return updateWeights(res, request);
    }
  }

  async function route(req: IncomingMessage, res: ServerResponse, signal: AbortSignal): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const pathname = url.pathname.replace(/\/+$/, '') || '/';
    if (!(req.method === 'GET' && pathname === '/health') && !authorized(req)) throw new HttpError(401, 'this server needs an API key: send Authorization: Bearer <key>');
    res.setHeader('x-swerl-weight-version', String(policy.weights.version));
    if (req.method === 'GET' && pathname === '/health') {
      const load = policy.load;
      return sendJson(res, 200, { status: 'ok', model: modelName, weight_version: policy.weights.version, running: load.running, waiting: load.waiting });
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
