import t from 'tap';

import { computeAdvantages } from '../../../lib/math/advantages.js';
import { maxRelativeError } from '../../reference/compare.js';
import { Rng, testSeed } from '../../reference/random.js';

const seed = testSeed();
t.comment(`seed ${seed} (replay with SWERL_TEST_SEED=${seed})`);
const rng = new Rng(seed);

/** Float64 reference written from docs/loss.md, one trajectory at a time. */
function reference(rewards: Float32Array, groups: Int32Array, estimator: string): Float64Array {
  return Float64Array.from(rewards, (r, i) => {
    const members = Array.from(rewards).filter((_, j) => groups[j] === groups[i]);
    const n = members.length;
    if (n === 1) return 0;
    const mean = members.reduce((a, b) => a + b, 0) / n;
    if (estimator === 'drgrpo') return r - mean;
    if (estimator === 'rloo') return r - (members.reduce((a, b) => a + b, 0) - r) / (n - 1);
    const std = Math.sqrt(members.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1));
    return (r - mean) / (std + 1e-6);
  });
}

for (const estimator of ['grpo', 'drgrpo', 'rloo'] as const) {
  t.test(`${estimator} on random groups`, async (t) => {
    for (const [n, numGroups, binary] of [[1, 1, true], [8, 1, true], [64, 9, true], [200, 37, false]] as const) {
      const rewards = Float32Array.from({ length: n }, () => (binary ? rng.int(2) : rng.normal() * 3));
      const groups = Int32Array.from({ length: n }, () => 1000 - 7 * rng.int(numGroups)); // any ids
      const out = computeAdvantages(rewards, groups, { estimator });
      t.ok(maxRelativeError(out, reference(rewards, groups, estimator), 1e-3) <= 1e-5, `n=${n} groups=${numGroups}`);
    }
  });
}

t.test('a group of one gets 0; equal rewards give 0; the default is rloo', async (t) => {
  t.same(Array.from(computeAdvantages([1, 0, 1], [4, 5, 5])), [0, -1, 1]);
  t.same(Array.from(computeAdvantages([1, 1, 1], [0, 0, 0], { estimator: 'grpo' })), [0, 0, 0]);
  // rloo = n/(n-1) (R - mean): R = [1, 0, 0, 0], mean 1/4 -> [1, -1/3, -1/3, -1/3]
  const rloo = computeAdvantages([1, 0, 0, 0], [2, 2, 2, 2]);
  t.ok(maxRelativeError(rloo, [1, -1 / 3, -1 / 3, -1 / 3]) < 1e-6);
  t.same(Array.from(computeAdvantages([], [])), []);
});
