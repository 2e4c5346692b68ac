/**
 * The environment API every swerl environment implements, in the style of rLLM/gym:
 * reset() gives the opening messages, step(action) plays one assistant turn, reward() grades
 * the episode, close() releases everything the episode holds.
 */
import type { TerminationReason } from '../types/termination.js';
import type { JsonToolCall } from '../types/tool-call.js';

/** The test runners' log formats a task may name; lib/env/reward/test-log.ts has a parser for each. */
export const TEST_LOG_FORMATS = ['pytest', 'pytest-options', 'pytest-matplotlib', 'django', 'sympy', 'node-tap', 'node-spec', 'r2e-gym', 'automake'] as const;
export type TestLogFormat = (typeof TEST_LOG_FORMATS)[number];

/** A test's outcome as the runner's log reports it (lib/env/reward/test-log.ts reads the logs). */
export type TestStatus = 'PASSED' | 'FAILED' | 'ERROR' | 'SKIPPED' | 'XFAIL' | 'XPASS';

/** A line a patch adds that reaches for the test runner or the grader (lib/env/reward/patch-flags.ts). */
export interface PatchFlag {
  file: string;
  /** The line's number in the patched file. */
  line: number;
  /** The added line, trimmed (cut at 200 characters). */
  text: string;
  /** What it reaches for. */
  reason: string;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** One assistant turn: its text, and for chat-style policies its JSON tool calls. */
export interface AssistantTurn {
  content: string;
  tool_calls?: JsonToolCall[];
}

export interface StepResult {
  /** The next user message's content (tool output, countdown line included). */
  observation: string;
  /** The episode is over: no further step is accepted. */
  done: boolean;
  info: StepInfo;
}

export interface StepInfo {
  /** Set when done. */
  termination?: TerminationReason;
  /** The tool that ran, when the turn called one. */
  tool?: string;
  /**
   * Set when the turn broke the action format: no call, a malformed one, or more than one
   * (only the first ran). Rejection fine-tuning masks such turns out of the loss.
   */
  formatError?: string;
  /**
   * Set when the call was well formed and its tool answered an error (a str_replace whose
   * old_str is not in the file, a path that does not exist): the error's first line. Fine-tuning
   * on saved trajectories masks such turns out of the loss too.
   */
  toolError?: string;
  /** Steps taken so far, this one included. */
  steps: number;
  /** Wall time of this step in milliseconds. */
  durationMs: number;
  [key: string]: unknown;
}

export interface RewardResult {
  reward: 0 | 1;
  /** Per-test statuses the grader read (empty when it could not run the tests). */
  tests: Record<string, TestStatus>;
  /** Why the reward is what it is, in a line. */
  reason: string;
  /** Test infrastructure the candidate changed and grading reverted (SWE tasks). */
  reverted?: string[];
  /** What the grading guard saw the code under test do to the test runner (reward 0; SWE tasks). */
  tampering?: string[];
  /** Lines the patch adds to non-test source that reach for the runner or the grader (information, not a zero; SWE tasks). */
  patchFlags?: PatchFlag[];
  /** How close the graded patch comes to the task's gold patch, in [0, 1] (reward/similarity.ts; SWE tasks with one). */
  goldSimilarity?: number;
}

/**
 * The one step timeout and the one episode deadline: their defaults (rLLM's SWE settings:
 * 90 s a tool call, 90 minutes an episode). The agent loop owns both and hands each step
 * its limit; an env keeps no clock of its own.
 */
export const DEFAULT_STEP_TIMEOUT_MS = 90_000;
export const DEFAULT_EPISODE_TIMEOUT_MS = 5_400_000;

/** The time one env.step may take, as the agent loop gives it. */
export interface StepLimits {
  /** Wall time of this step's tool call, ms: the step timeout, or the episode's time left when less. */
  timeoutMs: number;
  /**
   * timeoutMs is the episode's time left: a tool call that runs out of it ends the episode
   * ('timeout'); otherwise a call past its limit is an observation and the episode goes on.
   */
  endsEpisode: boolean;
}

export const DEFAULT_STEP_LIMITS: Readonly<StepLimits> = { timeoutMs: DEFAULT_STEP_TIMEOUT_MS, endsEpisode: false };

export interface Env {
  reset(): Promise<ChatMessage[]>;
  step(action: string | AssistantTurn, limits?: StepLimits): Promise<StepResult>;
  reward(): Promise<RewardResult>;
  close(): Promise<void>;
}
