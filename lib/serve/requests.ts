/**
 * What a POST body asks `swerl serve` for: checked field by field and turned into the prompts
 * (token ids) and sampling its generations need, or an HttpError naming the field. Pure, so it
 * runs in the request worker (request-worker.ts): parsing and tokenizing a large body there
 * never holds up /health or the decode loop.
 */
import { SwerlError } from '../errors.js';
import { renderChat, type ChatMessage } from '../model/chat-template.js';
import { MAX_TEMPERATURE, MIN_TEMPERATURE } from '../model/native-policy-options.js';
import type { Tokenizer } from '../types/tokenizer.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../util/json-depth.js';
import { badRequest, HttpError, optionalBoolean, optionalInteger, optionalNumber, stopStrings } from './http.js';

/**
 * A prompt of more bytes than this per context token cannot fit: refused before it is
 * tokenized (a 50 MB prompt once took 77 s and 4.9 GB to tokenize, then was refused). Real
 * text runs 3 to 5 bytes a token; no BPE vocabulary's tokens average anywhere near 64.
 */
export const MAX_PROMPT_BYTES_PER_TOKEN = 64;
/** max_tokens when the model names no context length. */
const MAX_TOKENS_UNBOUNDED_CONTEXT = 1 << 20;

export type Route = 'completions' | 'chat' | 'generate' | 'weights';

/** What the server's model and options allow; the same in every request. */
export interface RequestLimits {
  modelName: string;
  /** Token ids are in [0, vocab). */
  vocab: number;
  /** Prompt plus completion tokens; Infinity when the model names none. */
  maxContext: number;
  /** Most choices per request (n times the prompts of a batched completion). */
  maxN: number;
}

export interface Sampling {
  maxTokens: number;
  temperature: number;
  topP: number;
  topK: number;
  seed?: number;
  stop: string[];
  stopTokens?: number[];
  n: number;
}

export interface CompletionRequest {
  route: 'completions';
  sampling: Sampling;
  prompts: Int32Array[];
  stream: boolean;
  includeUsage: boolean;
  logprobs: boolean;
  tokensAsIds: boolean;
  /** vLLM's prompt_logprobs: 0 (each prompt token's own logprob); absent, false. */
  promptLogprobs: boolean;
}

export interface ChatRequest {
  route: 'chat';
  sampling: Sampling;
  prompt: Int32Array;
  stream: boolean;
  includeUsage: boolean;
  logprobs: boolean;
  /** Tools were given (and tool_choice is not 'none'): <tool_call> blocks become tool_calls. */
  parseTools: boolean;
}

export interface GenerateRequest {
  route: 'generate';
  sampling: Sampling;
  prompt: Int32Array;
  returnLogprob: boolean;
  /** SGLang's logprob_start_len: input_token_logprobs from this prompt position; -1, none. */
  logprobStartLen: number;
}

export interface WeightsRequest {
  route: 'weights';
  modelPath: string;
}

export type ParsedRequest = CompletionRequest | ChatRequest | GenerateRequest | WeightsRequest;

/** The request body: one JSON object, nesting no deeper than any real request does. */
export function parseBody(bytes: Uint8Array): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch (error) {
    throw new HttpError(400, `the request body is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'the request body must be a JSON object');
  if (nestsDeeperThan(body, MAX_JSON_DEPTH)) throw new HttpError(400, `the request body nests more than ${MAX_JSON_DEPTH} levels deep`);
  return body as Record<string, unknown>;
}

/** A route's body checked and made into what the server runs; HttpError (4xx) for bad input. */
export function parseRequest(route: Route, body: Record<string, unknown>, limits: RequestLimits, tokenizer: Tokenizer): ParsedRequest {
  const parser = new RequestParser(limits, tokenizer);
  try {
    switch (route) {
      case 'completions': return parser.completions(body);
      case 'chat': return parser.chat(body);
      case 'generate': return parser.generate(body);
      case 'weights': return parser.weights(body);
    }
  } catch (error) {
    if (error instanceof SwerlError && error.code === 'ERR_SWERL_INVALID_ARG') throw new HttpError(400, error.message);
    throw error;
  }
}

class RequestParser {
  private readonly maxPromptBytes: number;
  private readonly maxTokensCap: number;

  constructor(
    private readonly limits: RequestLimits,
    private readonly tokenizer: Tokenizer,
  ) {
    this.maxPromptBytes = limits.maxContext * MAX_PROMPT_BYTES_PER_TOKEN;
    this.maxTokensCap = Number.isFinite(limits.maxContext) ? limits.maxContext : MAX_TOKENS_UNBOUNDED_CONTEXT;
  }

  completions(body: Record<string, unknown>): CompletionRequest {
    const { maxN } = this.limits;
    this.checkModel(body);
    if (optionalBoolean(body, 'echo', false)) throw badRequest('echo', 'is not supported');
    const sampling = this.sampling(body, 'max_tokens', 16);
    const raw = body.prompt;
    const prompts: Int32Array[] =
      typeof raw === 'string' ? [this.encode(raw, 'prompt')]
      : Array.isArray(raw) && raw.length > 0 && raw.every((p) => typeof p === 'number') ? [this.tokenIds(raw, 'prompt')]
      : Array.isArray(raw) && raw.length > 0 && raw.length <= maxN && raw.every((p) => typeof p === 'string') ? (raw as string[]).map((p, i) => this.encode(p, `prompt[${i}]`))
      : Array.isArray(raw) && raw.length > 0 && raw.length <= maxN && raw.every(Array.isArray) ? raw.map((p, i) => this.tokenIds(p, `prompt[${i}]`))
      : [];
    if (prompts.length === 0 || prompts.some((p) => p.length === 0))
      throw badRequest('prompt', `must be a string, an array of token ids, or an array of at most ${maxN} of either, none empty`);
    if (prompts.length * sampling.n > maxN) throw badRequest('n', `times the ${prompts.length} prompts is ${prompts.length * sampling.n} choices; at most ${maxN} per request`);
    for (const p of prompts) this.checkContext(p, sampling);
    const streaming = this.streaming(body);
    const promptLogprobs = this.promptLogprobs(body);
    if (promptLogprobs && streaming.stream) throw badRequest('prompt_logprobs', 'is not available with stream: true (nor in vLLM); ask without streaming');
    return {
      route: 'completions',
      sampling,
      prompts,
      ...streaming,
      logprobs: this.completionLogprobs(body),
      tokensAsIds: optionalBoolean(body, 'return_tokens_as_token_ids', false),
      promptLogprobs,
    };
  }

  chat(body: Record<string, unknown>): ChatRequest {
    const { maxContext } = this.limits;
    this.checkModel(body);
    const maxField = body.max_completion_tokens !== undefined && body.max_completion_tokens !== null ? 'max_completion_tokens' : 'max_tokens';
    const sampling = this.sampling(body, maxField, Math.min(4096, this.maxTokensCap));
    const logprobs = optionalBoolean(body, 'logprobs', false);
    if (optionalInteger(body, 'top_logprobs', 0, 0) > 0) throw badRequest('top_logprobs', 'must be 0: swerl serve returns the sampled tokens\' logprobs, not alternatives');
    const parseTools = Array.isArray(body.tools) && body.tools.length > 0 && body.tool_choice !== 'none';
    const prompt = this.chatPrompt(body);
    // No max_tokens given: the rest of the context, as vLLM does.
    if (!body.max_tokens && !body.max_completion_tokens && Number.isFinite(maxContext)) sampling.maxTokens = Math.max(0, Math.min(sampling.maxTokens, maxContext - prompt.length));
    this.checkContext(prompt, sampling);
    return { route: 'chat', sampling, prompt, ...this.streaming(body), logprobs, parseTools };
  }

  generate(body: Record<string, unknown>): GenerateRequest {
    if (optionalBoolean(body, 'stream', false)) throw badRequest('stream', 'is not supported on /generate; use /v1/completions');
    const prompt = body.input_ids !== undefined ? this.tokenIds(body.input_ids, 'input_ids')
      : typeof body.text === 'string' && body.text.length > 0 ? this.encode(body.text, 'text')
      : undefined;
    if (!prompt) throw badRequest('input_ids', 'or text is required (one prompt)');
    const p = (body.sampling_params ?? {}) as Record<string, unknown>;
    if (typeof p !== 'object' || p === null || Array.isArray(p)) throw badRequest('sampling_params', 'must be an object');
    // SGLang names the seed sampling_seed; skip_special_tokens and no_stop_trim are what swerl does anyway.
    const sampling = this.sampling({ ...p, n: 1, seed: p.sampling_seed ?? p.seed }, 'max_new_tokens', 128);
    this.checkContext(prompt, sampling);
    const logprobStartLen = optionalInteger(body, 'logprob_start_len', -1, -1);
    if (logprobStartLen >= prompt.length)
      throw badRequest('logprob_start_len', `is ${logprobStartLen}, past the prompt's last position (${prompt.length - 1}); give a position in the prompt, or -1 for the output tokens only`);
    return { route: 'generate', sampling, prompt, returnLogprob: optionalBoolean(body, 'return_logprob', false), logprobStartLen };
  }

  weights(body: Record<string, unknown>): WeightsRequest {
    if (typeof body.model_path !== 'string' || body.model_path === '') throw badRequest('model_path', 'is required: the directory of a checkpoint of this model');
    return { route: 'weights', modelPath: body.model_path };
  }

  private checkModel(body: Record<string, unknown>): void {
    const { modelName } = this.limits;
    if (body.model !== undefined && body.model !== modelName)
      throw new HttpError(404, `The model \`${String(body.model)}\` does not exist. This server serves \`${modelName}\`.`, 'model');
  }

  private tokenIds(value: unknown, field: string): Int32Array {
    const { vocab, maxContext } = this.limits;
    if (!Array.isArray(value) || value.length === 0) throw badRequest(field, 'must be a non-empty array of token ids');
    if (value.length > maxContext) throw badRequest(field, `has ${value.length} token ids; this model's maximum context length is ${maxContext}`);
    for (const [i, id] of value.entries())
      if (!Number.isInteger(id) || id < 0 || id >= vocab) throw badRequest(`${field}[${i}]`, `must be a token id in [0, ${vocab})`);
    return Int32Array.from(value as number[]);
  }

  private streaming(body: Record<string, unknown>): { stream: boolean; includeUsage: boolean } {
    const options = body.stream_options ?? {};
    if (typeof options !== 'object' || Array.isArray(options)) throw badRequest('stream_options', 'must be an object such as {"include_usage": true}');
    return { stream: optionalBoolean(body, 'stream', false), includeUsage: optionalBoolean(options as Record<string, unknown>, 'include_usage', false) };
  }

  private sampling(body: Record<string, unknown>, maxTokensField: string, defaultMaxTokens: number): Sampling {
    const cap = this.maxTokensCap;
    for (const field of ['presence_penalty', 'frequency_penalty', 'repetition_penalty'] as const) {
      const v = body[field];
      if (v !== undefined && v !== null && v !== (field === 'repetition_penalty' ? 1 : 0))
        throw badRequest(field, 'is not supported: swerl samples from the model\'s distribution as it is');
    }
    const bias = body.logit_bias;
    if (bias !== undefined && bias !== null && (typeof bias !== 'object' || Object.keys(bias).length > 0))
      throw badRequest('logit_bias', 'is not supported');
    const topK = optionalInteger(body, 'top_k', 0, -1);
    return {
      maxTokens: optionalNumber(body, maxTokensField, Math.min(defaultMaxTokens, cap), (v) =>
        !Number.isInteger(v) || v < 0 ? 'must be an integer >= 0'
        : v > cap ? `is over ${cap}, this model's maximum context length` : undefined),
      temperature: optionalNumber(body, 'temperature', 1, (v) => (v === 0 || (v >= MIN_TEMPERATURE && v <= MAX_TEMPERATURE) ? undefined : `must be 0 (greedy) or in [${MIN_TEMPERATURE}, ${MAX_TEMPERATURE}]`)),
      topP: optionalNumber(body, 'top_p', 1, (v) => (v > 0 && v <= 1 ? undefined : 'must be in (0, 1]')),
      topK: topK < 0 ? 0 : topK,
      seed: body.seed === undefined || body.seed === null ? undefined : optionalInteger(body, 'seed', 0, 0),
      stop: stopStrings(body),
      // vLLM's ignore_eos: sample max_tokens whatever comes (benchmarks).
      stopTokens: body.stop_token_ids !== undefined && body.stop_token_ids !== null ? Array.from(this.tokenIds(body.stop_token_ids, 'stop_token_ids'))
        : optionalBoolean(body, 'ignore_eos', false) ? [] : undefined,
      n: optionalInteger(body, 'n', 1, 1, this.limits.maxN),
    };
  }

  private checkContext(prompt: ArrayLike<number>, s: Sampling): void {
    const { maxContext } = this.limits;
    if (prompt.length + s.maxTokens > maxContext)
      throw badRequest('max_tokens', `with the prompt's ${prompt.length} tokens exceeds this model's maximum context length of ${maxContext} tokens`);
  }

  /** A text prompt too long to fit whatever it tokenizes to: refused by its bytes, untokenized. */
  private checkPromptBytes(text: string, field: string): void {
    const max = this.maxPromptBytes;
    // UTF-16 length bounds the UTF-8 bytes from below, so the cheap test comes first.
    if (text.length > max || Buffer.byteLength(text) > max)
      throw badRequest(field, `is over ${max} bytes: more than this model's maximum context of ${this.limits.maxContext} tokens can hold at ${MAX_PROMPT_BYTES_PER_TOKEN} bytes a token`);
  }

  private encode(text: string, field: string): Int32Array {
    this.checkPromptBytes(text, field);
    return Int32Array.from(this.tokenizer.encode(text));
  }

  private completionLogprobs(body: Record<string, unknown>): boolean {
    const v = body.logprobs;
    if (v === undefined || v === null || v === false) return false;
    if (v !== 0 && v !== true)
      throw badRequest('logprobs', 'must be 0: swerl serve returns the sampled tokens\' logprobs, not alternatives');
    return true;
  }

  /** vLLM's prompt_logprobs: alternatives (N > 0) would need the whole distribution, which the forward does not return. */
  private promptLogprobs(body: Record<string, unknown>): boolean {
    const v = body.prompt_logprobs;
    if (v === undefined || v === null) return false;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw badRequest('prompt_logprobs', 'must be an integer >= 0');
    if (v > 0) throw badRequest('prompt_logprobs', `is ${v}: swerl serve returns each prompt token's own logprob (prompt_logprobs: 0), not alternatives`);
    return true;
  }

  private chatPrompt(body: Record<string, unknown>): Int32Array {
    if (!Array.isArray(body.messages) || body.messages.length === 0) throw badRequest('messages', 'must be a non-empty array of chat messages');
    const kwargs = body.chat_template_kwargs ?? {};
    if (typeof kwargs !== 'object' || Array.isArray(kwargs)) throw badRequest('chat_template_kwargs', 'must be an object such as {"enable_thinking": false}');
    const { enable_thinking: enableThinking } = kwargs as { enable_thinking?: unknown };
    if (enableThinking !== undefined && typeof enableThinking !== 'boolean')
      throw badRequest('chat_template_kwargs.enable_thinking', 'must be true or false');
    this.checkPromptBytes(JSON.stringify(body.messages) + (body.tools === undefined ? '' : JSON.stringify(body.tools)), 'messages');
    const messages = body.messages.map((m: unknown, i) => {
      if (typeof m !== 'object' || m === null || Array.isArray(m)) throw badRequest(`messages[${i}]`, 'must be an object');
      const message = m as Record<string, unknown>;
      return { ...message, content: Array.isArray(message.content) ? contentText(message.content, `messages[${i}].content`) : message.content } as unknown as ChatMessage;
    });
    try {
      return renderChat(this.tokenizer, messages, {
        ...(body.tools ? { tools: body.tools as object[] } : {}),
        ...(enableThinking !== undefined ? { enableThinking } : {}),
        addGenerationPrompt: true,
      }).ids;
    } catch (error) {
      if (error instanceof SwerlError) throw new HttpError(400, error.message, 'messages');
      throw error;
    }
  }
}

/** OpenAI's content parts as one text: the text parts joined, others (images…) left out. */
function contentText(parts: unknown[], field: string): string {
  return parts.map((part, j) => {
    if (typeof part !== 'object' || part === null || Array.isArray(part)) throw badRequest(`${field}[${j}]`, 'must be a content part such as {"type": "text", "text": "..."}');
    const { type, text } = part as { type?: unknown; text?: unknown };
    if (type === 'text' && typeof text !== 'string') throw badRequest(`${field}[${j}].text`, 'must be a string');
    return type === 'text' ? text : '';
  }).join('');
}
