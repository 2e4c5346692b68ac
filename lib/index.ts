/** swerl: reinforcement learning for software-engineering agents. */
export { SwerlError, type SwerlErrorCode } from './errors.js';
export type { NativeBuildInfo } from './native.js';
export { computeAdvantages, type AdvantageEstimator, type AdvantageOptions } from './math/advantages.js';
export { tokenWeights, perToken, type Aggregation, type TokenWeightsArgs } from './math/token-weights.js';
export {
  TERMINATION_REASONS,
  compactFilter,
  turnPenalty,
  overlongPenalty,
  keepInformativeGroups,
  keepNonzeroAdvantages,
  type TerminationReason,
  type CompactFilterArgs,
} from './math/reward-shaping.js';
export {
  policyLoss,
  fusedLinearPolicyLoss,
  resolveLossOptions,
  type PolicyLossOptions,
  type PolicyLossInputs,
  type FusedLinearPolicyLossInputs,
  type PolicyLossResult,
  type PolicyLossStats,
  type TokenInputs,
} from './math/policy-loss.js';

export type { Env, ChatMessage, AssistantTurn, StepResult, StepInfo, RewardResult } from './env/env.js';
export { SweEnv, type SweEnvOptions, type SweRewardResult } from './env/swe-env.js';
export { FrozenLakeEnv, type FrozenLakeOptions } from './env/frozen-lake.js';
export { loadTasks, streamTasks, type LoadTasksOptions, type TaskFormat } from './env/tasks/load.js';
export type { Task, TaskProblem, HiddenTests, ResolutionRule } from './env/tasks/task.js';
export { LocalSandboxBackend, type LocalSandboxOptions } from './env/sandbox/local.js';
export { createSandboxBackend, SANDBOX_BACKENDS, type SandboxBackendName } from './env/sandbox/backends.js';
export type { Sandbox, SandboxBackend, SandboxSpec, SandboxLimits, ExecOptions, ExecResult } from './env/sandbox/sandbox.js';
export { SweTools, toolDescriptions } from './env/tools/index.js';
export { parseTextAction, parseJsonToolCalls, type Action } from './env/actions.js';
export { validateTasks, validationTable, type TaskValidation } from './env/validate.js';

export {
  NativePolicy,
  type GenerateRequest,
  type Generation,
  type FinishReason,
  type TrainSequence,
  type TrainStepBatch,
  type TrainStepResult,
} from './policy/native-policy.js';
export type { NativePolicyLoadOptions, NativePolicyOptions, OptimizerOptions, SaveOptions } from './policy/native-policy-options.js';
export { presetConfig, resolveModelConfig, parameterCount, MODEL_PRESETS, type HfModelConfig, type ModelPreset } from './policy/model-config.js';
export { learningRate, type LrSchedule } from './policy/schedule.js';
export { ByteTokenizer, loadTokenizer, type Tokenizer } from './policy/tokenizer.js';
export {
  renderChat,
  ChatRenderer,
  parseToolCalls,
  type ChatMessage as ChatTemplateMessage,
  type ToolDefinition,
  type RenderedChat,
} from './policy/chat-template.js';

import { native } from './native.js';

/** What the native addon was built against (libtorch version and source, CUDA, threads). */
export function buildInfo() {
  return native().buildInfo();
}

/** Sets libtorch's intra-op threads (0 = every core). Default: SWERL_NUM_THREADS or every core. */
export function setNumThreads(threads: number): number {
  return native().setNumThreads(threads);
}
