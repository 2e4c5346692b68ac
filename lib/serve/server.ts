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
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { existsSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

import { SwerlError } from '../errors.js';
import { parseToolCalls, renderChat, type ChatMessage } from '../policy/chat-template.js';
import type { NativePolicy } from '../policy/native-policy.js';
import { MAX_TEMPERATURE, MIN_TEMPERATURE } from '../policy/native-policy-options.js';
import {
  badRequest,
  EventStream,
  HttpError,
  optionalBoolean,
  optionalInteger,
  optionalNumber,
  readJson,
  sendError,
  sendJson,
  stopStrings,
} from './http.js';
import { TextStreamer } from './text-streamer.js';

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

/**
 * A prompt of more bytes than this per context token cannot fit: refused before it is
 * tokenized (a 50 MB prompt once took 77 s and 4.9 GB to tokenize, then was refused).
 */
export const MAX_PROMPT_BYTES_PER_TOKEN = 64;
/** max_tokens when the model names no context length. */
const MAX_TOKENS_UNBOUNDED_CONTEXT = 1 << 20;

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

interface Sampling {
  maxTokens: number;
  temperature: number;
  topP: number;
  topK: number;
  seed?: number;
  stop: string[];
  stopTokens?: number[];
  n: number;
}

interface Completion {
  tokens: number[];
  logprobs: number[];
  text: string;
  finishReason: 'stop' | 'length';
}

type Listener = (delta: { text: string; tokens: number[]; logprobs: number[] }) => void;

const now = () => Math.floor(Date.now() / 1000);

export async function startServer(policy: NativePolicy, options: ServeOptions = {}): Promise<RunningServer> {
  const modelName = options.modelName ?? 'swerl';
  const maxBody = options.maxBodyBytes ?? 16 * 1024 * 1024;
  const maxN = options.maxN ?? 64;
  const apiKey = options.apiKey ? Buffer.from(options.apiKey) : undefined;
  const weightsRoot = options.weightsRoot !== undefined ? realpathSync(options.weightsRoot) : undefined;
  const vocab = policy.config.native.vocabSize;
  const maxContext = policy.config.hf.max_position_embeddings ?? Infinity;
  const maxPromptBytes = maxContext * MAX_PROMPT_BYTES_PER_TOKEN;
  const maxTokensCap = Number.isFinite(maxContext) ? maxContext : MAX_TOKENS_UNBOUNDED_CONTEXT;
  const created = now();
  let updates: Promise<unknown> = Promise.resolve();

  function checkModel(body: Record<string, unknown>): void {
    if (body.model !== undefined && body.model !== modelName)
      throw new HttpError(404, `The model \`${String(body.model)}\` does not exist. This server serves \`${modelName}\`.`, 'model');
  }

  function tokenIds(value: unknown, field: string): number[] {
    if (!Array.isArray(value) || value.length === 0) throw badRequest(field, 'must be a non-empty array of token ids');
    for (const [i, id] of value.entries())
      if (!Number.isInteger(id) || id < 0 || id >= vocab) throw badRequest(`${field}[${i}]`, `must be a token id in [0, ${vocab})`);
    return value as number[];
  }

  function sampling(body: Record<string, unknown>, maxTokensField: string, defaultMaxTokens: number): Sampling {
    for (const field of ['presence_penalty', 'frequency_penalty', 'repetition_penalty'] as const) {
      const v = body[field];
      if (v !== undefined && v !== null && v !== (field === 'repetition_penalty' ? 1 : 0))
        throw badRequest(field, 'is not supported: swerl samples from the model\'s distribution as it is');
    }
    if (body.logit_bias !== undefined && body.logit_bias !== null && Object.keys(body.logit_bias as object).length > 0)
      throw badRequest('logit_bias', 'is not supported');
    const topK = optionalInteger(body, 'top_k', 0, -1);
    return {
      maxTokens: optionalNumber(body, maxTokensField, Math.min(defaultMaxTokens, maxTokensCap), (v) =>
        !Number.isInteger(v) || v < 0 ? 'must be an integer >= 0'
        : v > maxTokensCap ? `is over ${maxTokensCap}, this model's maximum context length` : undefined),
      temperature: optionalNumber(body, 'temperature', 1, (v) => (v === 0 || (v >= MIN_TEMPERATURE && v <= MAX_TEMPERATURE) ? undefined : `must be 0 (greedy) or in [${MIN_TEMPERATURE}, ${MAX_TEMPERATURE}]`)),
      topP: optionalNumber(body, 'top_p', 1, (v) => (v > 0 && v <= 1 ? undefined : 'must be in (0, 1]')),
      topK: topK < 0 ? 0 : topK,
      seed: body.seed === undefined || body.seed === null ? undefined : optionalInteger(body, 'seed', 0, 0),
      stop: stopStrings(body),
      // vLLM's ignore_eos: sample max_tokens whatever comes (benchmarks).
      stopTokens: body.stop_token_ids !== undefined && body.stop_token_ids !== null ? tokenIds(body.stop_token_ids, 'stop_token_ids')
        : optionalBoolean(body, 'ignore_eos', false) ? [] : undefined,
      n: optionalInteger(body, 'n', 1, 1, maxN),
    };
  }

  function checkContext(prompt: ArrayLike<number>, s: Sampling): void {
    if (prompt.length + s.maxTokens > maxContext)
      throw badRequest('max_tokens', `with the prompt's ${prompt.length} tokens exceeds this model's maximum context length of ${maxContext} tokens`);
  }

  /** A text prompt too long to fit whatever it tokenizes to: refused by its bytes, untokenized. */
  function checkPromptBytes(text: string, field: string): void {
    // UTF-16 length bounds the UTF-8 bytes from below, so the cheap test comes first.
    if (text.length > maxPromptBytes || Buffer.byteLength(text) > maxPromptBytes)
      throw badRequest(field, `is over ${maxPromptBytes} bytes: more than this model's maximum context of ${maxContext} tokens can hold at ${MAX_PROMPT_BYTES_PER_TOKEN} bytes a token`);
  }

  function encode(text: string, field: string): number[] {
    checkPromptBytes(text, field);
    return policy.tokenizer.encode(text);
  }

  /** One generation, with stop strings and streaming deltas; rejects 'cancelled' as an abort. */
  async function generate(prompt: ArrayLike<number>, s: Sampling, index: number, aborts: ChoiceAborts, listener?: Listener): Promise<Completion> {
    const stopper = aborts.child();
    // Text is decoded token by token only when someone reads it as it comes (a stream, stop
    // strings); otherwise once at the end.
    const incremental = listener !== undefined || s.stop.length > 0;
    const streamer = new TextStreamer(policy.tokenizer, s.stop);
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
        ...(incremental
          ? {
              onToken: (token: number, logprob: number) => {
                const delta = streamer.push(token, logprob);
                if (streamer.stopped) stopper.abort();
                if (listener && (delta.text || delta.tokens.length)) listener(delta);
              },
            }
          : {}),
      });
      if (g.finishReason === 'cancelled' && !streamer.stopped) throw new HttpError(499, 'the client closed the request');
      if (!incremental) g.tokens.forEach((token, i) => streamer.push(token, g.logprobs[i]!));
      const rest = streamer.finish();
      if (listener && (rest.text || rest.tokens.length)) listener(rest);
      return {
        tokens: Array.from(g.tokens),
        logprobs: Array.from(g.logprobs),
        text: streamer.text,
        finishReason: g.finishReason === 'length' && !streamer.stopped ? 'length' : 'stop',
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

  function logprobsCount(body: Record<string, unknown>): number | undefined {
    const v = body.logprobs;
    if (v === undefined || v === null || v === false) return undefined;
    if (v !== 0 && v !== true)
      throw badRequest('logprobs', 'must be 0: swerl serve returns the sampled tokens\' logprobs, not alternatives');
    return 0;
  }

  async function completions(res: ServerResponse, body: Record<string, unknown>, signal: ChoiceAborts): Promise<void> {
    checkModel(body);
    if (optionalBoolean(body, 'echo', false)) throw badRequest('echo', 'is not supported');
    const s = sampling(body, 'max_tokens', 16);
    const wantLogprobs = logprobsCount(body) !== undefined;
    const asIds = optionalBoolean(body, 'return_tokens_as_token_ids', false);
    const raw = body.prompt;
    const prompts: number[][] =
      typeof raw === 'string' ? [encode(raw, 'prompt')]
      : Array.isArray(raw) && raw.length > 0 && raw.every((p) => typeof p === 'number') ? [tokenIds(raw, 'prompt')]
      : Array.isArray(raw) && raw.length > 0 && raw.length <= maxN && raw.every((p) => typeof p === 'string') ? (raw as string[]).map((p, i) => encode(p, `prompt[${i}]`))
      : Array.isArray(raw) && raw.length > 0 && raw.length <= maxN && raw.every(Array.isArray) ? raw.map((p, i) => tokenIds(p, `prompt[${i}]`))
      : [];
    if (prompts.length === 0 || prompts.some((p) => p.length === 0))
      throw badRequest('prompt', `must be a string, an array of token ids, or an array of at most ${maxN} of either, none empty`);
    if (prompts.length * s.n > maxN) throw badRequest('n', `times the ${prompts.length} prompts is ${prompts.length * s.n} choices; at most ${maxN} per request`);
    for (const p of prompts) checkContext(p, s);
    const id = `cmpl-${randomUUID()}`;
    const jobs = prompts.flatMap((prompt, p) => Array.from({ length: s.n }, (_, k) => ({ prompt, index: p * s.n + k })));

    if (optionalBoolean(body, 'stream', false)) {
      const stream = new EventStream(res);
      const chunk = (index: number, text: string, extra: object) => ({ id, object: 'text_completion', created: now(), model: modelName, choices: [{ index, text, ...extra }] });
      const results = await Promise.all(
        jobs.map(async ({ prompt, index }) => {
          let offset = 0;
          const done = await generate(prompt, s, index, signal, (d) => {
            stream.send(chunk(index, d.text, { logprobs: wantLogprobs ? completionLogprobs(d.tokens, d.logprobs, asIds, offset) : null, token_ids: d.tokens, finish_reason: null }));
            offset += d.text.length;
          });
          stream.send(chunk(index, '', { logprobs: null, token_ids: [], finish_reason: done.finishReason }));
          return { done, prompt };
        }),
      );
      if ((body.stream_options as { include_usage?: boolean } | undefined)?.include_usage) stream.send({ id, object: 'text_completion', created: now(), model: modelName, choices: [], usage: usage(results) });
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
        logprobs: wantLogprobs ? completionLogprobs(done.tokens, done.logprobs, asIds, 0) : null,
        finish_reason: done.finishReason,
        token_ids: done.tokens,
        prompt_token_ids: prompt,
      })),
      usage: usage(results),
    });
  }

  function usage(results: { done: Completion; prompt: number[] }[]) {
    const promptTokens = [...new Set(results.map((r) => r.prompt))].reduce((a, p) => a + p.length, 0);
    const completionTokens = results.reduce((a, r) => a + r.done.tokens.length, 0);
    return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  }

  function chatPrompt(body: Record<string, unknown>): Int32Array {
    if (!Array.isArray(body.messages) || body.messages.length === 0) throw badRequest('messages', 'must be a non-empty array of chat messages');
    const kwargs = (body.chat_template_kwargs ?? {}) as { enable_thinking?: unknown };
    if (kwargs.enable_thinking !== undefined && typeof kwargs.enable_thinking !== 'boolean')
      throw badRequest('chat_template_kwargs.enable_thinking', 'must be true or false');
    checkPromptBytes(JSON.stringify(body.messages) + (body.tools === undefined ? '' : JSON.stringify(body.tools)), 'messages');
    const messages = (body.messages as unknown[]).map((m, i) => {
      if (typeof m !== 'object' || m === null || Array.isArray(m)) throw badRequest(`messages[${i}]`, 'must be an object');
      const message = m as Record<string, unknown>;
      const content = Array.isArray(message.content)
        ? message.content.map((part: unknown, j) => {
            if (typeof part !== 'object' || part === null) throw badRequest(`messages[${i}].content[${j}]`, 'must be a content part such as {"type": "text", "text": "..."}');
            const { type, text } = part as { type?: unknown; text?: unknown };
            if (type === 'text' && typeof text !== 'string') throw badRequest(`messages[${i}].content[${j}].text`, 'must be a string');
            return type === 'text' ? text : '';
          }).join('')
        : message.content;
      return { ...message, content } as unknown as ChatMessage;
    });
    try {
      return renderChat(policy.tokenizer, messages, {
        ...(body.tools ? { tools: body.tools as object[] } : {}),
        ...(kwargs.enable_thinking !== undefined ? { enableThinking: kwargs.enable_thinking } : {}),
        addGenerationPrompt: true,
      }).ids;
    } catch (error) {
      if (error instanceof SwerlError) throw new HttpError(400, error.message, 'messages');
      throw error;
    }
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

  async function chatCompletions(res: ServerResponse, body: Record<string, unknown>, signal: ChoiceAborts): Promise<void> {
    checkModel(body);
    const maxField = body.max_completion_tokens !== undefined && body.max_completion_tokens !== null ? 'max_completion_tokens' : 'max_tokens';
    const s = sampling(body, maxField, Math.min(4096, Number.isFinite(maxContext) ? maxContext : 4096));
    const wantLogprobs = optionalBoolean(body, 'logprobs', false);
    if (optionalInteger(body, 'top_logprobs', 0, 0) > 0) throw badRequest('top_logprobs', 'must be 0: swerl serve returns the sampled tokens\' logprobs, not alternatives');
    const parseTools = Array.isArray(body.tools) && body.tools.length > 0 && body.tool_choice !== 'none';
    const prompt = chatPrompt(body);
    if (!body.max_tokens && !body.max_completion_tokens && Number.isFinite(maxContext)) s.maxTokens = Math.max(0, Math.min(s.maxTokens, maxContext - prompt.length));
    checkContext(prompt, s);
    const id = `chatcmpl-${randomUUID()}`;
    const finishOf = (done: Completion, message: { tool_calls?: unknown[] }) => (message.tool_calls ? 'tool_calls' : done.finishReason);

    if (optionalBoolean(body, 'stream', false)) {
      const stream = new EventStream(res);
      const chunk = (index: number, delta: object, extra: object = {}) => ({ id, object: 'chat.completion.chunk', created: now(), model: modelName, choices: [{ index, delta, logprobs: null, finish_reason: null, ...extra }] });
      const results = await Promise.all(
        Array.from({ length: s.n }, async (_, index) => {
          stream.send(chunk(index, { role: 'assistant', content: '' }));
          // With tools, the text is held until the end: whether it is a tool call is known then.
          const done = await generate(prompt, s, index, signal, parseTools ? undefined : (d) =>
            stream.send(chunk(index, { content: d.text }, { logprobs: wantLogprobs ? chatLogprobs(d.tokens, d.logprobs) : null, token_ids: d.tokens })));
          const message = chatMessage(done.text, parseTools);
          if (parseTools) {
            const { role: _role, ...delta } = message;
            stream.send(chunk(index, delta, { logprobs: wantLogprobs ? chatLogprobs(done.tokens, done.logprobs) : null, token_ids: done.tokens }));
          }
          stream.send(chunk(index, {}, { finish_reason: finishOf(done, message) }));
          return { done, prompt: Array.from(prompt) };
        }),
      );
      if ((body.stream_options as { include_usage?: boolean } | undefined)?.include_usage) stream.send({ id, object: 'chat.completion.chunk', created: now(), model: modelName, choices: [], usage: usage(results) });
      stream.end();
      return;
    }
    const results = await Promise.all(Array.from({ length: s.n }, async (_, index) => ({ done: await generate(prompt, s, index, signal), prompt: Array.from(prompt), index })));
    sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created: now(),
      model: modelName,
      choices: results.map(({ done, index }) => {
        const message = chatMessage(done.text, parseTools);
        return { index, message, logprobs: wantLogprobs ? chatLogprobs(done.tokens, done.logprobs) : null, finish_reason: finishOf(done, message), token_ids: done.tokens };
      }),
      prompt_token_ids: Array.from(prompt),
      usage: usage(results),
    });
  }

  async function sglangGenerate(res: ServerResponse, body: Record<string, unknown>, signal: ChoiceAborts): Promise<void> {
    if (optionalBoolean(body, 'stream', false)) throw badRequest('stream', 'is not supported on /generate; use /v1/completions');
    const prompt = body.input_ids !== undefined ? tokenIds(body.input_ids, 'input_ids')
      : typeof body.text === 'string' && body.text.length > 0 ? encode(body.text, 'text')
      : undefined;
    if (!prompt) throw badRequest('input_ids', 'or text is required (one prompt)');
    const p = (body.sampling_params ?? {}) as Record<string, unknown>;
    if (typeof p !== 'object' || p === null || Array.isArray(p)) throw badRequest('sampling_params', 'must be an object');
    // SGLang names the seed sampling_seed; skip_special_tokens and no_stop_trim are what swerl does anyway.
    const s = sampling({ ...p, n: 1, seed: p.sampling_seed ?? p.seed }, 'max_new_tokens', 128);
    checkContext(prompt, s);
    const done = await generate(prompt, s, 0, signal);
    const meta: Record<string, unknown> = {
      id: randomUUID().replace(/-/g, ''),
      finish_reason: { type: done.finishReason },
      prompt_tokens: prompt.length,
      completion_tokens: done.tokens.length,
      weight_version: String(policy.weights.version),
    };
    if (optionalBoolean(body, 'return_logprob', false)) meta.output_token_logprobs = done.tokens.map((t, i) => [done.logprobs[i], t, null]);
    sendJson(res, 200, { text: done.text, output_ids: done.tokens, meta_info: meta });
  }

  async function updateWeights(res: ServerResponse, body: Record<string, unknown>): Promise<void> {
    const dir = body.model_path;
    const refuse = (message: string) => sendJson(res, 400, { success: false, message, error: { message, type: 'invalid_request_error', param: 'model_path', code: 400 } });
    if (weightsRoot === undefined) return refuse('weight updates are off on this server: start it with --weights-root DIR (weightsRoot) to load checkpoints from under DIR');
    if (typeof dir !== 'string' || dir === '') return refuse('model_path is required: the directory of a checkpoint of this model');
    if (!existsSync(dir) || !statSync(dir).isDirectory()) return refuse(`model_path ${dir} is not a directory`);
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

  /** A POST body must say it is JSON: a web page's form or text/plain post (no preflight) is refused. */
  function body(req: IncomingMessage): Promise<Record<string, unknown>> {
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json') return Promise.reject(new HttpError(415, `the request's content-type is ${JSON.stringify(type || '(none)')}; send application/json`));
    return readJson(req, maxBody);
  }

  async function route(req: IncomingMessage, res: ServerResponse, signal: AbortSignal): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const key = `${req.method} ${url.pathname.replace(/\/+$/, '') || '/'}`;
    if (key !== 'GET /health' && !authorized(req)) throw new HttpError(401, 'this server needs an API key: send Authorization: Bearer <key>');
    const aborts = new ChoiceAborts(signal);
    res.setHeader('x-swerl-weight-version', String(policy.weights.version));
    switch (key) {
      case 'GET /health': {
        const load = policy.load;
        return sendJson(res, 200, { status: 'ok', model: modelName, weight_version: policy.weights.version, running: load.running, waiting: load.waiting });
      }
      case 'GET /v1/models':
        return sendJson(res, 200, { object: 'list', data: [{ id: modelName, object: 'model', created, owned_by: 'swerl', max_model_len: Number.isFinite(maxContext) ? maxContext : null }] });
      case 'POST /v1/completions':
        return completions(res, await body(req), aborts);
      case 'POST /v1/chat/completions':
        return chatCompletions(res, await body(req), aborts);
      case 'POST /generate':
        return sglangGenerate(res, await body(req), aborts);
      case 'POST /update_weights_from_disk':
        return updateWeights(res, await body(req));
    }
    const known = ['/health', '/v1/models', '/v1/completions', '/v1/chat/completions', '/generate', '/update_weights_from_disk'];
    if (known.includes(url.pathname)) throw new HttpError(405, `${req.method} is not allowed on ${url.pathname}`);
    throw new HttpError(404, `no route ${req.method} ${url.pathname}; this server has ${known.join(', ')}`);
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
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8000, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}
