/**
 * What the agent loop needs of a policy: a tokenizer to render the conversation, and token-in /
 * token-out sampling with the sampler's own logprobs. The model (NativePolicy), remote
 * inference servers (RemotePolicy) and scripted policies (lib/agent/scripted-policy.ts) are
 * each one.
 */
import type { Tokenizer } from './tokenizer.js';

export type FinishReason = 'stop' | 'length' | 'cancelled';

export interface Generation {
  /** The sampled ids, the stop token included when one ended the generation. */
  tokens: Int32Array;
  /** The sampler's fp32 logprob of each sampled token: log softmax(z / temperature). */
  logprobs: Float32Array;
  finishReason: FinishReason;
}

export interface SamplingRequest {
  /** The conversation so far, rendered by the chat template, ending with the generation prompt. */
  prompt: ArrayLike<number>;
  maxTokens: number;
  /** 0 = greedy. */
  temperature: number;
  topK?: number;
  topP?: number;
  seed?: number;
  signal?: AbortSignal;
}

/**
 * Who is asking: scripted policies read it; a model ignores it. `Task` is the env's task type
 * (lib/env/task.ts), left open here so that the model layer needs nothing of the env.
 */
export interface EpisodeContext<Task = unknown> {
  /** The task's id (FrozenLake: its map's name). */
  taskId: string;
  /** The SWE task, when the episode is one. */
  task?: Task;
  /** Which of the task's samples this episode is (0..n-1). */
  sample: number;
  /** Assistant turns taken before this one. */
  turn: number;
}

export interface AgentPolicy {
  readonly tokenizer: Tokenizer;
  /**
   * The ids it can sample: its output rows, which a model may pad past its tokenizer's ids (Qwen3
   * has 151936 rows for 151669 tokens; an untrained model samples the extra rows, which decode
   * to nothing). Unset: the tokenizer's.
   */
  readonly vocabSize?: number;
  generate(request: SamplingRequest, context?: EpisodeContext): Promise<Generation>;
}

/**
 * A policy that scores given text instead of sampling: every token's logprob given those
 * before it, at temperature 1 (entry 0 is 0: nothing comes before it). The judge of test-time
 * scaling reads answers' probabilities this way. NativePolicy answers from its own forward
 * pass; RemotePolicy from the servers' prompt logprobs (vLLM `prompt_logprobs`, SGLang
 * `input_token_logprobs`).
 */
export interface ScoringPolicy {
  readonly tokenizer: Tokenizer;
  logprobs(sequences: ArrayLike<number>[]): Promise<Float32Array[]>;
}
