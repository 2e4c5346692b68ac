/** swerl: reinforcement learning for software-engineering agents. */
export { SwerlError, type SwerlErrorCode } from './errors.js';
export type { NativeBuildInfo } from './native.js';
export { computeAdvantages, type AdvantageEstimator, type AdvantageOptions } from './math/advantages.js';
export { tokenWeights, perToken, type Aggregation, type TokenWeightsArgs } from './math/token-weights.js';
export { TERMINATION_REASONS, type TerminationReason } from './types/termination.js';
export {
  compactFilter,
  turnPenalty,
  overlongPenalty,
  keepInformativeGroups,
  keepNonzeroAdvantages,
  type CompactFilterArgs,
} from './math/reward-shaping.js';
export {
  policyLoss,
  fusedLinearPolicyLoss,
  resolveLossOptions,
  type PolicyLossOptions,
  type PolicyLossInputs,
  type FusedLinearPolicyLossInputs,
  type FusedLinearPolicyLossOptions,
  DEFAULT_CHUNK_SIZE,
  type PolicyLossResult,
  type PolicyLossStats,
  type TokenInputs,
} from './math/policy-loss.js';

export type { Env, ChatMessage, AssistantTurn, StepResult, StepInfo, RewardResult } from './env/env.js';
export { SweEnv, type SweEnvOptions, type SweRewardResult } from './env/swe-env.js';
export { FrozenLakeEnv, type FrozenLakeOptions } from './env/frozen-lake.js';
export { assertRunnable, loadTasks, streamTasks, type LoadTasksOptions, type TaskFormat } from './env/tasks/load.js';
export { checkoutWorkTree, findCheckout, type Checkout } from './env/repositories.js';
export { filterRows, patchSize, type FilterOptions, type FilterReport } from './env/tasks/filter.js';
export { sweBenchSpec, testDirectives } from './env/tasks/swe-bench-specs.js';
export type { Task, TaskProblem, HiddenTests, ResolutionRule } from './env/task.js';
export { LocalSandboxBackend } from './env/sandbox/local.js';
export type { LocalSandboxOptions, DockerSandboxOptions } from './env/sandbox/options.js';
export { createSandboxBackend } from './env/sandbox/backends.js';
export { SANDBOX_BACKENDS, type SandboxBackendName } from './env/sandbox/options.js';
export type { Sandbox, SandboxBackend, SandboxSpec, SandboxLimits, ExecOptions, ExecResult } from './env/sandbox/sandbox.js';
export { SweTools, toolDescriptions } from './env/tools/index.js';
export { parseTextAction, parseJsonToolCalls, type Action } from './env/actions.js';
export { validateTasks, validationTable } from './env/validate.js';
export type { TaskValidation } from './env/task.js';
export { writeSweGenSuite, generateSweGenTask, assertSweGenSuitesDisjoint, SWE_GEN_BUG_KINDS, SWE_GEN_SPLITS, SWE_GEN_VERSION, type SweGenSuite, type SweGenSuiteRequest, type SweGenSuiteOptions, type SweGenTaskOptions, type GeneratedTask, type SweGenMetadata, type SweGenBug, type SweGenBugKind, type SweGenSplit } from './env/swe-gen/index.js';

export {
  NativePolicy,
  type GenerateRequest,
  type TrainSequence,
  type TrainStepBatch,
  type TrainStepResult,
} from './model/native-policy.js';
export type { NativePolicyLoadOptions, NativePolicyOptions, OptimizerOptions, SaveOptions } from './model/native-policy-options.js';
export { presetConfig, resolveModelConfig, parameterCount, MODEL_PRESETS, type HfModelConfig, type ModelPreset } from './model/model-config.js';
export { learningRate, type LrSchedule } from './model/schedule.js';
export type { Tokenizer, DecodeOptions } from './types/tokenizer.js';
export { ByteTokenizer } from './model/byte-tokenizer.js';
export { loadTokenizer } from './model/hf-tokenizer.js';
export { RemotePolicy, type RemotePolicyOptions } from './model/remote-policy.js';
export { startServer, type ServeOptions, type RunningServer } from './serve/server.js';
export { evaluatePolicy, evalReport, reportMarkdown, predictionsJsonl, writeEvalOutputs, type EvalOptions, type EvalReport, type EvalTask, type TaskResult } from './eval/evaluate.js';
export { passAtK, meanAndSem } from './eval/metrics.js';
export {
  renderChat,
  ChatRenderer,
  type ChatMessage as ChatTemplateMessage,
  type ToolDefinition,
  type RenderedChat,
} from './model/chat-template.js';
export { parseToolCalls, formatToolCall, type ParsedToolCall, type ParsedToolCalls } from './model/tool-calls.js';

export { train, type TrainHooks, type TrainSummary } from './train/trainer.js';
export { resolveTrainConfig, type TrainConfig, type RunConfig, type ModelConfig, type OptimizerConfig, type TasksConfig, type RolloutConfig, type EvalConfig, type SamplerConfig } from './train/config.js';
export { loadTrainConfig, applyOverrides, type LoadedTrainConfig } from './train/config-file.js';
export { sft, type SftSummary } from './train/sft/sft.js';
export { isSftConfig } from './train/config.js';
export { resolveSftConfig, type SftTrainConfig } from './train/sft/options.js';
export type { SftConfig } from './train/sft/options.js';
export { sftLoop, sftStep, sftSequences, stepExamples, heldOutNll, type SftLoopOptions, type SftLoopResult, type SftStepResult, type SftStepRow } from './train/sft/core.js';
export { trajectoryExample, fitLength, splitHeldOut, trainedTokens, assertFitsVocabulary, type SftExample, type OverlongPolicy } from './train/sft/example.js';
export { loadSftData, detectFormat, SFT_FORMATS, type SftData, type SftDataOptions, type SftFileReport, type SftFormat } from './train/sft/data.js';
export { chatExample, loadChatFile, type ChatRenderSettings } from './train/sft/chat.js';
export { loadTrajectoryFile, type TrajectoryFilters } from './train/sft/trajectories.js';
export type { SftDataSummary } from './train/sft/dataset.js';
export { startViewer, type Viewer, type ViewerOptions } from './view/server.js';
export type { TrackingOptions } from './train/tracking/index.js';
export { ALGORITHM_PRESETS, PRESETS as ALGORITHM_PRESET_FIELDS, type AlgorithmConfig, type AlgorithmPreset } from './train/algorithms.js';
export type { TrainEvent } from './train/progress.js';
export { trainingCharts, renderChartsSvg, asciiChart, type Chart, type Series } from './train/plots.js';
export { runEpisode, parseAgentLoopOptions, type AgentLoopOptions, type EpisodeSpec } from './agent/agent-loop.js';
export { runRollouts, type RolloutItem, type RolloutOptions, type RolloutProgress } from './agent/rollout.js';
export { sampleUntilResolved, type Draw, type SamplingOptions, type SamplingRound, type RejectionSamples } from './train/rft/sample.js';
export type { AgentPolicy, SamplingRequest, EpisodeContext, Generation, FinishReason } from './types/policy.js';
export type { JsonToolCall } from './types/tool-call.js';
export type { Trajectory, TurnRecord } from './agent/trajectory.js';
export { OraclePolicy, NoopPolicy } from './agent/scripted-policy.js';

import { native } from './native.js';
export { blasKernels } from './native.js';

/** What the native addon was built against (libtorch version and source, CUDA, threads). */
export function buildInfo() {
  return native().buildInfo();
}

/** Sets libtorch's intra-op threads (0 = every core). Default: SWERL_NUM_THREADS or every core. */
export function setNumThreads(threads: number): number {
  return native().setNumThreads(threads);
}
