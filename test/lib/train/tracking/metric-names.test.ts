import t from 'tap';

import type { Trajectory } from '../../../../lib/agent/trajectory.js';
import type { TrainStepResult } from '../../../../lib/model/native-policy.js';
import type { ShapedBatch } from '../../../../lib/train/batch.js';
import { stepMetrics } from '../../../../lib/train/step-metrics.js';
import { ALIASES, flattenMetrics, scalarTags } from '../../../../lib/train/tracking/metric-names.js';

const r = () => Math.random() * 10;

/** A row of swerl's shape with fresh values, and the tags it must give. */
function randomRow() {
  const v = { mean: r(), std: r(), shapedMean: r(), entropy: r(), approxKl: r(), low: r() / 10, high: r() / 10, gradNorm: r(), lr: r() / 1e4, value: r() };
  const v2 = { responseMean: r(), responseMax: r(), promptMean: r(), turnsMean: r(), turnsMax: r(), step: r(), submitted: r(), timeout: r(), success: r() };
  const row = {
    step: 7,
    reward: { mean: v.mean, std: v.std, shapedMean: v.shapedMean },
    loss: { value: v.value, entropy: v.entropy, approxKl: v.approxKl, clipFracLow: v.low, clipFracHigh: v.high, gradNorm: v.gradNorm, lr: v.lr, ratioMax: NaN },
    length: { responseMean: v2.responseMean, responseMax: v2.responseMax, promptMean: v2.promptMean },
    turns: { mean: v2.turnsMean, max: v2.turnsMax },
    time: { stepSeconds: v2.step, tokensPerSecondTrain: Infinity },
    terminations: { submitted: v2.submitted, timeout: v2.timeout },
    eval: { success: v2.success, note: 'text' },
    warning: 'not learning',
    warnings: ['a', 'b'],
    flags: [1, 2, 3],
    done: true,
    missing: null,
  };
  const swerl = new Map<string, number>([
    ['reward/mean', v.mean], ['reward/std', v.std], ['reward/shapedMean', v.shapedMean],
    ['loss/value', v.value], ['loss/entropy', v.entropy], ['loss/approxKl', v.approxKl], ['loss/clipFracLow', v.low], ['loss/clipFracHigh', v.high], ['loss/gradNorm', v.gradNorm], ['loss/lr', v.lr],
    ['length/responseMean', v2.responseMean], ['length/responseMax', v2.responseMax], ['length/promptMean', v2.promptMean],
    ['turns/mean', v2.turnsMean], ['turns/max', v2.turnsMax], ['time/stepSeconds', v2.step],
    ['terminations/submitted', v2.submitted], ['terminations/timeout', v2.timeout], ['eval/success', v2.success],
  ]);
  const verl = new Map<string, number>([
    ['critic/score/mean', v.mean], ['critic/rewards/mean', v.shapedMean],
    ['actor/pg_loss', v.value], ['actor/entropy', v.entropy], ['actor/ppo_kl', v.approxKl], ['actor/pg_clipfrac', v.low + v.high], ['actor/grad_norm', v.gradNorm], ['actor/lr', v.lr],
    ['response_length/mean', v2.responseMean], ['response_length/max', v2.responseMax], ['prompt_length/mean', v2.promptMean],
    ['num_turns/mean', v2.turnsMean], ['num_turns/max', v2.turnsMax], ['timing_s/step', v2.step],
  ]);
  const trl = new Map<string, number>([
    ['reward', v.mean], ['reward_std', v.std], ['loss', v.value], ['entropy', v.entropy],
    ['clip_ratio/low_mean', v.low], ['clip_ratio/high_mean', v.high], ['clip_ratio/region_mean', v.low + v.high],
    ['grad_norm', v.gradNorm], ['learning_rate', v.lr], ['completions/mean_length', v2.responseMean], ['completions/max_length', v2.responseMax],
  ]);
  return { row, swerl, verl, trl };
}

const sorted = (tags: Map<string, number>) => [...tags].sort(([a], [b]) => (a < b ? -1 : 1));

t.test('flattening keeps every finite number by its path and nothing else', async (t) => {
  const { row, swerl } = randomRow();
  t.same(sorted(flattenMetrics(row)), sorted(swerl), 'no step, NaN, Infinity, string, array, boolean or null');
});

t.test('the verl and TRL names carry the same values beside swerl\'s own', async (t) => {
  const { row, swerl, verl, trl } = randomRow();
  const clipFrac = new Map([['loss/clipFrac', swerl.get('loss/clipFracLow')! + swerl.get('loss/clipFracHigh')!]]);
  t.same(sorted(scalarTags(row, [])), sorted(new Map([...swerl, ...clipFrac])), 'no project: swerl\'s tags (and the clipped fraction)');
  t.same(sorted(scalarTags(row, ['verl'])), sorted(new Map([...swerl, ...clipFrac, ...verl])), 'verl');
  t.same(sorted(scalarTags(row, ['trl'])), sorted(new Map([...swerl, ...clipFrac, ...trl])), 'TRL');
  t.same(sorted(scalarTags(row, ['verl', 'trl'])), sorted(new Map([...swerl, ...clipFrac, ...verl, ...trl])), 'both');
  t.notOk(scalarTags(row, ['trl']).has('kl'), 'TRL\'s kl (to the reference policy) is not approxKl');
  t.notOk(scalarTags(row, ['verl']).has('actor/pg_clipfrac_lower'), 'nor verl\'s dual-clip fraction clipFracLow');
});

t.test('an alias never hides a tag of swerl\'s own, and a partial row gives the aliases it can', async (t) => {
  const tags = scalarTags({ reward_std: 5, reward: { std: 1 }, loss: { clipFracLow: 0.25 } }, ['trl']);
  t.equal(tags.get('reward_std'), 5, 'swerl\'s reward_std stays');
  t.equal(tags.get('clip_ratio/low_mean'), 0.25);
  t.notOk(tags.has('loss/clipFrac'), 'no sum without both halves');
  t.notOk(tags.has('clip_ratio/region_mean'));
  t.same(sorted(scalarTags({ step: 0, eval: { success: 0.5 } }, ['verl', 'trl'])), [['eval/success', 0.5]], 'the step-0 eval row');
});

function trajectory(i: number): Trajectory {
  return {
    taskId: `task-${i}`, group: i >> 1, sample: i & 1,
    tokens: Int32Array.from([1, 2, 3, 4]), mask: Uint8Array.from([0, 1, 1, 1]), logprobs: Float32Array.from([0, -1, -1, -1]),
    promptTokens: 1 + i, responseTokens: 3 + i, turns: [], termination: i % 2 ? 'submitted' : 'max_steps',
    reward: i % 2, rewardReason: 'r', attempts: 1, weightVersion: 0,
    timings: { totalMs: 1, generateMs: 1, envMs: 1, rewardMs: 0 },
  };
}

function result(): TrainStepResult {
  return {
    loss: r(), gradNorm: r(), entropy: r(), approxKl: r(), clipFracLow: r() / 10, clipFracHigh: r() / 10, ratioMean: 1, ratioMax: 2,
    lossTokens: 10, tokens: 16, tokensPerSecond: 100, microBatches: 1, seconds: 1, lr: 1e-5, step: 1,
  };
}

t.test('every swerl tag of the alias table is one a real step reports', async (t) => {
  const trajectories = [0, 1, 2, 3].map(trajectory);
  const shaped: ShapedBatch = { rewards: Float32Array.from([0, 1, 0, 1]), advantages: new Float32Array(4), filtered: new Uint8Array(4), kept: Uint8Array.from([1, 1, 1, 1]), masks: trajectories.map((x) => x.mask) };
  const row = stepMetrics(3, trajectories, shaped, [result(), result()], { rounds: 1, episodes: 4 }, { rolloutSeconds: 2, trainSeconds: 1 });
  // The trainer adds the step's wall time once the step is over (lib/train/trainer.ts).
  (row.time as Record<string, number>).stepSeconds = 3;
  const tags = scalarTags(row, ['verl', 'trl']);
  for (const tag of Object.keys(ALIASES)) t.ok(tags.has(tag), `${tag} is in stepMetrics' row`);
});
