/**
 * Scripted policies and small fake environments for the agent loop and rollout engine tests.
 * Everything is deterministic: a policy's reply is a function of the turn, its logprobs a
 * function of (turn, position), and an env's behaviour is given step by step.
 */
import type { ChatMessage, Env, RewardResult, StepLimits, StepResult } from '../../lib/env/env.js';
import type { AgentPolicy, EpisodeContext, Generation, SamplingRequest } from '../../lib/types/policy.js';
import type { TerminationReason } from '../../lib/types/termination.js';
import { ByteTokenizer } from '../../lib/model/byte-tokenizer.js';

export const tokenizer = new ByteTokenizer();
export const IM_END = tokenizer.specialTokens['<|im_end|>']!;

/** The sampler's logprob of the i-th token of turn `turn`: exact in float32, distinct everywhere. */
export function logprobOf(turn: number, i: number): number {
  return -((turn + 1) * 0.25 + (i + 1) / 256);
}

/** What a scripted policy does on a turn. */
export type Reply =
  /** Text sampled; `end` (default true) appends <|im_end|>. Cut to maxTokens ('length') when longer. */
  | { text: string; end?: boolean }
  /** Never returns until request.signal aborts; then returns a 'cancelled' generation. */
  | 'hang';

export interface RecordedRequest {
  maxTokens: number;
  temperature: number;
  topK: number | undefined;
  topP: number | undefined;
  seed: number | undefined;
  prompt: Int32Array;
  context: EpisodeContext | undefined;
  /** Set once the request's signal aborted (hanging replies only see it). */
  aborted: boolean;
}

/** Resolves after ms (0: on the next macrotask). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Rejects with a clear message when `promise` takes longer than ms: a hung test fails instead of waiting for tap. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

export class ScriptedPolicy implements AgentPolicy {
  readonly tokenizer = tokenizer;
  readonly requests: RecordedRequest[] = [];
  readonly generations: Generation[] = [];
  inFlight = 0;
  maxInFlight = 0;

  /**
   * @param reply what to sample on a turn (context.turn), given the request
   * @param delayMs how long each non-hanging generation takes
   */
  constructor(
    private readonly reply: (turn: number, context: EpisodeContext | undefined, request: SamplingRequest) => Reply,
    private readonly delayMs = 0,
  ) {}

  async generate(request: SamplingRequest, context?: EpisodeContext): Promise<Generation> {
    const record: RecordedRequest = {
      maxTokens: request.maxTokens,
      temperature: request.temperature,
      topK: request.topK,
      topP: request.topP,
      seed: request.seed,
      prompt: Int32Array.from(request.prompt),
      context: context ? { ...context } : undefined,
      aborted: false,
    };
    this.requests.push(record);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      const turn = context?.turn ?? 0;
      const reply = this.reply(turn, context, request);
      if (reply === 'hang') {
        await new Promise<void>((resolve) => {
          if (request.signal?.aborted) resolve();
          else request.signal?.addEventListener('abort', () => resolve(), { once: true });
        });
        record.aborted = true;
        return { tokens: new Int32Array(0), logprobs: new Float32Array(0), finishReason: 'cancelled' };
      }
      if (this.delayMs > 0) await sleep(this.delayMs);
      let ids = tokenizer.encode(reply.text);
      if (reply.end !== false) ids.push(IM_END);
      let finishReason: Generation['finishReason'] = ids.at(-1) === IM_END ? 'stop' : 'length';
      if (ids.length > request.maxTokens) {
        ids = ids.slice(0, request.maxTokens);
        finishReason = 'length';
      }
      const generation: Generation = {
        tokens: Int32Array.from(ids),
        logprobs: Float32Array.from(ids, (_, i) => logprobOf(turn, i)),
        finishReason,
      };
      this.generations.push(generation);
      return generation;
    } finally {
      this.inFlight--;
    }
  }
}

/** Counts envs alive (created and not yet closed) across a test. */
export class EnvCounter {
  created = 0;
  closed = 0;
  alive = 0;
  maxAlive = 0;
  opened(): void {
    this.created++;
    this.alive++;
    this.maxAlive = Math.max(this.maxAlive, this.alive);
  }
  closedOne(): void {
    this.closed++;
    this.alive--;
  }
}

export interface FakeEnvSpec {
  opening?: ChatMessage[];
  /** Before reset resolves (a delay, a throw). */
  reset?: () => void | Promise<void>;
  /** The k-th step (1-based), given the action; default: not done, observation `obs k`. */
  step?: (action: string, k: number) => StepResult | Promise<StepResult>;
  reward?: RewardResult & { patch?: string };
  /** reward() throws this. */
  rewardError?: Error;
  counter?: EnvCounter;
  /** Whether the env has SweEnv's terminate(reason). Default true. */
  terminable?: boolean;
}

export const OPENING: ChatMessage[] = [
  { role: 'system', content: 'sys' },
  { role: 'user', content: 'task' },
];

/** A step result that keeps the episode going. */
export function going(observation: string, k: number, tool?: string): StepResult {
  return { observation, done: false, info: { steps: k, durationMs: 0, ...(tool ? { tool } : {}) } };
}

/** A step result that ends the episode. */
export function finished(observation: string, k: number, termination?: TerminationReason, extra: Record<string, unknown> = {}): StepResult {
  return { observation, done: true, info: { steps: k, durationMs: 0, ...(termination ? { termination } : {}), ...extra } };
}

/** A promise that never settles (a hung sandbox). */
export function never<T>(): Promise<T> {
  return new Promise<T>(() => {});
}

export class FakeEnv implements Env {
  resets = 0;
  closes = 0;
  rewardCalls = 0;
  readonly actions: string[] = [];
  /** Each step's action as the agent loop handed it (text, or a turn with JSON tool calls). */
  readonly given: (string | { content: string })[] = [];
  /** The limits the agent loop gave each step. */
  readonly limits: (StepLimits | undefined)[] = [];
  readonly terminated: TerminationReason[] = [];
  readonly terminate?: (reason: TerminationReason) => void;

  constructor(private readonly spec: FakeEnvSpec = {}) {
    spec.counter?.opened();
    if (spec.terminable !== false) this.terminate = (reason) => void this.terminated.push(reason);
  }

  async reset(): Promise<ChatMessage[]> {
    this.resets++;
    await this.spec.reset?.();
    return (this.spec.opening ?? OPENING).map((m) => ({ ...m }));
  }

  async step(action: string | { content: string }, limits?: StepLimits): Promise<StepResult> {
    const text = typeof action === 'string' ? action : action.content;
    this.actions.push(text);
    this.given.push(action);
    this.limits.push(limits);
    const k = this.actions.length;
    return this.spec.step ? this.spec.step(text, k) : going(`obs ${k}`, k);
  }

  async reward(): Promise<RewardResult & { patch?: string }> {
    this.rewardCalls++;
    if (this.spec.rewardError) throw this.spec.rewardError;
    return this.spec.reward ?? { reward: 0, tests: {}, reason: 'not solved' };
  }

  async close(): Promise<void> {
    this.closes++;
    this.spec.counter?.closedOne();
  }
}
