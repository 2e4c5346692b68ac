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
 *
 * logprobs(sequences) scores given tokens instead (ScoringPolicy: every token's logprob given
 * those before it, at temperature 1; entry 0 is 0), one request per sequence, a few in flight
 * per server, with generate()'s routing, retries and timeout:
 *
 * - 'openai': POST /v1/completions with the ids as `prompt`, `max_tokens: 1`, `temperature: 0`
 *   and vLLM's `prompt_logprobs: 0`; read from `choices[0].prompt_logprobs`, one entry per
 *   prompt token: null first, then {"<token id>": {logprob, rank, decoded_token}}, the actual
 *   token's id among the keys (vLLM may add the top-1 alternative beside it). vLLM caveats:
 *   prompt_logprobs came in vLLM 0.5.5; they are log softmax of the raw logits whatever the
 *   request's temperature or `--logprobs-mode`, except that recent vLLM gives logits there under
 *   `--logprobs-mode raw_logits / processed_logits` (don't score against such a server); vLLM
 *   samples at least one token (hence max_tokens 1; the sampled one is ignored); some V1
 *   releases refuse prompt_logprobs while prefix caching is on (`--no-enable-prefix-caching`),
 *   newer ones skip the cache for such requests.
 * - 'sglang': POST /generate with `input_ids`, `return_logprob`, `logprob_start_len: 0` and
 *   `max_new_tokens: 1`; read from `meta_info.input_token_logprobs`, [logprob, id, text] per
 *   prompt token, the first logprob null. They are of the raw logits; SGLANG_TEMP_SCALED_LOGPROBS
 *   would divide by the request's temperature, but SGLang runs temperature 0 as 1 with top-k 1.
 *
 * swerl serve answers both, from the same forward as NativePolicy.logprobs.
 */
import { invalidArg, SwerlError } from '../errors.js';
import { int32Array } from '../math/validate.js';
import { optionsParser, type Infer, type Input } from '../schema.js';
import type { AgentPolicy, Generation, SamplingRequest, ScoringPolicy } from '../types/policy.js';
import type { Tokenizer } from '../types/tokenizer.js';
import { mapBounded } from '../util/bounded.js';

const REMOTE_POLICY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['servers'],
  properties: {
    /** Base URLs, e.g. http://127.0.0.1:8000 (a trailing /v1 is accepted). */
    servers: { type: 'array', minItems: 1, items: { type: 'string', pattern: '^https?://' } },
    /** How the servers take token ids and return them. Default 'openai'. */
    protocol: { type: 'string', enum: ['openai', 'sglang'], default: 'openai' },
    /** The model id for 'openai' requests; default: the first one /v1/models lists. */
    model: { type: 'string', minLength: 1 },
    /** 'least-loaded' (fewest requests in flight from this client, default) or 'round-robin'. */
    routing: { type: 'string', enum: ['least-loaded', 'round-robin'], default: 'least-loaded' },
    /** Permit topK / topP (the logprobs then no longer match the learner's full softmax). */
    allowTruncatedSampling: { type: 'boolean', default: false },
    /** One request's wall time at most. Default 600 s. */
    timeoutMs: { type: 'integer', minimum: 1, default: 600_000 },
    /** Sent as a bearer token when set. */
    apiKey: { type: 'string' },
    /** Where updateWeights() posts {model_path}. Default '/update_weights_from_disk'. */
    weightUpdatePath: { type: 'string', pattern: '^/', default: '/update_weights_from_disk' },
    /**
     * Further attempts of a generation whose server could not be reached or answered 5xx, each
     * on the next server. Default 2. Requests the server refused (4xx) are never retried.
     */
    retries: { type: 'integer', minimum: 0, maximum: 10, default: 2 },
  },
} as const;
export type RemotePolicyOptions = Infer<typeof REMOTE_POLICY_SCHEMA>;
/** What connect() takes: servers, the rest defaulted. */
export type RemotePolicyInput = Input<typeof REMOTE_POLICY_SCHEMA>;

const parseOptions = optionsParser(REMOTE_POLICY_SCHEMA);

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

/** Scoring requests in flight per server: enough to fill a server's batches, not to flood it. */
const SCORING_REQUESTS_PER_SERVER = 8;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class RemotePolicy implements AgentPolicy, ScoringPolicy {
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
  static async connect(tokenizer: Tokenizer, options: RemotePolicyInput): Promise<RemotePolicy> {
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
    try {
      return await this.withRetries((server) => this.generateOn(server, ids, request, topK, topP), request.signal);
    } catch (error) {
      if (request.signal?.aborted) return { tokens: new Int32Array(0), logprobs: new Float32Array(0), finishReason: 'cancelled' };
      throw error;
    }
  }

  /**
   * Every token's logprob given those before it, at temperature 1 (entry 0 is 0), from the
   * servers' prompt logprobs: one request per sequence of 2 or more tokens, a few in flight per
   * server. Rejects with ERR_SWERL_ABORTED when options.signal aborts, with ERR_SWERL_REMOTE
   * when a server answers no prompt logprobs or not one per token.
   */
  async logprobs(sequences: ArrayLike<number>[], options: { signal?: AbortSignal } = {}): Promise<Float32Array[]> {
    if (!Array.isArray(sequences)) throw invalidArg('sequences', 'must be an array of token-id arrays');
    const checked = sequences.map((s, i) => int32Array(s, `sequences[${i}]`, { min: 0 }));
    const { signal } = options;
    try {
      return await mapBounded(checked, SCORING_REQUESTS_PER_SERVER * this.servers.length, async (ids) =>
        ids.length <= 1 ? new Float32Array(ids.length) : this.withRetries((server) => this.promptLogprobsOn(server, Array.from(ids), signal), signal));
    } catch (error) {
      if (signal?.aborted) throw new SwerlError('ERR_SWERL_ABORTED', 'RemotePolicy.logprobs was aborted');
      throw error;
    }
  }

  private async promptLogprobsOn(server: Server, ids: number[], signal?: AbortSignal): Promise<Float32Array> {
    if (this.options.protocol === 'sglang') {
      const body = { input_ids: ids, sampling_params: { max_new_tokens: 1, temperature: 0 }, return_logprob: true, logprob_start_len: 0 };
      const out = (await this.request(server, 'POST', '/generate', body, this.options.timeoutMs, signal)) as SglangResponse;
      return sglangPromptLogprobs(out, ids, server.url);
    }
    const body = { model: this.model, prompt: ids, max_tokens: 1, temperature: 0, prompt_logprobs: 0 };
    const out = (await this.request(server, 'POST', '/v1/completions', body, this.options.timeoutMs, signal)) as CompletionResponse;
    return completionPromptLogprobs(out, ids, server.url);
  }

  /**
   * fn on the server routing picks; when it fails transiently (no answer, 5xx), again on the
   * next server, up to options.retries more times, backing off. An abort ends it at once.
   */
  private async withRetries<T>(fn: (server: Server) => Promise<T>, signal?: AbortSignal): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const server = this.pick(attempt);
      try {
        return await fn(server);
      } catch (error) {
        if (signal?.aborted || !(error instanceof TransientRemoteError) || attempt >= this.options.retries) throw error;
        await sleep(100 * 2 ** attempt);
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
    /** vLLM's: per prompt token, null first, then the logprobs keyed by token id. */
    prompt_logprobs?: (Record<string, { logprob?: unknown } | null | undefined> | null)[] | null;
  }[];
}

interface SglangResponse {
  output_ids?: number[];
  meta_info?: {
    finish_reason?: { type?: string } | null;
    output_token_logprobs?: [number, number, unknown][];
    input_token_logprobs?: [number | null, number, unknown][];
  };
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

/** A prompt token's logprob as a server gave it, which must be a finite number. */
function promptLogprob(value: unknown, ids: number[], i: number, url: string, where: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new SwerlError('ERR_SWERL_REMOTE', `${url} gave no finite logprob for prompt token ${i} (id ${ids[i]}) in ${where} (it gave ${JSON.stringify(value)})`);
  return value;
}

function checkPromptLength(given: number, ids: number[], url: string, where: string): void {
  if (given !== ids.length)
    throw new SwerlError('ERR_SWERL_REMOTE', `${url} returned ${given} entries in ${where} for a prompt of ${ids.length} tokens; expected one per prompt token`);
}

/** vLLM's choices[0].prompt_logprobs: each entry's logprob is the one keyed by the actual token's id. */
export function completionPromptLogprobs(out: CompletionResponse, ids: number[], url: string): Float32Array {
  const entries = out.choices?.[0]?.prompt_logprobs;
  if (!Array.isArray(entries))
    throw new SwerlError('ERR_SWERL_REMOTE', `the server at ${url} returned no choices[0].prompt_logprobs for a prompt_logprobs request; scoring needs vLLM >= 0.5.5 or swerl serve`);
  checkPromptLength(entries.length, ids, url, 'prompt_logprobs');
  const logprobs = new Float32Array(ids.length);
  for (let i = 1; i < ids.length; i++) logprobs[i] = promptLogprob(entries[i]?.[String(ids[i])]?.logprob, ids, i, url, 'prompt_logprobs');
  return logprobs;
}

/** SGLang's meta_info.input_token_logprobs from position 0: [logprob, id, text], the first logprob null. */
export function sglangPromptLogprobs(out: SglangResponse, ids: number[], url: string): Float32Array {
  const entries = out.meta_info?.input_token_logprobs;
  if (!Array.isArray(entries))
    throw new SwerlError('ERR_SWERL_REMOTE', `the server at ${url} returned no meta_info.input_token_logprobs for a return_logprob request with logprob_start_len 0; scoring needs SGLang or swerl serve`);
  checkPromptLength(entries.length, ids, url, 'meta_info.input_token_logprobs');
  const logprobs = new Float32Array(ids.length);
  for (let i = 0; i < ids.length; i++) {
    const [logprob, id] = entries[i] ?? [];
    if (id !== ids[i])
      throw new SwerlError('ERR_SWERL_REMOTE', `${url} scored token id ${JSON.stringify(id)} at prompt position ${i} of meta_info.input_token_logprobs, where the prompt has ${ids[i]}`);
    if (i > 0) logprobs[i] = promptLogprob(logprob, ids, i, url, 'meta_info.input_token_logprobs');
  }
  return logprobs;
}
