/**
 * The SWE environment: one task, one sandbox, the four tools, graded by the repository's
 * tests. reset() starts a fresh sandbox; step() plays one assistant turn; reward() takes the
 * patch, closes the sandbox and grades the patch in a fresh one (the hidden tests enter only
 * there); close() destroys whatever sandbox is left.
 */
import { SwerlError, invalidArg, isInfrastructureFault } from '../errors.js';
import type { TerminationReason } from '../types/termination.js';
import { optionsParser, type Infer } from '../schema.js';
import { countTextCalls, parseJsonToolCalls, parseTextAction, type Action } from './actions.js';
import { DEFAULT_STEP_LIMITS, type AssistantTurn, type ChatMessage, type Env, type RewardResult, type StepLimits, type StepResult } from './env.js';
import { NO_TOOL_CALL, compactIssuePrompt, compactSystemPrompt, issuePrompt, reproductionPrompt, stepsRemainingLine, systemPrompt } from './prompts.js';
import { gradePatch } from './reward/grade.js';
import { patchSimilarity } from './reward/similarity.js';
import { prepareRepository, taskSandboxSpec, workingTreeDiff, type PreparedRepository } from './repo.js';
import type { Sandbox, SandboxBackend } from './sandbox/sandbox.js';
import type { Task } from './task.js';
import { SweTools, TOOL_PROFILES, firstOutputLine, toolDescriptions } from './tools/index.js';

const SWE_ENV_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    /** 'default' (every text file) or 'r2egym' (its .py-only, concise-view tools). */
    profile: { enum: TOOL_PROFILES, default: 'default' },
    /**
     * 'full': the tools described at length (R2E-Gym's, ~4.4k characters). 'compact': one line
     * per tool and a short issue wrapper (~0.5k), for small models trained from scratch, where
     * every prompt byte is a token of every step.
     */
    prompt: { enum: ['full', 'compact'], default: 'full' },
    /**
     * 'fix': resolve the issue, graded by the hidden tests. 'reproduce': write tests that
     * reproduce it (test-time scaling's test writer, lib/tts/reproduction.ts); its patch is the
     * episode's product and nothing is graded (reward 0).
     */
    goal: { enum: ['fix', 'reproduce'], default: 'fix' },
    /** DeepSWE trained with 50 and evaluated with 100. */
    maxSteps: { type: 'integer', minimum: 1, default: 50 },
    /** Time limit of the test run at grading (300 s in training, longer for evaluation). */
    rewardTimeoutMs: { type: 'integer', minimum: 1, default: 300_000 },
    /**
     * An episode that changed nothing: 'unresolved' scores it 0 without a grading sandbox, as
     * SWE-bench's harness counts an empty prediction (a valid task's failing tests fail on the
     * untouched repository, so running them only spends a sandbox and a test run); 'grade' runs
     * the tests anyway (task validation, whose base run checks exactly that claim).
     */
    emptyPatch: { enum: ['unresolved', 'grade'], default: 'unresolved' },
    /** Run label for the sandbox (reapers select on it). */
    label: { type: 'string' },
  },
} as const;
export type SweEnvOptions = Infer<typeof SWE_ENV_SCHEMA>;

export const parseSweEnvOptions = optionsParser(SWE_ENV_SCHEMA, {
  stepTimeoutMs: 'the step timeout is the agent loop\'s: set rollout.stepTimeoutMs (a training or eval config), or pass env.step(action, { timeoutMs, endsEpisode })',
  episodeTimeoutMs: 'the episode deadline is the agent loop\'s: set rollout.trajectoryTimeoutMs (a training or eval config)',
});

export interface SweRewardResult extends RewardResult {
  /** The patch that was graded. */
  patch: string;
  /** The test command's output. */
  log: string;
}

/** Grading sandboxes made per reward() before an infrastructure fault is the episode's. */
const GRADING_ATTEMPTS = 3;

export class SweEnv implements Env {
  readonly options: Readonly<SweEnvOptions>;
  private sandbox: Sandbox | null = null;
  private prepared: PreparedRepository | null = null;
  private tools: SweTools | null = null;
  private steps = 0;
  private termination: TerminationReason | null = null;
  private graded: SweRewardResult | null = null;

  constructor(
    readonly task: Task,
    private readonly backend: SandboxBackend,
    options: Partial<SweEnvOptions> = {},
  ) {
    this.options = parseSweEnvOptions(options, 'env');
  }

  /** OpenAI `tools` schemas, for chat-style policies. */
  openAiTools(): object[] {
    return toolDescriptions(this.options.profile, this.task.workdir).openAiTools;
  }

  async reset(): Promise<ChatMessage[]> {
    await this.close();
    this.steps = 0;
    this.termination = null;
    this.graded = null;
    const spec = await taskSandboxSpec(this.task, this.options.label);
    // The policy's commands go to one shell living as long as the sandbox (a fork each, not a
    // bwrap each: local-shell.ts); the grader's sandbox keeps a bwrap per command.
    this.sandbox = await this.backend.create({ ...spec, persistentShell: true });
    try {
      this.prepared = await prepareRepository(this.sandbox, this.task, { ...(spec.baseCommit ? { baseCommit: spec.baseCommit } : {}) });
    } catch (error) {
      await this.close();
      throw error;
    }
    this.tools = new SweTools(this.sandbox, { profile: this.options.profile });
    const tools = toolDescriptions(this.options.profile, this.task.workdir);
    const compact = this.options.prompt === 'compact';
    const issue = this.options.goal === 'reproduce'
      ? reproductionPrompt(this.task.problemStatement, this.task.workdir)
      : (compact ? compactIssuePrompt : issuePrompt)(this.task.problemStatement, this.task.workdir);
    return [
      { role: 'system', content: compact ? compactSystemPrompt(tools.compactText) : systemPrompt(tools.text) },
      { role: 'user', content: `${issue}\n${stepsRemainingLine(this.options.maxSteps)}` },
    ];
  }

  /** One turn; its tool call runs within limits.timeoutMs (the agent loop's step limit). */
  async step(action: string | AssistantTurn, limits: StepLimits = DEFAULT_STEP_LIMITS): Promise<StepResult> {
    if (!this.sandbox || !this.tools) throw invalidArg('env.step()', 'was called before reset()', 'call reset() first');
    if (this.termination) throw invalidArg('env.step()', `was called after the episode ended (${this.termination})`, 'call reset() to start another');
    const started = performance.now();
    this.steps++;
    const info = { steps: this.steps, durationMs: 0 } as StepResult['info'];

    let observation: string;
    let call: Action | null = null;
    const text = typeof action === 'string' ? action : action.content;
    const jsonCalls = typeof action === 'string' ? 0 : action.tool_calls?.length ?? 0;
    try {
      call = jsonCalls > 0 ? parseJsonToolCalls((action as AssistantTurn).tool_calls) : parseTextAction(text);
      observation = NO_TOOL_CALL;
      const calls = jsonCalls > 0 ? jsonCalls : countTextCalls(text);
      if (!call) info.formatError = 'no tool call';
      else if (calls > 1) info.formatError = `${calls} tool calls in one turn (only the first ran)`;
    } catch (error) {
      observation = `ERROR: ${(error as Error).message}`;
      info.formatError = `a malformed tool call: ${(error as Error).message}`;
    }
    if (call) {
      info.tool = call.name;
      try {
        const result = await this.tools.call(call, { timeoutMs: limits.timeoutMs });
        observation = result.observation;
        if (result.error) info.toolError = firstOutputLine(result.observation);
        if (result.finished) this.termination = 'submitted';
        else if (result.timedOut && limits.endsEpisode) this.termination = 'timeout';
      } catch (error) {
        if (!(error instanceof SwerlError)) throw error;
        this.termination = 'error';
        observation = `The sandbox failed: ${error.message}`;
        info.error = error.message;
      }
    }
    if (!this.termination && this.steps >= this.options.maxSteps) this.termination = 'max_steps';

    info.durationMs = performance.now() - started;
    if (this.termination) info.termination = this.termination;
    return {
      observation: `${observation}\n${stepsRemainingLine(this.options.maxSteps - this.steps)}`,
      done: this.termination !== null,
      info,
    };
  }

  /** Ends the episode from outside (e.g. the agent loop's token budget: 'max_context'). */
  terminate(reason: TerminationReason): void {
    this.termination ??= reason;
  }

  /** Why the episode ended, or null while it runs. */
  get terminationReason(): TerminationReason | null {
    return this.termination;
  }

  /** The sandbox of the current episode (null before reset and after close). */
  get currentSandbox(): Sandbox | null {
    return this.sandbox;
  }

  /** The work tree's diff against the base: the agent's patch. */
  async patch(): Promise<string> {
    if (this.graded) return this.graded.patch;
    if (!this.sandbox || !this.prepared) throw invalidArg('env.patch()', 'was called before reset()');
    return workingTreeDiff(this.sandbox, this.prepared.baseCommit);
  }

  /** Grades the episode once (later calls return the same result); ends the episode. */
  async reward(): Promise<SweRewardResult> {
    if (this.graded) return this.graded;
    if (!this.sandbox || !this.prepared) throw invalidArg('env.reward()', 'was called before reset()', 'call reset() and play the episode first');
    this.termination ??= 'submitted';
    let patch = '';
    try {
      patch = await workingTreeDiff(this.sandbox, this.prepared.baseCommit);
      // The episode's sandbox has served: its patch is graded in a fresh one.
      await this.close();
      if (this.options.goal === 'reproduce') {
        this.graded = { reward: 0, tests: {}, reason: 'not graded: a test-writing episode (its patch is the product)', patch, log: '' };
        return this.graded;
      }
      if (patch === '' && this.options.emptyPatch === 'unresolved') {
        this.graded = { reward: 0, tests: {}, reason: 'the patch is empty: the episode changed no file, so no test ran', patch, log: '' };
      } else {
        this.graded = await this.grade(patch);
      }
    } catch (error) {
      // The infrastructure failed (no sandbox, or the episode's own lost before its patch was
      // read): the reward is unknown, not 0. The rollout engine plays the episode again.
      if (!(error instanceof SwerlError) || isInfrastructureFault(error)) throw error;
      this.graded = { reward: 0, tests: {}, reason: `grading failed: ${error.message}`, patch, log: '' };
    }
    Object.assign(this.graded, this.goldSimilarity(patch));
    return this.graded;
  }

  /**
   * Grades the patch in a fresh sandbox. One lost to the infrastructure (its Docker host went
   * away) is made again (elsewhere, with many hosts): the patch is known, so only the grading is
   * redone.
   */
  private async grade(patch: string): Promise<SweRewardResult> {
    const options = { timeoutMs: this.options.rewardTimeoutMs, ...(this.options.label !== undefined ? { label: this.options.label } : {}) };
    for (let attempt = 1; ; attempt++) {
      try {
        return { ...(await gradePatch(this.backend, this.task, patch, options)), patch };
      } catch (error) {
        if (!isInfrastructureFault(error) || attempt >= GRADING_ATTEMPTS) throw error;
      }
    }
  }

  /** The patch's similarity to the task's gold patch, where the task has one. */
  private goldSimilarity(patch: string): { goldSimilarity?: number } {
    return this.task.goldPatch === undefined ? {} : { goldSimilarity: patchSimilarity(patch, this.task.goldPatch) };
  }

  async close(): Promise<void> {
    const sandbox = this.sandbox;
    this.sandbox = null;
    this.tools = null;
    this.prepared = null;
    await sandbox?.destroy();
  }
}
