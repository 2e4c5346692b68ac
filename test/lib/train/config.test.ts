import path from 'node:path';

import t, { type Test } from 'tap';

import { DEFAULT_LIMITS } from '../../../lib/env/sandbox/sandbox.js';
import { SwerlError } from '../../../lib/errors.js';
import { PRESETS } from '../../../lib/train/algorithms.js';
import { resolveTrainConfig, type TrainConfig } from '../../../lib/train/config.js';

const BASE = '/srv/experiments';

/** The smallest valid config, with sections replaced or added. */
function config(sections: Record<string, unknown> = {}): Record<string, unknown> {
  return { run: { dir: 'runs/a' }, model: { preset: 'qwen3-tiny' }, tasks: { kind: 'frozenlake' }, ...sections };
}

function resolve(sections: Record<string, unknown> = {}): TrainConfig {
  return resolveTrainConfig(config(sections), BASE);
}

/** The call throws an ERR_SWERL_INVALID_ARG SwerlError whose message names `field` and matches `fix`. */
function refuses(t: Test, value: unknown, field: string, fix?: RegExp, label = field): void {
  let caught: unknown;
  try {
    resolveTrainConfig(value, BASE);
  } catch (error) {
    caught = error;
  }
  if (!(caught instanceof SwerlError)) {
    t.fail(`${label}: expected a SwerlError, got ${caught === undefined ? 'no error' : String(caught)}`);
    return;
  }
  t.equal(caught.code, 'ERR_SWERL_INVALID_ARG', `${label}: code`);
  t.ok(caught.message.startsWith(`${field} `), `${label}: message names ${field}: ${caught.message}`);
  if (fix) t.match(caught.message, fix, `${label}: says what to do`);
}

t.test('defaults are filled in', async (t) => {
  const c = resolve();
  t.equal(c.run.dir, path.resolve('runs/a'), 'run.dir from the working directory');
  t.equal(c.run.steps, 20);
  t.equal(c.run.seed, 0);
  t.equal(c.run.resume, false);
  t.equal(c.run.checkpointEvery, 5);
  t.equal(c.run.keepCheckpoints, 2);
  t.equal(c.run.progress, 'auto');
  t.same(c.model, { preset: 'qwen3-tiny', device: 'cpu', microBatchTokens: 8192, packSequences: true, maxBatchSize: 64, prefixCacheBytes: 2 ** 30, prefillChunkTokens: 8192, decodeGraphs: true, activationCheckpointing: false, initStd: 0.02 });
  t.same(c.optimizer, { lr: 1e-6, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0.01, warmupSteps: 0, schedule: 'constant', maxGradNorm: 1 });
  t.same(c.tasks, { kind: 'frozenlake', size: 4, holeDensity: 0.2, slippery: false, maxSteps: 10, prompt: 'full', trainSeeds: [0, 1, 2, 3], formatWarmupSteps: 0, formatWarmupLr: 1e-3 });
  t.same(c.rollout, {
    tasksPerStep: 4,
    samplesPerTask: 8,
    concurrency: 8,
    generationConcurrency: 0,
    retries: 2,
    allowNonPureSampling: false,
    mode: 'sync',
    maxStaleness: 1,
    maxTurns: 50,
    promptBudget: 4096,
    responseBudget: 32768,
    maxTokensPerTurn: 4096,
    temperature: 1,
    topK: 0,
    topP: 1,
    trajectoryTimeoutMs: 5_400_000,
    stepTimeoutMs: 90_000, // the one step timeout (the tool call), handed to each env.step
    warnTokensLeft: 4096, // an eighth of the response budget, at most 4096
    enableThinking: false,
  });
  t.same(c.eval, { every: 0, atStart: true, samples: 1, temperature: 0 });
  // grpo++: the preset's fields, L = the response budget.
  t.same(c.algorithm, { preset: 'grpo++', ...PRESETS['grpo++'], normLength: 32768 });
  t.equal(c.algorithm.estimator, 'rloo');
  t.equal(c.algorithm.truncation, 'mask');
  t.equal(c.algorithm.clipHigh, 0.28);
});

t.test('algorithm presets and overrides', async (t) => {
  const dapo = resolve({ algorithm: { preset: 'dapo' }, rollout: { responseBudget: 20480 } });
  t.same(dapo.algorithm.overlong, { maxLength: 20480, bufferLength: 4096 }, 'DAPO: a buffer of a fifth of the budget');
  t.equal(dapo.algorithm.aggregation, 'token-mean');
  t.equal(dapo.algorithm.groupFilter, 'informative');
  t.equal(dapo.algorithm.normLength, 20480);

  const custom = resolve({ algorithm: { preset: 'dapo', overlong: { maxLength: 100, bufferLength: 10 }, clipHigh: null, normLength: 512, kl: { coef: 0.1 } } });
  t.same(custom.algorithm.overlong, { maxLength: 100, bufferLength: 10 });
  t.equal(custom.algorithm.clipHigh, null);
  t.equal(custom.algorithm.normLength, 512);
  t.same(custom.algorithm.kl, { coef: 0.1, kind: 'k3' });

  const nebius = resolve({ algorithm: { preset: 'nebius' } });
  t.equal(nebius.algorithm.truncation, 'penalize');
  t.equal(nebius.algorithm.groupFilter, 'nonzero-advantage');
  t.equal(nebius.algorithm.overlong, null);
  // The preset objects are not shared with (or changed by) a resolved config.
  nebius.algorithm.turnPenalty.threshold = 99;
  t.equal(PRESETS.nebius.turnPenalty.threshold, 10);
});

t.test('relative input paths are resolved against baseDir, outputs against the working directory', async (t) => {
  const c = resolveTrainConfig(
    config({ model: { path: '../models/qwen3' }, tasks: { kind: 'swe', path: 'tasks/swe-mini' }, rollout: { tasksPerStep: 2 } }),
    BASE,
  );
  t.equal(c.run.dir, path.resolve('runs/a'), 'run.dir: where the command runs, not where the config lies');
  t.equal(c.model.path, '/srv/models/qwen3');
  t.equal(c.tasks.kind, 'swe');
  if (c.tasks.kind === 'swe') {
    t.equal(c.tasks.path, '/srv/experiments/tasks/swe-mini');
    t.equal(c.tasks.sandbox, 'local');
    t.equal(c.tasks.env.maxSteps, 50, 'the env section is defaulted too');
  }
  t.throws(
    () => resolveTrainConfig(config({ tasks: { kind: 'swe', path: 'tasks/swe-mini', env: { stepTimeoutMs: 20_000 } } }), BASE),
    { code: 'ERR_SWERL_INVALID_ARG', message: /^config\.tasks\.env\.stepTimeoutMs is no longer an option here; the step timeout is the agent loop's: set rollout\.stepTimeoutMs/ },
    'the env no longer has a step timeout of its own: an old config is told where it went',
  );
  t.throws(
    () => resolveTrainConfig(config({ tasks: { kind: 'swe', path: 'tasks/swe-mini', env: { goal: 'reproduce' } } }), BASE),
    { code: 'ERR_SWERL_INVALID_ARG', message: /^config\.tasks\.env\.goal is "reproduce"; a training run's episodes are graded by the tests/ },
    'test-writing episodes are not graded: refused for training at load',
  );
  const swe = (sandbox: string, sandboxOptions: object) => resolveTrainConfig(config({ tasks: { kind: 'swe', path: 'tasks/swe-mini', sandbox, sandboxOptions } }), BASE);
  t.throws(() => swe('local', { hostBinds: false }), { message: /^config\.tasks\.sandboxOptions\.hostBinds is not a known option; known: root, disk, label, limits, readOnlyBinds$/ }, 'a docker-only option given to the local backend: refused at load');
  t.throws(() => swe('local', { disk: 'ramdisk' }), { message: /^config\.tasks\.sandboxOptions\.disk must be one of/ }, 'a disk kind the local backend has not: refused at load');
  const local = swe('local', { disk: 'tmpfs' });
  if (local.tasks.kind === 'swe') t.equal((local.tasks.sandboxOptions as { disk?: string }).disk, 'tmpfs', 'the disk kind reaches the backend\'s options');
  t.throws(() => swe('docker', { cpus: 0 }), { message: /^config\.tasks\.sandboxOptions\.cpus must be > 0/ }, 'docker options are checked too');
  t.throws(() => swe('local', { limits: { memoryBytes: 1024 } }), { message: /^config\.tasks\.sandboxOptions\.limits\.memoryBytes must be >= 67108864/ });
  const typed = swe('docker', { cpus: 2 });
  if (typed.tasks.kind === 'swe') t.same(typed.tasks.sandboxOptions, { cpus: 2, label: 'swerl', limits: DEFAULT_LIMITS, readOnlyBinds: [], hostBinds: true, baseImage: 'localhost/swerl-base:1', healthCheckMs: 10000 }, 'the backend\'s options, defaulted');
  const absolute = resolveTrainConfig(config({ run: { dir: '/tmp/run' } }), BASE);
  t.equal(absolute.run.dir, '/tmp/run');
  t.equal(resolveTrainConfig(config(), '/other').run.dir, path.resolve('runs/a'), 'baseDir does not move the outputs');
});

t.test('rollout.mode: async with its staleness bound; maxStaleness alone is refused', async (t) => {
  const async = resolve({ rollout: { mode: 'async', maxStaleness: 2 } });
  t.equal(async.rollout.mode, 'async');
  t.equal(async.rollout.maxStaleness, 2);
  t.equal(resolve({ rollout: { mode: 'async' } }).rollout.maxStaleness, 1, 'one step behind by default');
  refuses(t, config({ rollout: { maxStaleness: 2 } }), 'config.rollout.maxStaleness', /mode is "sync".*set config\.rollout\.mode: "async"/);
  refuses(t, config({ rollout: { mode: 'overlapped' } }), 'config.rollout.mode', /sync|async/);
  refuses(t, config({ rollout: { mode: 'async', maxStaleness: -1 } }), 'config.rollout.maxStaleness', />= 0/);
});

t.test("a run's config.json (every field resolved) resolves again to itself", async (t) => {
  // The trainer writes the resolved config into the run directory: `swerl train <run>/config.json`
  // must run that run again, not be refused for the defaults it filled in (a sync run's
  // maxStaleness was).
  const variants: Record<string, Record<string, unknown>> = {
    'the defaults': {},
    'rejection fine-tuning': { algorithm: { preset: 'rft' } },
    'grpo++ with mini-batches': { algorithm: { preset: 'grpo++', miniBatches: 4 }, optimizer: { lr: 3e-5 } },
    'async rollouts': { rollout: { mode: 'async', maxStaleness: 2 } },
    'top-p sampling, allowed': { rollout: { topP: 0.9, allowNonPureSampling: true } },
  };
  for (const [name, sections] of Object.entries(variants)) {
    const resolved = resolve(sections);
    const saved = JSON.parse(JSON.stringify(resolved));
    t.same(resolveTrainConfig(saved, BASE), saved, name);
  }
  t.equal(resolve({ rollout: { maxStaleness: 1 } }).rollout.maxStaleness, 1, 'a sync run given the default staleness bound runs');
});

t.test('sampling: temperature 0, topK and topP are refused unless allowed', async (t) => {
  refuses(t, config({ rollout: { temperature: 0 } }), 'config.rollout.temperature', /temperature > 0/);
  refuses(t, config({ rollout: { topK: 20 } }), 'config.rollout.topK', /allowNonPureSampling: true/);
  refuses(t, config({ rollout: { topP: 0.95 } }), 'config.rollout.topP', /allowNonPureSampling: true/);
  const allowed = resolve({ rollout: { topK: 20, topP: 0.95, allowNonPureSampling: true } });
  t.equal(allowed.rollout.topK, 20);
  t.equal(allowed.rollout.topP, 0.95);
  t.equal(allowed.rollout.allowNonPureSampling, true);
  t.equal(resolve({ rollout: { temperature: 0.6 } }).rollout.temperature, 0.6);
});

t.test('errors name the field', async (t) => {
  refuses(t, config({ extra: {} }), 'config.extra', /known: run, tracking, model, optimizer, tasks, algorithm, rollout, eval/, 'unknown section');
  refuses(t, config({ run: { dir: 'x', stepz: 3 } }), 'config.run.stepz', /known/, 'unknown run field');
  refuses(t, config({ optimizer: { learningRate: 1 } }), 'config.optimizer.learningRate', /known/, 'unknown optimizer field');
  refuses(t, config({ rollout: { sampelsPerTask: 4 } }), 'config.rollout.sampelsPerTask', /known/, 'unknown rollout field');
  refuses(t, config({ algorithm: { clip: 0.2 } }), 'config.algorithm.clip', /known/, 'unknown algorithm field');
  refuses(t, config({ tasks: { kind: 'frozenlake', sise: 4 } }), 'config.tasks.sise', /known/, 'unknown tasks field');
  refuses(t, config({ eval: { every: 1, greedy: true } }), 'config.eval.greedy', /known/, 'unknown eval field');
  refuses(t, config({ rollout: [] }), 'config.rollout', /must be an object/, 'a section that is not an object');
  refuses(t, 'nope', 'config', /must be an object/, 'not an object');

  const { tasks: _tasks, ...noTasks } = config();
  refuses(t, noTasks, 'config.tasks', /is required.*frozenlake/, 'missing tasks');
  refuses(t, config({ tasks: { kind: 'atari' } }), 'config.tasks.kind', /"frozenlake" or "swe"/, 'bad tasks.kind');
  refuses(t, config({ tasks: {} }), 'config.tasks.kind', /"frozenlake" or "swe"/, 'tasks without kind');
  refuses(t, config({ tasks: { kind: 'swe' } }), 'config.tasks.path', /required/, 'swe without path');
  refuses(t, config({ algorithm: { partialCredit: 0.5 } }), 'config.algorithm.partialCredit', /"frozenlake".*remove partialCredit/, 'partial credit without patches');
  refuses(t, config({ algorithm: { preset: 'rft', partialCredit: 0.5 } }), 'config.algorithm.partialCredit', /rejection fine-tuning .* resolved ones only/, 'partial credit with rejection fine-tuning');
  refuses(t, config({ algorithm: { negativeScale: 1.5 } }), 'config.algorithm.negativeScale', /must be/, 'negatives scaled up');
  refuses(t, config({ algorithm: { emptyPatchPenalty: 0.5 } }), 'config.algorithm.emptyPatchPenalty', /"frozenlake".*remove emptyPatchPenalty/, 'an empty-patch penalty without patches');
  refuses(t, config({ algorithm: { preset: 'rft', emptyPatchPenalty: 0.5 } }), 'config.algorithm.emptyPatchPenalty', /rejection fine-tuning .* resolved ones only/, 'an empty-patch penalty with rejection fine-tuning');
  refuses(t, config({ algorithm: { emptyPatchPenalty: 1.5 } }), 'config.algorithm.emptyPatchPenalty', /must be/, 'an empty-patch penalty past 1');
  refuses(t, config({ algorithm: { partialCredit: 1 } }), 'config.algorithm.partialCredit', /less than 1|< 1|exclusiveMaximum|must be/, 'partial credit of a resolved episode');
  refuses(t, config({ algorithm: { estimator: 'maxrl', truncation: 'penalize' } }), 'config.algorithm.estimator', /'maxrl'.*mean reward.*truncation makes rewards negative.*remove truncation, or use the rloo estimator/, 'maxrl with a turn penalty');
  refuses(t, config({ algorithm: { preset: 'dapo', estimator: 'maxrl' } }), 'config.algorithm.estimator', /overlong makes rewards negative/, "maxrl with DAPO's overlong penalty");
  refuses(t, config({ algorithm: { estimator: 'maxrl', emptyPatchPenalty: 0.5 } }), 'config.algorithm.estimator', /emptyPatchPenalty makes rewards negative/, 'maxrl with an empty-patch penalty');
  t.equal(resolve({ algorithm: { estimator: 'maxrl' } }).algorithm.estimator, 'maxrl', 'maxrl with grpo++ otherwise');

  refuses(t, config({ model: { preset: 'qwen3-tiny', path: 'models/q' } }), 'config.model', /exactly one of preset .* and path/, 'model with both');
  refuses(t, config({ model: {} }), 'config.model', /exactly one of preset .* and path/, 'model with neither');
  refuses(t, config({ model: { preset: 'qwen3-huge' } }), 'config.model.preset', /qwen3-tiny/, 'unknown preset');
  const { run: _run, ...noRun } = config();
  refuses(t, noRun, 'config.run.dir', /required/, 'missing run.dir');

  refuses(t, config({ tasks: { kind: 'frozenlake', trainSeeds: [1, 2] }, rollout: { tasksPerStep: 3 } }), 'config.rollout.tasksPerStep', /lower it or add seeds/, 'tasksPerStep > trainSeeds');
  t.equal(resolve({ tasks: { kind: 'frozenlake', trainSeeds: [1, 2] }, rollout: { tasksPerStep: 2 } }).rollout.tasksPerStep, 2);

  for (const preset of ['grpo', 'drgrpo', 'dapo', 'nebius']) {
    refuses(t, config({ algorithm: { preset }, rollout: { samplesPerTask: 1 } }), 'config.rollout.samplesPerTask', /at least 2/, `samplesPerTask 1 with ${preset}`);
  }
  refuses(t, config({ algorithm: { estimator: 'grpo' }, rollout: { samplesPerTask: 1 } }), 'config.rollout.samplesPerTask', /at least 2/, 'samplesPerTask 1 with estimator grpo');

  refuses(t, config({ algorithm: { miniBatches: 9 }, rollout: { tasksPerStep: 2, samplesPerTask: 4 } }), 'config.algorithm.miniBatches', /exceeds the 8 trajectories/, 'miniBatches too large');
  t.equal(resolve({ algorithm: { miniBatches: 8 }, rollout: { tasksPerStep: 2, samplesPerTask: 4 } }).algorithm.miniBatches, 8);

  refuses(t, config({ algorithm: { overlong: { maxLength: 100, bufferLength: 101 } } }), 'config.algorithm.overlong.bufferLength', /exceeds maxLength \(100\)/, 'overlong buffer > max');
  t.same(resolve({ algorithm: { overlong: { maxLength: 100, bufferLength: 100 } } }).algorithm.overlong, { maxLength: 100, bufferLength: 100 });

  refuses(t, config({ rollout: { samplesPerTask: 0 } }), 'config.rollout.samplesPerTask', undefined, 'samplesPerTask 0');
  refuses(t, config({ algorithm: { preset: 'ppo' } }), 'config.algorithm.preset', /"grpo\+\+"/, 'unknown algorithm preset');
  refuses(t, config({ model: { preset: 'qwen3-tiny', device: 'tpu' } }), 'config.model.device', undefined, 'bad device');
});

t.test('the input is not modified', async (t) => {
  const raw = config({ rollout: { samplesPerTask: 4 } });
  const copy = structuredClone(raw);
  resolveTrainConfig(raw, BASE);
  t.same(raw, copy);
});

/** What resolveTrainConfig throws for `value`, or undefined when it accepts it. */
function thrown(value: unknown): Error | undefined {
  try {
    resolveTrainConfig(value, BASE);
    return undefined;
  } catch (error) {
    return error as Error;
  }
}

t.test('refused when the config is read, not at the first step', async (t) => {
  const rloo = thrown(config({ rollout: { samplesPerTask: 1 } }));
  t.match(rloo?.message, /^config\.rollout\.samplesPerTask .*at least 2/, 'samplesPerTask 1 with rloo (grpo++) is refused: a group of one has advantage 0');

  const warning = thrown(config({ rollout: { budgetWarning: 'hurry' } }));
  const kept = warning === undefined && (resolve({ rollout: { budgetWarning: 'hurry' } }).rollout as unknown as Record<string, unknown>).budgetWarning === 'hurry';
  t.ok(kept || /config\.rollout\.budgetWarning/.test(warning?.message ?? ''), 'config.rollout.budgetWarning is used or refused, not silently dropped');

  const penalty = thrown(config({ algorithm: { preset: 'nebius', turnPenalty: { threshold: 10, maxTurns: 10 } } }));
  t.match(penalty?.message, /^config\.algorithm\.turnPenalty/, 'a turn penalty with threshold >= maxTurns is refused when the config is read');
});

t.test('the budget warning: an eighth of the response budget by default, 0 turns it off', async (t) => {
  t.equal(resolve({ rollout: { responseBudget: 1024 } }).rollout.warnTokensLeft, 128);
  t.equal(resolve({ rollout: { responseBudget: 1024, warnTokensLeft: 0 } }).rollout.warnTokensLeft, 0);
  t.equal(resolve({ rollout: { responseBudget: 1024, warnTokensLeft: 300 } }).rollout.warnTokensLeft, 300);
});
