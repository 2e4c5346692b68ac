/**
 * FrozenLake's answer-format warm-up, for a model trained from scratch: a model with random
 * weights never writes "Right", so it never gets a reward to learn from. A few supervised
 * steps on episodes whose answers are drawn uniformly from the four moves, whatever the map
 * shows, teach it to answer with one move and stop. The answers carry no information about
 * which move is right (at every state each move is equally likely), so everything the model
 * knows about reaching the goal afterwards comes from RL.
 */
import type { AgentLoopOptions } from '../agent/agent-loop.js';
import { SwerlError, invalidArg } from '../errors.js';
import type { AgentPolicy, SamplingRequest } from '../types/policy.js';
import { runRollouts } from '../agent/rollout.js';
import { DIRECTIONS } from '../env/frozen-lake.js';
import type { Generation } from '../types/policy.js';
import type { NativePolicy } from '../model/native-policy.js';
import type { Tokenizer } from '../types/tokenizer.js';
import { mixSeed, mulberry32 } from '../util/random.js';
import type { TaskSource } from './task-source.js';

/** Answers one of Up/Down/Left/Right uniformly at random, then <|im_end|>. */
export class RandomMovePolicy implements AgentPolicy {
  readonly #rng: () => number;
  constructor(
    readonly tokenizer: Tokenizer,
    seed: number,
  ) {
    this.#rng = mulberry32(seed);
  }

  async generate(request: SamplingRequest): Promise<Generation> {
    const move = DIRECTIONS[Math.floor(this.#rng() * DIRECTIONS.length)]!;
    const ids = [...this.tokenizer.encode(move), ...this.tokenizer.eosTokenIds.slice(0, 1)].slice(0, request.maxTokens);
    return { tokens: Int32Array.from(ids), logprobs: new Float32Array(ids.length), finishReason: ids.length < request.maxTokens || ids.at(-1) === this.tokenizer.eosTokenIds[0] ? 'stop' : 'length' };
  }
}

export interface FormatWarmupOptions {
  steps: number;
  lr: number;
  /** Episodes per step. */
  episodes: number;
  seed: number;
  agent: AgentLoopOptions;
  /** Stops the warm-up between steps (Ctrl-C under the CLI). */
  signal?: AbortSignal;
  /** After each step: the answer tokens' mean negative log-likelihood before it. */
  onStep?: (step: number, nll: number) => void;
}

/**
 * Supervised steps through the policy-gradient loss: advantage +1 and old logprobs equal to
 * the current ones make the ratio 1, where the clipped objective's gradient is the gradient
 * of the answers' log-likelihood, averaged over answer tokens.
 */
/** Resolves with the last step's answer NLL. */
export async function formatWarmup(policy: NativePolicy, source: TaskSource, options: FormatWarmupOptions): Promise<number> {
  let nll = NaN;
  for (let step = 1; step <= options.steps; step++) {
    if (options.signal?.aborted) throw new SwerlError('ERR_SWERL_ABORTED', `the format warm-up was stopped before step ${step}`);
    const scripted = new RandomMovePolicy(policy.tokenizer, mixSeed(options.seed, step, 0x5eed));
    const items = Array.from({ length: options.episodes }, (_, i) => {
      const ref = source.train[i % source.train.length]!;
      return { taskId: ref.id, group: i, sample: 0, makeEnv: () => source.makeEnv(ref) };
    });
    const trajectories = await runRollouts(items, scripted, { concurrency: options.episodes, generationConcurrency: 0, retries: 0, agent: options.agent }, options.signal ? { signal: options.signal } : {});
    const current = await policy.logprobs(trajectories.map((t) => t.tokens));
    const answerTokens = trajectories.reduce((n, t) => n + t.mask.reduce((a, b) => a + b, 0), 0);
    if (answerTokens === 0)
      throw invalidArg('config.rollout.promptBudget', `leaves no room for a single answer: every warm-up episode ended as ${trajectories[0]?.termination} before its first turn`, 'raise promptBudget/responseBudget above the prompt length');
    // The answers' negative log-likelihood before this step (the loss itself is -1 by construction).
    nll = -trajectories.reduce((sum, t, i) => sum + t.mask.reduce((s, m, j) => s + m * current[i]![j]!, 0), 0) / answerTokens;
    await policy.trainStep({
      sequences: trajectories.map((t, i) => ({
        tokens: t.tokens,
        weights: Float32Array.from(t.mask, (m) => m / answerTokens),
        oldLogprobs: current[i]!,
        advantage: 1,
      })),
      lr: options.lr,
    });
    options.onStep?.(step, nll);
  }
  return nll;
}
