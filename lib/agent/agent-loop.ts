/**
 * The agent loop: a policy plays one episode in an environment. The conversation is rendered
 * with the chat template turn by turn; the policy samples token ids; the decoded text is the
 * env's action; the observation comes back as the next user message. What the trainer needs
 * is recorded as it happens: the ids the policy saw, the mask of the ids it sampled, the
 * sampler's logprobs of those, every turn, why the episode ended, and the reward.
 *
 * Budgets (DeepSWE's max_prompt_length and max_response_length): the opening prompt has at
 * most `promptBudget` tokens, and everything after it (assistant turns and observations)
 * at most `responseBudget`; each generation's maxTokens shrinks as that budget is used, and a
 * trajectory that runs out ends as 'max_context'.
 */
import { SwerlError } from '../errors.js';
import { DEFAULT_EPISODE_TIMEOUT_MS, DEFAULT_STEP_TIMEOUT_MS, type AssistantTurn, type ChatMessage, type Env, type RewardResult, type StepLimits, type StepResult } from '../env/env.js';
import type { TerminationReason } from '../types/termination.js';
import { optionsParser, type Infer } from '../schema.js';
import { ChatRenderer } from '../model/chat-template.js';
import { parseToolCalls } from '../model/tool-calls.js';
import { tokenizerId } from '../model/tokenizer-id.js';
import { TEMPERATURE_SCHEMA } from '../model/native-policy-options.js';
import type { Task } from '../env/task.js';
import type { AgentPolicy, EpisodeContext, Generation } from '../types/policy.js';
import type { Trajectory, TurnRecord } from './trajectory.js';

/** The agent loop's options: this schema is their one declaration (AgentLoopOptions is read off it). */
export const AGENT_LOOP_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    /** Assistant turns at most (the env may end sooner by its own step limit). */
    maxTurns: { type: 'integer', minimum: 1, maximum: 100_000, default: 50 },
    /** Tokens of the opening prompt at most; a longer prompt ends the episode as 'max_context' before any turn. */
    promptBudget: { type: 'integer', minimum: 1, maximum: 2 ** 24, default: 4096 },
    /** Tokens after the prompt at most: every assistant turn and observation. */
    responseBudget: { type: 'integer', minimum: 1, maximum: 2 ** 24, default: 32768 },
    /** Tokens one assistant turn may sample at most (the response budget may allow fewer). */
    maxTokensPerTurn: { type: 'integer', minimum: 1, maximum: 2 ** 24, default: 4096 },
    temperature: { ...TEMPERATURE_SCHEMA, default: 1 },
    topK: { type: 'integer', minimum: 0, default: 0 },
    topP: { type: 'number', exclusiveMinimum: 0, maximum: 1, default: 1 },
    /** The episode deadline: wall time of the whole episode, generation and env included; past it: 'timeout'. */
    trajectoryTimeoutMs: { type: 'integer', minimum: 1, maximum: 2 ** 31 - 1, default: DEFAULT_EPISODE_TIMEOUT_MS },
    /**
     * The step timeout: wall time of one step's tool call, handed to env.step (a call past it is
     * an observation; an env.step that does not answer within it and its grace: 'env_timeout').
     */
    stepTimeoutMs: { type: 'integer', minimum: 1, maximum: 2 ** 31 - 1, default: DEFAULT_STEP_TIMEOUT_MS },
    /** When fewer response tokens than this are left, observations end with budgetWarning. */
    warnTokensLeft: { type: 'integer', minimum: 0, maximum: 2 ** 24, default: 0 },
    budgetWarning: { type: 'string', default: 'You are about to run out of context: finish now.' },
    /** Qwen3's thinking mode in the chat template. */
    enableThinking: { type: 'boolean', default: false },
  },
} as const;

export type AgentLoopOptions = Infer<typeof AGENT_LOOP_SCHEMA>;

export const parseAgentLoopOptions = optionsParser(AGENT_LOOP_SCHEMA);

export interface EpisodeSpec {
  env: Env;
  policy: AgentPolicy;
  context: Omit<EpisodeContext<Task>, 'turn'>;
  group: number;
  /** Stops the episode ('timeout' is not claimed: the caller decides what an abort means). */
  signal?: AbortSignal;
  /** The policy's weight version, recorded with the trajectory. */
  weightVersion?: number;
  /** Seed of the episode's first generation; turn k uses seed + k. */
  seed?: number;
}

/** The env has a way to be told why the episode ended (SweEnv.terminate). */
interface Terminable {
  terminate(reason: TerminationReason): void;
}

function isTerminable(env: Env): env is Env & Terminable {
  return typeof (env as Partial<Terminable>).terminate === 'function';
}

class Deadline extends Error {
  constructor(readonly reason: 'timeout' | 'env_timeout') {
    super(reason);
  }
}

/** Resolves with the promise, or rejects with Deadline(reason) after ms (the timer is cleared either way). */
async function within<T>(promise: Promise<T>, ms: number, reason: 'timeout' | 'env_timeout'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Deadline(reason)), Math.max(0, ms));
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * How long past its limit an env.step may take to stop its command and answer (a sandbox kills
 * the command's process group, or its container exec, and reports): the limit again, at most
 * 30 s. Past that the env is hung, not slow.
 */
function stepGraceMs(limitMs: number): number {
  return Math.min(limitMs, 30_000);
}

/** An aborted episode: the rollout engine was stopped (Ctrl-C, a failed sibling). */
export class EpisodeAborted extends SwerlError {
  constructor() {
    super('ERR_SWERL_ABORTED', 'the episode was aborted');
  }
}

/**
 * What env.step is handed for a sampled turn: its text, or, when the text holds Qwen
 * `<tool_call>` blocks (what a model taught OpenAI tool calls writes, e.g. after SFT on
 * SWE-smith data), the turn with those calls as JSON tool calls. Arguments that are not a JSON
 * object pass as text, for the env to call malformed.
 */
export function assistantAction(response: string): string | AssistantTurn {
  const parsed = parseToolCalls(response);
  if (parsed.toolCalls.length === 0) return response;
  return {
    content: parsed.content,
    tool_calls: parsed.toolCalls.map((call) => {
      const args = call.arguments;
      const object = typeof args === 'object' && args !== null && !Array.isArray(args);
      return { type: 'function' as const, function: { name: call.name, arguments: object ? (args as Record<string, unknown>) : JSON.stringify(args) } };
    }),
  };
}

/**
 * Plays one episode: env.reset() (whose failures propagate, so the rollout engine can retry
 * them), turns until the env is done or a budget runs out, env.reward(), and env.close()
 * whatever happens.
 */
export async function runEpisode(spec: EpisodeSpec, options: AgentLoopOptions): Promise<Trajectory> {
  const { env, policy, signal } = spec;
  const began = performance.now();
  const deadline = began + options.trajectoryTimeoutMs;
  const timings = { totalMs: 0, generateMs: 0, envMs: 0, rewardMs: 0 };
  const turns: TurnRecord[] = [];
  const sampled = new Map<number, number>();  // position -> sampler logprob
  const renderer = new ChatRenderer(policy.tokenizer, { enableThinking: options.enableThinking }, policy.vocabSize);
  let termination: TerminationReason | null = null;
  let error: string | undefined;
  let promptTokens = 0;
  const abortGeneration = new AbortController();
  const onAbort = () => abortGeneration.abort();
  signal?.addEventListener('abort', onAbort);

  try {
    if (signal?.aborted) throw new EpisodeAborted();
    let opening: ChatMessage[];
    try {
      opening = await within(env.reset(), deadline - performance.now(), 'timeout');
    } catch (caught) {
      // A reset that outlives the episode's whole time is an env that cannot start: an
      // infrastructure fault (so the rollout engine retries it), not a bare Deadline.
      if (caught instanceof Deadline) throw new SwerlError('ERR_SWERL_SANDBOX', `env.reset() did not finish within trajectoryTimeoutMs (${options.trajectoryTimeoutMs} ms)`);
      throw caught;
    }
    timings.envMs += performance.now() - began;
    renderer.append(...opening).generationPrompt();
    promptTokens = renderer.length;
    if (promptTokens > options.promptBudget) termination = 'max_context';

    while (termination === null) {
      if (signal?.aborted) throw new EpisodeAborted();
      const used = renderer.length - promptTokens;
      const left = options.responseBudget - used;
      if (left <= 0) {
        termination = 'max_context';
        break;
      }
      if (turns.length >= options.maxTurns) {
        termination = 'max_steps';
        break;
      }
      const maxTokens = Math.min(options.maxTokensPerTurn, left);
      const contextTokens = renderer.length;
      const generated = await generate(spec, options, renderer.ids, maxTokens, turns.length, deadline, abortGeneration);
      timings.generateMs += generated.ms;
      const g = generated.generation;
      if (g.finishReason === 'cancelled') {
        if (signal?.aborted) throw new EpisodeAborted();
        termination = 'timeout';
        break;
      }
      g.tokens.forEach((_, i) => sampled.set(contextTokens + i, g.logprobs[i]!));
      renderer.append({ role: 'assistant', content: null, tokenIds: g.tokens });
      const response = policy.tokenizer.decode(g.tokens, { skipSpecialTokens: true });
      const turn: TurnRecord = {
        contextTokens,
        responseTokens: g.tokens.length,
        finishReason: g.finishReason,
        response,
        observation: '',
        observationTokens: 0,
        generateMs: generated.ms,
        stepMs: 0,
      };
      turns.push(turn);
      if (g.finishReason === 'length' && maxTokens === left) {
        // Cut by the response budget, not by the per-turn limit: the context is full.
        termination = 'max_context';
        break;
      }

      const stepStarted = performance.now();
      let step: StepResult;
      try {
        const timeLeft = Math.ceil(deadline - stepStarted);
        if (timeLeft <= 0) {
          termination = 'timeout';
          break;
        }
        const limits: StepLimits = { timeoutMs: Math.min(options.stepTimeoutMs, timeLeft), endsEpisode: timeLeft <= options.stepTimeoutMs };
        step = await within(env.step(assistantAction(response), limits), limits.timeoutMs + stepGraceMs(limits.timeoutMs), limits.endsEpisode ? 'timeout' : 'env_timeout');
      } catch (caught) {
        if (caught instanceof Deadline) {
          termination = caught.reason;
          break;
        }
        termination = 'error';
        error = (caught as Error).message;
        break;
      } finally {
        turn.stepMs = performance.now() - stepStarted;
        timings.envMs += turn.stepMs;
      }
      if (step.info.tool !== undefined) turn.tool = step.info.tool;
      if (typeof step.info.formatError === 'string') turn.formatError = step.info.formatError;
      if (typeof step.info.toolError === 'string') turn.toolError = step.info.toolError;
      if (step.done) {
        termination = step.info.termination ?? 'submitted';
        if (termination === 'error' && typeof step.info.error === 'string') error = step.info.error;
        turn.observation = step.observation;
        break;
      }
      const before = renderer.length;
      const tokensLeft = options.responseBudget - (before - promptTokens);
      const warn = options.warnTokensLeft > 0 && tokensLeft < options.warnTokensLeft;
      turn.observation = warn ? `${step.observation}\n${options.budgetWarning}` : step.observation;
      renderer.append({ role: 'user', content: turn.observation }).generationPrompt();
      turn.observationTokens = renderer.length - before;
    }

    if (termination !== 'error' && isTerminable(env)) env.terminate(termination);
    let graded: RewardResult & { patch?: string } = { reward: 0, tests: {}, reason: error ? `the episode failed: ${error}` : 'not graded' };
    if (termination !== 'error') {
      const rewardStarted = performance.now();
      graded = await env.reward();
      timings.rewardMs = performance.now() - rewardStarted;
    }
    timings.totalMs = performance.now() - began;

    const tokens = renderer.ids;
    const mask = new Uint8Array(tokens.length);
    const logprobs = new Float32Array(tokens.length);
    for (const [position, logprob] of sampled) {
      mask[position] = 1;
      logprobs[position] = logprob;
    }
    const trajectory: Trajectory = {
      taskId: spec.context.taskId,
      group: spec.group,
      sample: spec.context.sample,
      tokens,
      tokenizer: tokenizerId(spec.policy.tokenizer),
      mask,
      logprobs,
      promptTokens,
      messages: opening.map(({ role, content }) => ({ role, content })),
      responseTokens: tokens.length - promptTokens,
      turns,
      termination,
      reward: graded.reward,
      rewardReason: graded.reason,
      attempts: 1,
      weightVersion: spec.weightVersion ?? 0,
      timings,
    };
    if (Object.keys(graded.tests).length > 0) trajectory.tests = graded.tests as Record<string, string>;
    if (typeof graded.patch === 'string') trajectory.patch = graded.patch;
    if (graded.reverted?.length) trajectory.reverted = graded.reverted;
    if (graded.tampering?.length) trajectory.tampering = graded.tampering;
    if (graded.patchFlags?.length) trajectory.patchFlags = graded.patchFlags;
    if (graded.goldSimilarity !== undefined) trajectory.goldSimilarity = graded.goldSimilarity;
    if (error !== undefined) trajectory.error = error;
    return trajectory;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await env.close();
  }
}

async function generate(
  spec: EpisodeSpec,
  options: AgentLoopOptions,
  prompt: Int32Array,
  maxTokens: number,
  turn: number,
  deadline: number,
  abort: AbortController,
): Promise<{ generation: Generation; ms: number }> {
  const started = performance.now();
  const timer = setTimeout(() => abort.abort(), Math.max(0, deadline - started));
  try {
    const generation = await spec.policy.generate(
      {
        prompt,
        maxTokens,
        temperature: options.temperature,
        ...(options.topK !== 0 ? { topK: options.topK } : {}),
        ...(options.topP !== 1 ? { topP: options.topP } : {}),
        ...(spec.seed !== undefined ? { seed: spec.seed + turn } : {}),
        signal: abort.signal,
      },
      { ...spec.context, turn },
    );
    return { generation, ms: performance.now() - started };
  } finally {
    clearTimeout(timer);
  }
}
