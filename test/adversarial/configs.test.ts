/**
 * Configs that used to pass and then fail after a step of rollouts, or exit 0 having trained
 * nothing, are refused when loaded; and a sweep of extreme values over every numeric field of
 * the training config is either taken or refused by name, never a crash.
 */
import t from 'tap';

import { resolveTrainConfig } from '../../lib/train/config.js';
import { AdversarialTally } from '../support/adversarial.js';

const BOUND_MS = 200;

function base(): Record<string, any> {
  return {
    run: { dir: 'runs/adversarial', steps: 2 },
    model: { preset: 'qwen3-tiny', threads: 1, initStd: 0.02 },
    optimizer: { lr: 1e-3, eps: 1e-8, weightDecay: 0, warmupSteps: 0, maxGradNorm: 1 },
    tasks: { kind: 'frozenlake', size: 3, holeDensity: 0.2, maxSteps: 6, trainSeeds: [0, 1, 2, 3], formatWarmupSteps: 0, formatWarmupLr: 0.01 },
    algorithm: { preset: 'grpo++', entropyCoef: 0, kl: { coef: 0.001 }, clipLow: 0.2, clipHigh: 0.28, miniBatches: 1, epochs: 1, resampleRounds: 0 },
    rollout: { tasksPerStep: 2, samplesPerTask: 4, concurrency: 8, retries: 0, maxTurns: 6, promptBudget: 512, responseBudget: 1024, maxTokensPerTurn: 8, temperature: 1, stepTimeoutMs: 1000, trajectoryTimeoutMs: 10_000 },
    eval: { every: 1, samples: 1, temperature: 0 },
  };
}

function withField(path: string, value: unknown): Record<string, any> {
  const config = base();
  const keys = path.split('.');
  let at = config;
  for (const key of keys.slice(0, -1)) at = at[key];
  at[keys.at(-1)!] = value;
  return config;
}

/** The configs of the issue that passed and then failed or did nothing. */
const LATE_FAILURES: Array<[string, unknown, RegExp]> = [
  ['rollout.temperature', 1e-300, /config\.rollout\.temperature must be 0 or at least 0\.01/],
  ['algorithm.entropyCoef', 1e308, /config\.algorithm\.entropyCoef must be <= 100/],
  ['optimizer.lr', 1e30, /config\.optimizer\.lr must be <= 1/],
  ['model.initStd', 1e10, /config\.model\.initStd must be <= 0\.2/],
  ['model.threads', 256, /config\.model\.threads must be <= \d+/],
  ['algorithm.kl', { coef: -1 }, /config\.algorithm\.kl\.coef must be >= 0/],
  ['run.steps', 1e300, /config\.run\.steps must be <= 10000000/],
];

const NUMERIC_FIELDS = [
  'run.steps', 'run.seed', 'run.checkpointEvery', 'run.keepCheckpoints',
  'model.threads', 'model.initStd', 'model.microBatchTokens', 'model.maxBatchSize', 'model.prefixCacheBytes', 'model.prefillChunkTokens',
  'optimizer.lr', 'optimizer.eps', 'optimizer.weightDecay', 'optimizer.warmupSteps', 'optimizer.maxGradNorm',
  'tasks.size', 'tasks.holeDensity', 'tasks.maxSteps', 'tasks.formatWarmupSteps', 'tasks.formatWarmupLr',
  'algorithm.entropyCoef', 'algorithm.clipLow', 'algorithm.clipHigh', 'algorithm.miniBatches', 'algorithm.epochs', 'algorithm.resampleRounds',
  'rollout.tasksPerStep', 'rollout.samplesPerTask', 'rollout.concurrency', 'rollout.retries', 'rollout.maxTurns', 'rollout.promptBudget',
  'rollout.responseBudget', 'rollout.maxTokensPerTurn', 'rollout.temperature', 'rollout.stepTimeoutMs', 'rollout.trajectoryTimeoutMs',
  'eval.every', 'eval.samples', 'eval.temperature',
];
const EXTREMES: unknown[] = [NaN, Infinity, -Infinity, 1e308, -1e308, 1e300, 2 ** 53, -0, -1, 0, 1e-300, 0.5, '1', true, null, [], {}];

t.test('configs that cannot train are refused at load', async (t) => {
  const tally = new AdversarialTally('configs', { clock: 'cpu' });
  for (const [field, value, message] of LATE_FAILURES) {
    const result = await tally.case(`${field} = ${JSON.stringify(value)}`, () => void resolveTrainConfig(withField(field, value)), BOUND_MS);
    t.equal(result.outcome, 'clean-error', `${field} = ${JSON.stringify(value)} is refused`);
    t.match(result.detail, message);
  }
  for (const field of NUMERIC_FIELDS) {
    for (const value of EXTREMES) {
      await tally.case(`${field} = ${String(value)}`, () => void resolveTrainConfig(withField(field, value)), BOUND_MS);
    }
  }
  const deep = (n: number): unknown => {
    let value: unknown = 1;
    for (let i = 0; i < n; i++) value = { a: value };
    return value;
  };
  for (const field of ['algorithm', 'tasks.trainSeeds', 'rollout.budgetWarning', 'model']) {
    await tally.case(`${field} nested 100k deep`, () => void resolveTrainConfig(withField(field, deep(100_000))), BOUND_MS);
  }
  const taken = tally.results.filter((r) => r.outcome === 'accepted').length;
  t.ok(taken > 0, `${taken} in-range values were taken`);
  tally.report(t);
});
