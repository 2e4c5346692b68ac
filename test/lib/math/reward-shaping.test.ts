import t from 'tap';

import { compactFilter, keepInformativeGroups, keepNonzeroAdvantages, overlongPenalty, turnPenalty } from '../../../lib/math/reward-shaping.js';
import { TERMINATION_REASONS } from '../../../lib/types/termination.js';
import { maxRelativeError } from '../../reference/compare.js';
import { Rng, testSeed } from '../../reference/random.js';

const seed = testSeed();
t.comment(`seed ${seed} (replay with SWERL_TEST_SEED=${seed})`);
const rng = new Rng(seed);

t.test('compact filtering zeroes reward and mask for max_context / max_steps / timeout only', async (t) => {
  const n = 60;
  const terminations = Array.from({ length: n }, () => TERMINATION_REASONS[rng.int(TERMINATION_REASONS.length)]!);
  const rewards = Float32Array.from({ length: n }, () => rng.int(2));
  const lengths = Array.from({ length: n }, () => 1 + rng.int(6));
  const mask = Uint8Array.from({ length: lengths.reduce((a, b) => a + b, 0) }, () => (rng.uniform() < 0.8 ? 1 : 0));
  const out = compactFilter({ rewards, terminations, mask, seqLengths: lengths });
  let t0 = 0;
  terminations.forEach((reason, i) => {
    const filtered = reason === 'max_context' || reason === 'max_steps' || reason === 'timeout';
    t.equal(out.filtered[i], filtered ? 1 : 0, `${reason}: filtered flag`);
    t.equal(out.rewards[i], filtered ? 0 : rewards[i], `${reason}: reward`);
    for (let k = t0; k < t0 + lengths[i]!; k++) {
      if (out.mask![k] !== (filtered ? 0 : mask[k])) t.fail(`${reason}: mask at token ${k}`);
    }
    t0 += lengths[i]!;
  });
  t.same(Object.keys(compactFilter({ rewards: [1], terminations: ['error'] })).sort(), ['filtered', 'rewards'], 'no mask in, no mask out');
});

t.test('turn penalty (Nebius)', async (t) => {
  const turns = Array.from({ length: 50 }, (_, i) => i);
  const rewards = Float32Array.from({ length: 50 }, () => rng.int(2));
  const out = turnPenalty(rewards, turns, { threshold: 10, maxTurns: 40 });
  const expected = turns.map((k, i) => rewards[i]! + (k < 10 ? 0 : (10 - k) / 30));
  t.ok(maxRelativeError(out, expected) < 1e-6);
  t.equal(turnPenalty([0], [40])[0], -1, 'defaults 10/40 reach -1 at 40 turns');
});

t.test('soft overlong penalty (DAPO)', async (t) => {
  const lengths = [0, 100, 700, 768, 800, 1000, 1024, 1025, 5000];
  const out = overlongPenalty(new Float32Array(lengths.length).fill(1), lengths, { maxLength: 1024, bufferLength: 256 });
  const expected = lengths.map((y) => 1 + (y <= 768 ? 0 : y <= 1024 ? (768 - y) / 256 : -1));
  t.ok(maxRelativeError(out, expected) < 1e-6);
});

t.test('group filters', async (t) => {
  t.same(Array.from(keepInformativeGroups([1, 1, 0, 1, 0, 0, 1], [7, 7, 3, 3, 9, 9, 5])), [0, 0, 1, 1, 0, 0, 0], 'all-equal groups and singletons dropped');
  t.same(Array.from(keepNonzeroAdvantages([0, 0.5, -0.1, 0])), [0, 1, 1, 0]);
});
