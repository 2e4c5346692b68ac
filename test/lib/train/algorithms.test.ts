import t from 'tap';

import { ALGORITHM_PRESETS, PRESETS } from '../../../lib/train/algorithms.js';

/** The fields that tell the presets apart, as their papers (and lib/train/algorithms.ts's header) give them. */
const pick = (preset: keyof typeof PRESETS) => {
  const p = PRESETS[preset];
  return {
    estimator: p.estimator,
    truncation: p.truncation,
    groupFilter: p.groupFilter,
    aggregation: p.aggregation,
    clip: [p.clipLow, p.clipHigh],
    overlong: p.overlong !== null,
    kl: p.kl,
    entropyCoef: p.entropyCoef,
  };
};

t.test('every preset is listed and complete', async (t) => {
  t.same([...ALGORITHM_PRESETS].sort(), Object.keys(PRESETS).sort());
  const fields = Object.keys(PRESETS['grpo++']).sort();
  for (const name of ALGORITHM_PRESETS) t.same(Object.keys(PRESETS[name]).sort(), fields, `${name} has every field`);
});

t.test('the presets say what their papers say', async (t) => {
  t.same(pick('grpo++'), { estimator: 'rloo', truncation: 'mask', groupFilter: 'none', aggregation: 'seq-mean-token-sum-norm', clip: [0.2, 0.28], overlong: false, kl: null, entropyCoef: 0 });
  t.same(pick('grpo'), { estimator: 'grpo', truncation: 'none', groupFilter: 'none', aggregation: 'seq-mean-token-mean', clip: [0.2, 0.2], overlong: false, kl: null, entropyCoef: 0 });
  t.same(pick('drgrpo'), { estimator: 'drgrpo', truncation: 'none', groupFilter: 'none', aggregation: 'seq-mean-token-sum-norm', clip: [0.2, 0.2], overlong: false, kl: null, entropyCoef: 0 });
  t.same(pick('dapo'), { estimator: 'grpo', truncation: 'none', groupFilter: 'informative', aggregation: 'token-mean', clip: [0.2, 0.28], overlong: true, kl: null, entropyCoef: 0 });
  t.same(pick('nebius'), { estimator: 'grpo', truncation: 'penalize', groupFilter: 'nonzero-advantage', aggregation: 'token-mean', clip: [0.2, 0.3], overlong: false, kl: null, entropyCoef: 0 });
  t.equal(PRESETS.dapo.resampleRounds, 3);
  t.same(PRESETS.nebius.turnPenalty, { threshold: 10, maxTurns: 40 });
  for (const name of ALGORITHM_PRESETS) {
    t.equal(PRESETS[name].normLength, null, `${name}: L defaults to the response budget`);
    t.equal(PRESETS[name].miniBatches, 1);
    t.equal(PRESETS[name].epochs, 1);
    t.equal(PRESETS[name].dualClip, null);
  }
});
