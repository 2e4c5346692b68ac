/**
 * RemotePolicy: the agent loop's policy served by inference servers (vLLM, SGLang, `swerl
 * serve`), token-in/token-out: prompts are rendered here with the model's tokenizer and sent
 * as token ids; the sampled ids and their logprobs come back as the servers document them:
 *
 * - protocol 'openai' (vLLM, swerl serve): POST /v1/completions with `prompt` as token ids,
 *   `logprobs: 0` and vLLM's `return_token_ids` (>= 0.10.2) and `return_tokens_as_token_ids`;
 *   ids are read from `choices[0].token_ids`, else from `logprobs.tokens` ("token_id:N").
 * - protocol 'sglang': POST /generate with `input_ids` and `return_logprob`; ids and logprobs
 *   from `output_ids` / `meta_info.output_token_logprobs` ([logprob, id, text] per token).
 *
 * Several servers can stand behind one policy: each request goes to the one with the fewest
 * requests in flight from this client (or round-robin). Sampling is pure temperature: top-k /
 * top-p change the distribution the learner's ratio is taken against, so they are refused
 * unless allowTruncatedSampling is set. updateWeights(dir) has every server load a checkpoint
 * (SGLang's and swerl serve's POST /update_weights_from_disk {model_path}, or the path given).
 *
 * vLLM reports logprobs of the raw logits unless started with
 * `--logprobs-mode processed_logprobs`; the trainer's sampler-learner gap shows it when not.
 */
import { invalidArg, SwerlError } from '../errors.js';
import { optionsParser } from '../schema.js';
import type { AgentPolicy, Generation, SamplingRequest } from '../types/policy.js';
import type { Tokenizer } from '../types/tokenizer.js';

export interface RemotePolicyOptions {
  /** Base URLs, e.g. http://127.0.0.1:8000 (a trailing /v1 is accepted). */
  servers: string[];
  /** How the servers take token ids and return them. Default 'openai'. */
  protocol: 'openai' | 'sglang';
  /** The model id for 'openai' requests; default: the first one /v1/models lists. */
  model?: string;
  /** 'least-loaded' (fewest requests in flight from this client, default) or 'round-robin'. */
  routing: 'least-loaded' | 'round-robin';
  /** Permit topK / topP (the logprobs then no longer match the learner's full softmax). */
  allowTruncatedSampling: boolean;
  /** One request's wall time at most. Default 600 s. */
  timeoutMs: number;
  /** Sent as a bearer token when set. */
  apiKey?: string;
  /** Where updateWeights() posts {model_path}. Default '/update_weights_from_disk'. */
  weightUpdatePath: string;
  /**
   * Further attempts of a generation whose server could not be reached or answered 5xx, each
   * on the next server. Default 2. Requests the server refused (4xx) are never retried.
   */
  retries: number;
}

const parseOptions = optionsParser<RemotePolicyOptions>({
  type: 'object',
  additionalProperties: false,
  required: ['servers'],
  properties: {
    servers: { type: 'array', minItems: 1, items: { type: 'string', pattern: '^https?://' } },
    protocol: { type: 'string', enum: ['openai', 'sglang'], default: 'openai' },
    model: { type: 'string', minLength: 1 },
    routing: { type: 'string', enum: ['least-loaded', 'round-robin'], default: 'least-loaded' },
    allowTruncatedSampling: { type: 'boolean', default: false },
    timeoutMs: { type: 'integer', minimum: 1, default: 600_000 },
    apiKey: { type: 'string' },
    weightUpdatePath: { type: 'string', pattern: '^/', default: '/update_weights_from_disk' },
    retries: { type: 'integer', minimum: 0, maximum: 10, default: 2 },
  },
});

/** A failure worth another attempt elsewhere: no answer, or the server's own fault. */
class TransientRemoteError extends SwerlError {
  constructor(message: string) {
    super('ERR_SWERL_REMOTE', message);
  }
}

interface Server {
  url: string;
  inFlight: number;
}

export class RemotePolicy implements AgentPolicy {
  readonly options: RemotePolicyOptions;
  private readonly servers: Server[];
  private next = 0;
  #weightVersion = 0;

  private constructor(
    readonly tokenizer: Tokenizer,
    options: RemotePolicyOptions,
    readonly model: string | undefined,
  ) {
    this.options = options;
    this.servers = options.servers.map((url) => ({ url: url.replace(/\/+$/, '').replace(/\/v1$/, ''), inFlight: 0 }));
  }

  /**
   * Checks every server answers (GET /health, or /v1/models for 'openai') and, for 'openai'
   * without options.model, takes the model id the first one serves.
   */
  static async connect(tokenizer: Tokenizer, options: Partial<RemotePolicyOptions> & { servers: string[] }): Promise<RemotePolicy> {
    const o = parseOptions(options, 'options');
    let model = o.model;
    const probe = new RemotePolicy(tokenizer, o, model);
    for (const server of probe.servers) {
      if (o.protocol === 'openai') {
        const listed = (await probe.request(server, 'GET', '/v1/models', undefined, 30_000)) as { data?: { id: string }[] };
        const ids = (listed.data ?? []).map((m) => m.id);
        if (model !== undefined && !ids.includes(model))
          throw new SwerlError('ERR_SWERL_REMOTE', `${server.url} does not serve model ${JSON.stringify(model)} (it serves ${ids.join(', ') || 'nothing'})`);
        model ??= ids[0];
      } else {
        await probe.request(server, 'GET', '/health', undefined, 30_000);
      }
    }
    if (o.protocol === 'openai' && model === undefined) throw new SwerlError('ERR_SWERL_REMOTE', `${o.servers[0]} lists no model at /v1/models`);
    return new RemotePolicy(tokenizer, o, model);
  }

  /** Successful updateWeights() calls so far: the version rollouts are sampled from. */
  get weightVersion(): number {
    return this.#weightVersion;
  }

  /** Requests in flight from this client, per server. */
  get load(): { url: string; inFlight: number }[] {
    return this.servers.map((s) => ({ url: s.url, inFlight: s.inFlight }));
  }

  async generate(request: SamplingRequest): Promise<Generation> {
    const { prompt, maxTokens } = request;
    const topK = request.topK ?? 0, topP = request.topP ?? 1;
    if (!this.options.allowTruncatedSampling && (topK > 0 || topP < 1))
      throw invalidArg('request.topK/topP', `is ${topK}/${topP}: remote sampling is pure temperature`, 'leave them off, or set allowTruncatedSampling (the logprobs then no longer match the learner\'s)');
    if (maxTokens === 0) return { tokens: new Int32Array(0), logprobs: new Float32Array(0), finishReason: 'length' };
    const ids = Array.from(prompt);
    for (let attempt = 0; ; attempt++) {
      const server = this.pick(attempt);
      try {
        return await this.generateOn(server, ids, request, topK, topP);
      } catch (error) {
        if (request.signal?.aborted) return { tokens: new Int32Array(0), logprobs: new Float32Array(0), finishReason: 'cancelled' };
        if (!(error instanceof TransientRemoteError) || attempt >= this.options.retries) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt));
      }
    }
  }

  private async generateOn(server: Server, ids: number[], request: SamplingRequest, topK: number, topP: number): Promise<Generation> {
    const { maxTokens, temperature } = request;
    const stop = [...this.tokenizer.eosTokenIds];
    if (this.options.protocol === 'sglang') {
      const body = {
        input_ids: ids,
        sampling_params: {
          max_new_tokens: maxTokens,
          temperature,
          top_p: topP,
          top_k: topK > 0 ? topK : -1,
          stop_token_ids: stop,
          skip_special_tokens: false,
          no_stop_trim: true,
          ...(request.seed !== undefined ? { sampling_seed: request.seed } : {}),
        },
        return_logprob: true,
      };
      const out = (await this.request(server, 'POST', '/generate', body, this.options.timeoutMs, request.signal)) as SglangResponse;
      return sglangGeneration(out, server.url);
    }
    const body = {
      model: this.model,
      prompt: ids,
      max_tokens: maxTokens,
      temperature,
      top_p: topP,
      top_k: topK > 0 ? topK : -1,
      logprobs: 0,
      stop_token_ids: stop,
      skip_special_tokens: false,
      return_token_ids: true,
      return_tokens_as_token_ids: true,
      ...(request.seed !== undefined ? { seed: request.seed } : {}),
    };
    const out = (await this.request(server, 'POST', '/v1/completions', body, this.options.timeoutMs, request.signal)) as CompletionResponse;
    return completionGeneration(out, server.url);
  }

  /**
   * Has every server load the checkpoint in dir (a path they can read) between their decode
   * steps; resolves when all have, with the new weight version. A server that fails leaves the
   * version as it was and rejects with ERR_SWERL_REMOTE naming it.
   */
  async updateWeights(dir: string): Promise<number> {
    const results = await Promise.allSettled(
      this.servers.map((s) => this.request(s, 'POST', this.options.weightUpdatePath, { model_path: dir }, this.options.timeoutMs)),
    );
    const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [`${this.servers[i]!.url}: ${(r.reason as Error).message}`] : []));
    if (failed.length) throw new SwerlError('ERR_SWERL_REMOTE', `weight update from ${dir} failed on ${failed.length} of ${this.servers.length} server(s): ${failed.join('; ')}`);
    return ++this.#weightVersion;
  }

  /** The server for a request's attempt; a retry moves on to another server. */
  private pick(attempt: number): Server {
    if (this.options.routing === 'round-robin' || attempt > 0) return this.servers[this.next++ % this.servers.length]!;
    let best = this.servers[0]!;
    for (const s of this.servers) if (s.inFlight < best.inFlight) best = s;
    return best;
  }

  private async request(server: Server, method: 'GET' | 'POST', path: string, body: unknown, timeoutMs: number, signal?: AbortSignal): Promise<unknown> {
    const signals = [AbortSignal.timeout(timeoutMs), ...(signal ? [signal] : [])];
    server.inFlight += 1;
    let response: Response;
    let text: string;
    try {
      response = await fetch(server.url + path, {
        method,
        headers: { 'content-type': 'application/json', ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.any(signals),
      });
      text = await response.text();
    } catch (error) {
      const cause = (error as { cause?: { message?: string } }).cause?.message ?? (error as Error).message;
      throw new TransientRemoteError(`${method} ${server.url}${path} failed: ${cause}`);
    } finally {
      server.inFlight -= 1;
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (!response.ok) {
      const message = (json as { error?: { message?: string }; message?: string } | undefined)?.error?.message ?? (json as { message?: string } | undefined)?.message ?? text.slice(0, 300);
      const what = `${method} ${server.url}${path} answered ${response.status}: ${message}`;
      throw response.status >= 500 ? new TransientRemoteError(what) : new SwerlError('ERR_SWERL_REMOTE', what);
    }
    if (json === undefined) throw new SwerlError('ERR_SWERL_REMOTE', `${method} ${server.url}${path} answered with something that is not JSON: ${text.slice(0, 200)}`);
    return json;
  }
}

interface CompletionResponse {
  choices?: {
    token_ids?: number[];
    finish_reason?: string | null;
    logprobs?: { tokens?: string[]; token_logprobs?: (number | null)[] } | null;
  }[];
}

interface SglangResponse {
  output_ids?: number[];
  meta_info?: { finish_reason?: { type?: string } | null; output_token_logprobs?: [number, number, unknown][] };
}

function finishReason(reason: string | null | undefined, url: string): Generation['finishReason'] {
  if (reason === 'stop' || reason === 'length') return reason;
  if (reason === 'abort') return 'cancelled';
  throw new SwerlError('ERR_SWERL_REMOTE', `${url} gave finish reason ${JSON.stringify(reason)}; expected stop or length`);
}

function checked(tokens: number[], logprobs: (number | null)[], url: string): { tokens: Int32Array; logprobs: Float32Array } {
  if (tokens.length !== logprobs.length || logprobs.some((l) => typeof l !== 'number' || !Number.isFinite(l)))
    throw new SwerlError('ERR_SWERL_REMOTE', `${url} returned ${tokens.length} token ids and ${logprobs.length} logprobs (some missing): the trainer needs one finite logprob per sampled token`);
  return { tokens: Int32Array.from(tokens), logprobs: Float32Array.from(logprobs as number[]) };
}

export function completionGeneration(out: CompletionResponse, url: string): Generation {
  const choice = out.choices?.[0];
  if (!choice) throw new SwerlError('ERR_SWERL_REMOTE', `${url} returned no choices`);
  const logprobs = choice.logprobs?.token_logprobs ?? [];
  let tokens = choice.token_ids;
  if (!tokens) {
    const strings = choice.logprobs?.tokens ?? [];
    tokens = strings.map((s) => Number(/^token_id:(\d+)$/.exec(s)?.[1] ?? NaN));
    if (tokens.some((t) => !Number.isInteger(t)))
      throw new SwerlError('ERR_SWERL_REMOTE', `${url} returned neither token_ids nor "token_id:N" tokens: it needs vLLM's return_token_ids or return_tokens_as_token_ids`);
  }
  return { ...checked(tokens, logprobs, url), finishReason: finishReason(choice.finish_reason, url) };
}

export function sglangGeneration(out: SglangResponse, url: string): Generation {
  const entries = out.meta_info?.output_token_logprobs;
  if (!entries) throw new SwerlError('ERR_SWERL_REMOTE', `${url} returned no meta_info.output_token_logprobs: /generate needs return_logprob`);
  const tokens = out.output_ids ?? entries.map((e) => e[1]);
  return { ...checked(tokens, entries.map((e) => e[0]), url), finishReason: finishReason(out.meta_info?.finish_reason?.type, url) };
}
