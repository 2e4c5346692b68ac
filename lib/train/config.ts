/**
 * The training config: one ajv schema per section, validated and fully defaulted here, so the
 * trainer reads plain typed fields. Errors name the field (`config.rollout.samplesPerTask`)
 * and what is allowed.
 */
import path from 'node:path';

import { invalidArg } from '../errors.js';
import { parseAgentLoopOptions, type AgentLoopOptions } from '../agent/agent-loop.js';
import { SANDBOX_BACKENDS, parseSandboxOptions, type ResolvedDockerOptions, type ResolvedLocalOptions } from '../env/sandbox/options.js';
import { parseSweEnvOptions, type SweEnvOptions } from '../env/swe-env.js';
import { integer, optionsParser, type Infer } from '../schema.js';
import { didYouMean } from '../util/nearest.js';
import { ADAMW_FIELDS, MAX_LR, MODEL_FIELDS, TEMPERATURE_SCHEMA } from '../model/native-policy-options.js';
import { MODEL_PRESET_NAMES } from '../model/model-config.js';
import { assertBpeTokenizerFolder } from '../model/hf-tokenizer.js';
import { RFT_OPTIMIZER_DEFAULTS, UNRESOLVED_GRADING, resolveAlgorithm, type AlgorithmConfig } from './algorithms.js';
import { parseSweGenTaskOptions, type SweGenTaskOptions } from '../env/swe-gen/options.js';
import { SEEDS_PER_SPLIT } from '../env/swe-gen/splits.js';
import { parseTrackingOptions, type TrackingOptions } from './tracking/index.js';
import { CURRICULUM_SCHEMA, tierOptions } from './curriculum.js';

/** Counts past these can only be typos (an integer 1e300 is still an integer). */
const STEPS = { type: 'integer', minimum: 1, maximum: 10_000_000 } as const;

const RUN_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['dir'],
  properties: {
    /** The run directory: config, metrics, trajectories, checkpoints, plots. */
    dir: { type: 'string', minLength: 1 },
    /** Training steps (one batch of rollouts and its optimizer steps each). */
    steps: { ...STEPS, default: 20 },
    seed: { type: 'integer', minimum: 0, maximum: 0xffffffff, default: 0 },
    /** Continue from the last checkpoint in dir (same task order and random state). */
    resume: { type: 'boolean', default: false },
    checkpointEvery: { ...STEPS, default: 5 },
    keepCheckpoints: integer(1, 1000, 2),
    /** Write every trajectory to trajectories/step-N.jsonl.gz. */
    saveTrajectories: { type: 'boolean', default: true },
    plots: { type: 'boolean', default: true },
    /** 'auto': a live bar on a terminal, a line per step otherwise. */
    progress: { enum: ['auto', 'bar', 'lines', 'none'], default: 'auto' },
  },
} as const;
export type RunConfig = Infer<typeof RUN_SCHEMA>;

// maxGradNorm lives in the optimizer section of a run.
const { maxGradNorm: _maxGradNorm, ...MODEL_FIELDS_OF_THE_RUN } = MODEL_FIELDS;

const MODEL_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    /** A built-in size trained from scratch with the byte tokenizer... */
    preset: { enum: MODEL_PRESET_NAMES },
    /** ...or a Hugging Face model directory. */
    path: { type: 'string', minLength: 1 },
    /**
     * With preset: a folder with the tokenizer.json the model reads (`swerl tokenizer train` makes
     * one); the vocabulary is its size. Default: the byte tokenizer. A model directory (path) has its own.
     */
    tokenizer: { type: 'string', minLength: 1 },
    ...MODEL_FIELDS_OF_THE_RUN,
  },
} as const;
export type ModelConfig = Infer<typeof MODEL_SCHEMA>;

const OPTIMIZER_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...ADAMW_FIELDS,
    warmupSteps: integer(0, 10_000_000, 0),
    schedule: { enum: ['constant', 'cosine'], default: 'constant' },
    maxGradNorm: MODEL_FIELDS.maxGradNorm,
  },
} as const;
export type OptimizerConfig = Infer<typeof OPTIMIZER_SCHEMA>;

const SEEDS = { type: 'array', minItems: 1, items: { type: 'integer', minimum: 0, maximum: 0xffffffff } } as const;

const FROZEN_LAKE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['kind'],
  properties: {
    kind: { const: 'frozenlake' },
    size: { type: 'integer', minimum: 2, maximum: 32, default: 4 },
    holeDensity: { type: 'number', minimum: 0, maximum: 0.9, default: 0.2 },
    slippery: { type: 'boolean', default: false },
    maxSteps: integer(1, 1000, 10),
    /** FrozenLakeEnv's prompt style: 'short' for byte-level models from scratch. */
    prompt: { enum: ['full', 'short'], default: 'full' },
    /** Map seeds trained on. */
    trainSeeds: { ...SEEDS, default: [0, 1, 2, 3] },
    /** Map seeds evaluated greedily (default: the training maps). */
    evalSeeds: SEEDS,
    /**
     * Answer-format warm-up before RL: supervised steps on answers drawn uniformly from the four
     * moves whatever the map, so a model from scratch learns to answer with a move and nothing
     * about which move is right. 0 = none.
     */
    formatWarmupSteps: integer(0, 1_000_000, 0),
    formatWarmupLr: { type: 'number', exclusiveMinimum: 0, maximum: MAX_LR, default: 1e-3 },
  },
} as const;
export type FrozenLakeTasksConfig = Infer<typeof FROZEN_LAKE_SCHEMA>;

/**
 * Generated tasks (swe-gen): `train` tasks of the train split and `heldout` of the held-out
 * split, written into tasks.path (default <run.dir>/tasks) when the run opens its tasks; the
 * held-out ones are the eval tasks unless evalIds names others. The rest are swe-gen's knobs,
 * checked by its parser (parseSweGenTaskOptions) when the config loads.
 */
const GENERATE_SCHEMA = {
  type: 'object',
  required: ['train', 'heldout'],
  properties: {
    train: integer(1, 1_000_000),
    heldout: integer(0, 1_000_000),
    /**
     * Where the run's seeds start in each split (default 0): the train suite, or the curriculum's
     * tiers, from train seed firstSeed on, the held-out suite from held-out seed firstSeed on.
     * Runs with firstSeeds further apart than their task counts draw disjoint tasks.
     */
    firstSeed: integer(0, SEEDS_PER_SPLIT - 1),
  },
} as const;
export type SweGenerateConfig = Omit<Infer<typeof GENERATE_SCHEMA>, keyof SweGenTaskOptions> & Partial<SweGenTaskOptions>;

const SWE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['kind'],
  properties: {
    kind: { const: 'swe' },
    /** A task folder suite, SWE-bench or R2E-Gym JSON/JSONL (with generate: where the suites are written). */
    path: { type: 'string', minLength: 1 },
    generate: GENERATE_SCHEMA,
    /** Tiers of generated tasks, easiest first, advanced by a dev slice's resolve rate (lib/train/curriculum.ts); needs generate. */
    curriculum: CURRICULUM_SCHEMA,
    format: { enum: ['swerl', 'swe-bench', 'r2e-gym'] },
    /** A folder of git clones for dataset rows (DIR/owner__name at each row's base_commit). */
    repos: { type: 'string', minLength: 1 },
    /** The test command for dataset rows, overriding the row's and the built-in one. */
    testCommand: { type: 'string', minLength: 1 },
    /** Train only on these task ids (with a curriculum: each tier's pool narrowed to them; its dev slice stays whole). */
    only: { type: 'array', minItems: 1, items: { type: 'string' } },
    /** Held-out task ids evaluated instead of trained on. */
    evalIds: { type: 'array', items: { type: 'string' } },
    sandbox: { enum: SANDBOX_BACKENDS, default: 'local' },
    /** The backend's options (lib/env/sandbox/options.ts), checked for the backend named when the config loads. */
    sandboxOptions: { type: 'object', default: {} },
    /** SweEnv's options (lib/env/swe-env.ts), checked by its parser when the config loads. */
    env: { type: 'object', default: {} },
  },
} as const;
/** The swe section resolved: its paths absolute, the sandbox's and the env's options checked and defaulted. */
export type SweTasksConfig = Omit<Infer<typeof SWE_SCHEMA>, 'path' | 'generate' | 'sandboxOptions' | 'env'> & {
  path: string;
  generate?: SweGenerateConfig;
  sandboxOptions: ResolvedLocalOptions | ResolvedDockerOptions;
  env: SweEnvOptions;
};

export type TasksConfig = FrozenLakeTasksConfig | SweTasksConfig;

/** Async rollouts' bound on the policy's age, in steps (rollout.maxStaleness). */
const ROLLOUT_MAX_STALENESS_DEFAULT = 1;

/** The rollout engine's fields; the agent loop's follow in the same section (checked by its own parser). */
const ROLLOUT_ENGINE_SCHEMA = {
  type: 'object',
  additionalProperties: true,
  properties: {
    /** Tasks (groups) per training step. */
    tasksPerStep: integer(1, 100_000, 4),
    /** n: samples per task. */
    samplesPerTask: integer(1, 1024, 8),
    /** Episodes (sandboxes) in flight. */
    concurrency: integer(1, 4096, 8),
    /** Generations in flight (0 = no bound beyond concurrency). */
    generationConcurrency: integer(0, 4096, 0),
    retries: integer(0, 100, 2),
    /** Sampling other than pure temperature makes the sampler's logprobs the wrong distribution; refused unless true. */
    allowNonPureSampling: { type: 'boolean', default: false },
    /**
     * 'sync': collect, then learn. 'async': the next steps' rollouts are collected while the
     * learner trains (lib/train/async-rollouts.ts), from weights at most maxStaleness steps old.
     */
    mode: { enum: ['sync', 'async'], default: 'sync' },
    /** Async: how many training steps behind the trained weights a trajectory's sampler may be (0 = the sync schedule). */
    maxStaleness: integer(0, 64, ROLLOUT_MAX_STALENESS_DEFAULT),
  },
} as const;
type RolloutEngineFields = Infer<{ type: 'object'; properties: (typeof ROLLOUT_ENGINE_SCHEMA)['properties'] }>;
/** The rollout engine's fields, then the agent loop's (the budget warning comes from the task kind). */
export type RolloutConfig = RolloutEngineFields & Omit<AgentLoopOptions, 'budgetWarning'>;
const parseRollout = optionsParser(ROLLOUT_ENGINE_SCHEMA);
/** Every field of config.rollout: the engine's and the agent loop's (its parser fills every default). */
const ROLLOUT_FIELDS = [...Object.keys(ROLLOUT_ENGINE_SCHEMA.properties), ...Object.keys(parseAgentLoopOptions({}, 'rollout')).filter((k) => k !== 'budgetWarning')];

const EVAL_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    /** Evaluate every k steps (and before the first and after the last); 0 = never. */
    every: integer(0, 10_000_000, 0),
    /**
     * The eval before the first step (step 0). Off for a run that starts from a checkpoint another
     * run has just measured on the same tasks (a phase of a recipe): the same number again.
     */
    atStart: { type: 'boolean', default: true },
    /** Runs per eval task (greedy runs repeat exactly on deterministic envs). */
    samples: integer(1, 1024, 1),
    temperature: { ...TEMPERATURE_SCHEMA, default: 0 },
  },
} as const;
export type EvalConfig = Infer<typeof EVAL_SCHEMA>;

/**
 * Who samples the rollouts. 'native' (default): the learner itself, in this process. 'remote':
 * inference servers (vLLM, SGLang, swerl serve) through RemotePolicy, while the learner only
 * learns; after every step the learner writes its weights under syncDir and every server loads
 * them. `launch: n` starts n swerl-serve servers on loopback for the run instead of `servers`.
 */
const SAMPLER_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    kind: { enum: ['native', 'remote'], default: 'native' },
    servers: { type: 'array', items: { type: 'string', pattern: '^https?://' }, default: [] },
    launch: { type: 'integer', minimum: 0, maximum: 64, default: 0 },
    protocol: { enum: ['openai', 'sglang'], default: 'openai' },
    model: { type: 'string', minLength: 1 },
    routing: { enum: ['least-loaded', 'round-robin'], default: 'least-loaded' },
    weightUpdatePath: { type: 'string', pattern: '^/', default: '/update_weights_from_disk' },
    /** Where the learner writes the weights the servers load (a path they can read). Default <run.dir>/sampler-weights. */
    syncDir: { type: 'string', minLength: 1 },
    /**
     * The old logprobs of the loss: 'learner' (default, as verl does) recomputes them with the
     * learner, so the ratio measures the policy's change only; 'sampler' keeps the servers'.
     * The gap between the two is logged every step either way.
     */
    oldLogprobs: { enum: ['learner', 'sampler'], default: 'learner' },
    requestTimeoutMs: integer(1, 86_400_000, 600_000),
  },
} as const;
export type SamplerConfig = Infer<typeof SAMPLER_SCHEMA>;

export interface TrainConfig {
  run: RunConfig;
  /** TensorBoard (default on), W&B (when named), the verl/TRL metric names (lib/train/tracking). */
  tracking: TrackingOptions;
  model: ModelConfig;
  optimizer: OptimizerConfig;
  tasks: TasksConfig;
  algorithm: AlgorithmConfig;
  rollout: RolloutConfig;
  eval: EvalConfig;
  sampler: SamplerConfig;
}

const parseRun = optionsParser(RUN_SCHEMA);
const parseModel = optionsParser(MODEL_SCHEMA);
const parseOptimizer = optionsParser(OPTIMIZER_SCHEMA);
const parseFrozenLake = optionsParser(FROZEN_LAKE_SCHEMA);
const parseSwe = optionsParser(SWE_SCHEMA);
const parseEval = optionsParser(EVAL_SCHEMA);
const parseSampler = optionsParser(SAMPLER_SCHEMA);

function section(raw: Record<string, unknown>, key: string): unknown {
  const value = raw[key];
  if (value !== undefined && (typeof value !== 'object' || value === null || Array.isArray(value)))
    throw invalidArg(`config.${key}`, 'must be an object');
  return value;
}

/**
 * Validates and defaults a whole training config. Relative input paths (tasks.path,
 * tasks.repos, model.path) are taken from `baseDir`: the config file's folder when it came from
 * a file (loadTrainConfig), the working directory otherwise. Outputs (run.dir, sampler.syncDir)
 * are taken from the working directory, as Hydra does, so a config kept beside the code or
 * shipped in a package writes its runs where the command runs.
 */
export function resolveTrainConfig(value: unknown, baseDir = process.cwd()): TrainConfig {
  const raw = configObject(value);
  if (raw.sft !== undefined)
    throw invalidArg('config.sft', 'makes this a supervised fine-tuning config', 'run it with swerl sft (or train()), or check it with resolveSftConfig / swerl sft --print-config');
  if (raw.pretrain !== undefined)
    throw invalidArg('config.pretrain', 'makes this a pretraining config', 'run it with swerl pretrain (or train()), or check it with resolvePretrainConfig');
  const { tasks, ...rest } = resolveSections(raw, baseDir, true);
  return { ...rest, tasks: tasks! };
}

/** The config of a job without rollouts: every section but tasks as resolveTrainConfig has them, tasks optional, and the job's own. */
export type JobConfig<K extends 'sft' | 'pretrain', J> = Omit<TrainConfig, 'tasks'> & { tasks?: TasksConfig } & { [key in K]: J };

/**
 * Validates and defaults the config of a job without rollouts (an `sft` or a `pretrain`
 * section, never both): the sections of resolveTrainConfig with tasks optional, and the job's
 * section by its own resolver. `what` and `example` name the job in the error a config
 * without its section gets.
 */
export function resolveJobConfig<K extends 'sft' | 'pretrain', J>(value: unknown, baseDir: string, key: K, resolveJob: (section: unknown) => J, what: string, example: string): JobConfig<K, J> {
  const raw = configObject(value);
  if (raw[key] === undefined) throw invalidArg(`config.${key}`, `is required for ${what}`, `e.g. ${example}`);
  if (raw.sft !== undefined && raw.pretrain !== undefined) throw invalidArg('config.pretrain', 'and config.sft make two jobs of one config', 'keep one: pretrain, then fine-tune from its checkpoint');
  const { tasks, ...rest } = resolveSections(raw, baseDir, false);
  return { ...rest, ...(tasks ? { tasks } : {}), [key]: resolveJob(raw[key]) } as JobConfig<K, J>;
}

/** The config has a `pretrain` section: train() runs pretraining on reading drills. */
export function isPretrainConfig(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && (value as Record<string, unknown>).pretrain !== undefined;
}

/** The config has an `sft` section: train() runs supervised fine-tuning on it. */
export function isSftConfig(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && (value as Record<string, unknown>).sft !== undefined;
}

/** The config as an object, or refused. */
export function configObject(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidArg('config', 'must be an object');
  return value as Record<string, unknown>;
}

/** Every section but sft. For RL (rl: true) tasks are required and the step's batch must fit them; SFT may leave them out. */
export function resolveSections(raw: Record<string, unknown>, baseDir: string, rl: boolean): Omit<TrainConfig, 'tasks'> & { tasks?: TasksConfig } {
  const known = ['run', 'tracking', 'model', 'optimizer', 'tasks', 'algorithm', 'rollout', 'eval', 'sampler', ...(rl ? [] : ['sft', 'pretrain'])];
  for (const key of Object.keys(raw))
    if (!known.includes(key)) throw invalidArg(`config.${key}`, `is not a known section${didYouMean(key, known)}; known: ${known.join(', ')}`);

  const run = parseRun(section(raw, 'run'), 'config.run');
  run.dir = path.resolve(run.dir);
  const tracking = parseTrackingOptions(section(raw, 'tracking'), 'config.tracking');

  const model = parseModel(section(raw, 'model'), 'config.model');
  if ((model.preset === undefined) === (model.path === undefined))
    throw invalidArg('config.model', 'needs exactly one of preset (a built-in size from scratch) and path (a Hugging Face model directory)', `e.g. {"preset": "qwen3-tiny"}`);
  if (model.path !== undefined) model.path = path.resolve(baseDir, model.path);
  if (model.tokenizer !== undefined) {
    if (model.preset === undefined) throw invalidArg('config.model.tokenizer', 'goes with preset (a model from scratch); a model directory (path) reads its own tokenizer.json', 'remove it');
    model.tokenizer = path.resolve(baseDir, model.tokenizer);
    assertBpeTokenizerFolder(model.tokenizer, 'config.model.tokenizer');
  }

  const optimizer = parseOptimizer(section(raw, 'optimizer'), 'config.optimizer');

  const tasksRaw = section(raw, 'tasks') as { kind?: unknown } | undefined;
  if (tasksRaw === undefined && rl) throw invalidArg('config.tasks', 'is required', 'e.g. {"kind": "frozenlake"} or {"kind": "swe", "path": "tasks/swe-mini"}');
  let tasks: TasksConfig | undefined;
  if (tasksRaw === undefined) tasks = undefined;
  else if (tasksRaw.kind === 'frozenlake') tasks = parseFrozenLake(tasksRaw, 'config.tasks');
  else if (tasksRaw.kind === 'swe') {
    const swe = parseSwe(tasksRaw, 'config.tasks');
    if (swe.path === undefined && swe.generate === undefined)
      throw invalidArg('config.tasks.path', 'is required', 'name a task folder suite or dataset rows, or generate tasks: {"generate": {"train": 200, "heldout": 30}}');
    if (swe.generate) {
      const { train, heldout, firstSeed = 0, ...knobs } = swe.generate;
      parseSweGenTaskOptions(knobs, 'config.tasks.generate');
      if (swe.curriculum) tierOptions(swe.curriculum, knobs);
      const trainSeeds = swe.curriculum ? swe.curriculum.tiers.length * (train + swe.curriculum.devTasks) : train;
      if (firstSeed + Math.max(trainSeeds, heldout) > SEEDS_PER_SPLIT)
        throw invalidArg('config.tasks.generate.firstSeed', `(${firstSeed}) leaves too few seeds: the run takes ${Math.max(trainSeeds, heldout)} from it and a split has ${SEEDS_PER_SPLIT}`, 'give an earlier firstSeed');
    } else if (swe.curriculum) {
      throw invalidArg('config.tasks.curriculum', 'needs generated tasks (its tiers are swe-gen suites)', 'add tasks.generate: {"train": 200, "heldout": 300}');
    }
    const env = parseSweEnvOptions(swe.env, 'config.tasks.env');
    // A test-writing episode is graded by nothing: every reward would be 0.
    if (env.goal !== 'fix') throw invalidArg('config.tasks.env.goal', `is ${JSON.stringify(env.goal)}; a training run's episodes are graded by the tests, so their goal is 'fix'`, "remove it (test writing is swerl eval --select's reproduction verifier)");
    tasks = {
      ...swe,
      // Generated suites go where the run writes (from the working directory), unless placed.
      path: swe.path !== undefined ? path.resolve(baseDir, swe.path) : path.resolve(run.dir, 'tasks'),
      ...(swe.repos !== undefined ? { repos: path.resolve(baseDir, swe.repos) } : {}),
      sandboxOptions: parseSandboxOptions(swe.sandbox, swe.sandboxOptions, 'config.tasks.sandboxOptions'),
      env,
    };
  } else throw invalidArg('config.tasks.kind', `is ${JSON.stringify(tasksRaw.kind)}`, 'use "frozenlake" or "swe"');

  const rolloutRaw = (section(raw, 'rollout') ?? {}) as Record<string, unknown>;
  if ('budgetWarning' in rolloutRaw)
    throw invalidArg('config.rollout.budgetWarning', 'is set by the task kind (FrozenLake: answer now; SWE: call finish now)', 'remove it');
  for (const key of Object.keys(rolloutRaw))
    if (!ROLLOUT_FIELDS.includes(key)) throw invalidArg(`config.rollout.${key}`, `is not a known option${didYouMean(key, ROLLOUT_FIELDS)}; known: ${ROLLOUT_FIELDS.join(', ')}`);
  const { tasksPerStep, samplesPerTask, concurrency, generationConcurrency, retries, allowNonPureSampling, mode, maxStaleness, ...agentRaw } = parseRollout(rolloutRaw, 'config.rollout');
  const agent = parseAgentLoopOptions(
    { budgetWarning: undefined, ...agentRaw },
    'config.rollout',
  );
  const { budgetWarning: _unused, ...agentFields } = agent;
  // The "submit now" line comes when an eighth of the response budget is left (at most 4096
  // tokens), unless the config says otherwise (0 = never).
  if (agentRaw.warnTokensLeft === undefined) agentFields.warnTokensLeft = Math.min(4096, Math.floor(agentFields.responseBudget / 8));
  const rollout: RolloutConfig = { tasksPerStep, samplesPerTask, concurrency, generationConcurrency, retries, allowNonPureSampling, mode, maxStaleness, ...agentFields };
  if (!allowNonPureSampling) {
    if (rollout.topK !== 0) throw invalidArg('config.rollout.topK', `is ${rollout.topK}: top-k sampling makes the sampler's logprobs differ from the policy's`, 'remove it, or set config.rollout.allowNonPureSampling: true');
    if (rollout.topP !== 1) throw invalidArg('config.rollout.topP', `is ${rollout.topP}: top-p sampling makes the sampler's logprobs differ from the policy's`, 'remove it, or set config.rollout.allowNonPureSampling: true');
  }
  // The default is let through: a run's config.json holds every field resolved, and must run again as it is.
  if (mode === 'sync' && rolloutRaw.maxStaleness !== undefined && maxStaleness !== ROLLOUT_MAX_STALENESS_DEFAULT)
    throw invalidArg('config.rollout.maxStaleness', `(${maxStaleness}) only bounds asynchronous rollouts, and config.rollout.mode is "sync"`, 'set config.rollout.mode: "async", or remove maxStaleness');
  // Temperature sampling is pure sampling from softmax(z / T); the loss is given the same T.
  if (rollout.temperature === 0) throw invalidArg('config.rollout.temperature', 'is 0 (greedy): RL needs samples from the policy', 'use 1 (DeepSWE), or another temperature > 0');
  if (rl && tasks?.kind === 'frozenlake' && tasksPerStep > tasks.trainSeeds.length)
    throw invalidArg('config.rollout.tasksPerStep', `(${tasksPerStep}) exceeds the ${tasks.trainSeeds.length} training maps of config.tasks.trainSeeds`, 'lower it or add seeds');

  const algorithm = resolveAlgorithm(section(raw, 'algorithm'), rollout.responseBudget);
  if (algorithm.preset === 'rft') {
    const given = (section(raw, 'optimizer') ?? {}) as Record<string, unknown>;
    for (const [key, value] of Object.entries(RFT_OPTIMIZER_DEFAULTS)) if (given[key] === undefined) Object.assign(optimizer, { [key]: value });
  }
  for (const grading of UNRESOLVED_GRADING) {
    if (algorithm[grading] > 0 && tasks?.kind === 'frozenlake')
      throw invalidArg(`config.algorithm.${grading}`, 'grades unresolved SWE episodes by their patch, and config.tasks.kind is "frozenlake"', `remove ${grading}`);
  }
  if (samplesPerTask < 2 && !algorithm.rejection)
    throw invalidArg('config.rollout.samplesPerTask', `is ${samplesPerTask}: group advantages need at least 2 samples per task (a group of one has advantage 0)`);
  if (algorithm.miniBatches > tasksPerStep * samplesPerTask)
    throw invalidArg('config.algorithm.miniBatches', `(${algorithm.miniBatches}) exceeds the ${tasksPerStep * samplesPerTask} trajectories of a step`);

  const evaluation = parseEval(section(raw, 'eval'), 'config.eval');
  const sampler = parseSampler(section(raw, 'sampler'), 'config.sampler');
  if (sampler.kind === 'remote') {
    if ((sampler.servers.length > 0) === (sampler.launch > 0))
      throw invalidArg('config.sampler', 'with kind "remote" needs exactly one of servers (URLs of running vLLM/SGLang/swerl serve servers) and launch (swerl serve servers to start)', 'e.g. {"kind": "remote", "servers": ["http://127.0.0.1:8000"]}');
    if (sampler.launch > 0 && sampler.protocol !== 'openai') throw invalidArg('config.sampler.protocol', 'must be "openai" with launch (swerl serve speaks both; the launched ones are asked in "openai")');
    sampler.syncDir = path.resolve(sampler.syncDir ?? path.join(run.dir, 'sampler-weights'));
  } else if (sampler.servers.length > 0 || sampler.launch > 0) {
    throw invalidArg('config.sampler.kind', 'is "native" but servers or launch is set', 'set kind to "remote" to sample on servers');
  }
  return { run, tracking, model, optimizer, tasks, algorithm, rollout, eval: evaluation, sampler };
}
