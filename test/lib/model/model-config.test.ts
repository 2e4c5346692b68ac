// resolveModelConfig's rotary settings: transformers < 5 writes rope_theta and rope_scaling,
// transformers >= 5 one rope_parameters object; both must give the native core the same fields,
// and a config that says two different things is refused by name.
import t from 'tap';

import { presetConfig, resolveModelConfig } from '../../../lib/model/model-config.js';

const base = (): Record<string, unknown> => {
  const { rope_theta: _theta, ...rest } = presetConfig('qwen3-tiny', 265);
  return { ...rest, max_position_embeddings: 4096 };
};
const yarn = { rope_type: 'yarn', factor: 4, original_max_position_embeddings: 1024 };

t.test('rope_parameters (transformers >= 5) gives what rope_theta and rope_scaling give', async (t) => {
  const legacy = resolveModelConfig({ ...base(), rope_theta: 1e6 }).native;
  const v5 = resolveModelConfig({ ...base(), rope_parameters: { rope_type: 'default', rope_theta: 1e6 } }).native;
  t.same(v5, legacy, 'plain rotary');
  t.equal(v5.ropeTheta, 1e6, 'theta read from rope_parameters, not the 10000 default');
  t.same(v5.ropeScaling, { kind: 'none' });

  const legacyYarn = resolveModelConfig({ ...base(), rope_theta: 5e5, rope_scaling: yarn }).native;
  const v5Yarn = resolveModelConfig({ ...base(), rope_parameters: { ...yarn, rope_theta: 5e5 } }).native;
  t.same(v5Yarn, legacyYarn, 'YaRN');
  t.equal(v5Yarn.ropeScaling?.kind, 'yarn');

  const llama3 = { rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 1024 };
  const llama = { ...base(), model_type: 'llama' };
  t.same(
    resolveModelConfig({ ...llama, rope_parameters: { ...llama3, rope_theta: 5e5 } }).native,
    resolveModelConfig({ ...llama, rope_theta: 5e5, rope_scaling: llama3 }).native,
    'llama3',
  );
  t.equal(resolveModelConfig({ ...base(), rope_parameters: { rope_theta: 2e4 } }).native.ropeTheta, 2e4, 'no rope_type: default rotary');
  t.equal(resolveModelConfig(base()).native.ropeTheta, 10000, 'neither: transformers\' default theta');
});

t.test('a config that says two things, or what the model cannot compute, is refused by name', async (t) => {
  t.throws(() => resolveModelConfig({ ...base(), rope_theta: 1e6, rope_parameters: { rope_type: 'default', rope_theta: 1e4 } }), {
    code: 'ERR_SWERL_INVALID_ARG',
    message: /config\.rope_parameters\.rope_theta \(10000\) disagrees with rope_theta \(1000000\)/,
  });
  t.throws(() => resolveModelConfig({ ...base(), rope_scaling: yarn, rope_parameters: { ...yarn, rope_theta: 1e6 } }), {
    message: /config\.rope_scaling is given beside a scaled rope_parameters/,
  });
  t.throws(() => resolveModelConfig({ ...base(), rope_parameters: { rope_type: 'default', rope_theta: 1e6, partial_rotary_factor: 0.5 } }), {
    message: /config\.rope_parameters\.partial_rotary_factor = 0\.5 is not supported/,
  });
  t.throws(() => resolveModelConfig({ ...base(), rope_parameters: { rope_type: 'dynamic', factor: 2, rope_theta: 1e6 } }), {
    message: /config\.rope_parameters\.rope_type = "dynamic" is not supported/,
  });
  t.throws(() => resolveModelConfig({ ...base(), rope_parameters: { rope_type: 'default', rope_theta: -1 } }), {
    message: /config\.rope_parameters\.rope_theta must be a finite number > 0/,
  });
  t.throws(() => resolveModelConfig({ ...base(), rope_parameters: [1] }), { message: /config\.rope_parameters must be an object or null/ });
});
