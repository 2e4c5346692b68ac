/**
 * Every bound of the loss is refused when a training config is loaded, before any rollout,
 * and the native core refuses the same values at its entry: the config schema (which composes
 * lib/math/policy-loss.ts's LOSS_FIELDS) and native/src/loss/loss.cc agree on each edge.
 */
import t from 'tap';

import { resolveLossOptions } from '../../../lib/math/policy-loss.js';
import { native, type NativeLossOptions } from '../../../lib/native.js';
import { resolveTrainConfig } from '../../../lib/train/config.js';

function config(section: 'algorithm' | 'rollout', field: string, value: unknown) {
  return {
    run: { dir: 'runs/bounds' },
    model: { preset: 'qwen3-tiny' },
    tasks: { kind: 'frozenlake' },
    algorithm: { preset: 'grpo++', ...(section === 'algorithm' ? { [field]: value } : {}) },
    rollout: { tasksPerStep: 2, samplesPerTask: 2, ...(section === 'rollout' ? { [field]: value } : {}) },
  };
}

const V = 3;
const inputs = {
  targets: Int32Array.from([0, 2]),
  oldLogprobs: Float32Array.from([-1, -1]),
  advantages: Float32Array.from([1, -1]),
  weights: Float32Array.from([0.5, 0.5]),
  refLogprobs: Float32Array.from([-1, -1]),
  logits: Float32Array.from([0.1, 0.2, 0.3, 0.3, 0.2, 0.1]),
  vocabSize: V,
};

/** [config section, config field, value, the native option and its value] */
type Edge = ['algorithm' | 'rollout', string, unknown, Partial<NativeLossOptions>];
const OUTSIDE: Edge[] = [
  ['algorithm', 'clipLow', 1, { clipLow: 1 }],
  ['algorithm', 'clipLow', -0.01, { clipLow: -0.01 }],
  ['algorithm', 'clipHigh', -0.01, { clipHigh: -0.01 }],
  ['algorithm', 'dualClip', 1, { dualClip: 1 }],
  ['algorithm', 'entropyCoef', 100.5, { entropyCoef: 100.5 }],
  ['algorithm', 'entropyCoef', -100.5, { entropyCoef: -100.5 }],
  ['algorithm', 'kl', { coef: -0.01 }, { klCoef: -0.01 }],
  ['algorithm', 'kl', { coef: 100.5 }, { klCoef: 100.5 }],
  ['rollout', 'temperature', 0.009, { temperature: 0.009 }],
  ['rollout', 'temperature', 10.5, { temperature: 10.5 }],
];
const INSIDE: Edge[] = [
  ['algorithm', 'clipLow', 0.99, { clipLow: 0.99 }],
  ['algorithm', 'clipLow', 0, { clipLow: 0 }],
  ['algorithm', 'clipHigh', 0, { clipHigh: 0 }],
  ['algorithm', 'clipHigh', null, { clipHigh: Infinity }],
  ['algorithm', 'dualClip', 1.01, { dualClip: 1.01 }],
  ['algorithm', 'entropyCoef', 100, { entropyCoef: 100 }],
  ['algorithm', 'entropyCoef', -100, { entropyCoef: -100 }],
  ['algorithm', 'kl', { coef: 100 }, { klCoef: 100 }],
  ['rollout', 'temperature', 0.01, { temperature: 0.01 }],
  ['rollout', 'temperature', 10, { temperature: 10 }],
];

t.test('outside a bound: refused by the config at load and by the native core', async (t) => {
  for (const [section, field, value, nativeOption] of OUTSIDE) {
    const what = `${section}.${field} = ${JSON.stringify(value)}`;
    t.throws(() => resolveTrainConfig(config(section, field, value)), { code: 'ERR_SWERL_INVALID_ARG', message: new RegExp(`^config\\.${section}\\.${field}`) }, `${what}: the config names the field`);
    await t.rejects(async () => native().policyLoss(inputs, { ...resolveLossOptions(), ...nativeOption }), { code: 'ERR_SWERL_INVALID_ARG' }, `${what}: the native core refuses it too`);
  }
});

t.test('at the edge inside: taken by both', async (t) => {
  for (const [section, field, value, nativeOption] of INSIDE) {
    const what = `${section}.${field} = ${JSON.stringify(value)}`;
    t.doesNotThrow(() => resolveTrainConfig(config(section, field, value)), `${what}: the config takes it`);
    const result = await native().policyLoss(inputs, { ...resolveLossOptions(), ...nativeOption });
    t.ok(Number.isFinite(result.loss), `${what}: the native core computes a finite loss`);
  }
});
