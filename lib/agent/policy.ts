/**
 * What the agent loop needs of a policy: a tokenizer to render the conversation, and token-in /
 * token-out sampling with the sampler's own logprobs. NativePolicy is one; scripted policies
 * (the oracle and no-op of lib/agent/scripted-policy.ts) and, later, remote servers are others.
 */
import type { Generation } from '../policy/generation.js';
import type { Tokenizer } from '../policy/tokenizer.js';
import type { Task } from '../env/tasks/task.js';

export type { Generation, FinishReason } from '../policy/generation.js';

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

/** Who is asking: scripted policies read it; a model ignores it. */
export interface EpisodeContext {
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
  generate(request: SamplingRequest, context?: EpisodeContext): Promise<Generation>;
}
