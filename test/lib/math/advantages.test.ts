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
    if (estimator === 'maxrl') return mean > 0 ? (r - mean) / mean : 0;
    const std = Math.sqrt(members.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1));
    return (r - mean) / (std + 1e-6);
  });
}

for (const estimator of ['grpo', 'drgrpo', 'rloo', 'maxrl'] as const) {
  t.test(`${estimator} on random groups`, async (t) => {
    for (const [n, numGroups, binary] of [[1, 1, true], [8, 1, true], [64, 9, true], [200, 37, false]] as const) {
      // maxrl takes rewards >= 0 (its groups' means are what it divides by).
      const real = () => (estimator === 'maxrl' ? Math.abs(rng.normal()) * 3 : rng.normal() * 3);
      const rewards = Float32Array.from({ length: n }, () => (binary ? rng.int(2) : real()));
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

t.test('maxrl: a success gets n/K - 1 and a failure -1; all-failed and all-resolved groups get 0', async (t) => {
  const out = computeAdvantages([1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1], [7, 7, 7, 7, 8, 8, 8, 8, 9, 9, 9, 9, 3, 3, 3], { estimator: 'maxrl' });
  t.ok(maxRelativeError(out.subarray(0, 4), [3, -1, -1, -1]) < 1e-6, 'K = 1 of 4');
  t.ok(maxRelativeError(out.subarray(4, 8), [1 / 3, 1 / 3, 1 / 3, -1]) < 1e-6, 'K = 3 of 4');
  t.same(Array.from(out.subarray(8)), [0, 0, 0, 0, 0, 0, 0], 'none resolved, all resolved');
});

t.test('maxrl refuses a negative reward, naming it', async (t) => {
  t.throws(() => computeAdvantages([1, -0.5, 0], [0, 0, 0], { estimator: 'maxrl' }), { code: 'ERR_SWERL_INVALID_ARG', message: /rewards\[1\].*>= 0.*rloo/ });
  t.doesNotThrow(() => computeAdvantages([1, -0.5, 0], [0, 0, 0], { estimator: 'rloo' }));
});

/**
 * The expected update on one task with 0/1 rewards, by exact enumeration of every outcome of a
 * group of n: a policy that resolves with probability p has score grad p / p on a success and
 * -grad p / (1 - p) on a failure, so E[A_1 score_1] is the multiple of grad p a sample carries.
 * rloo's is 1 for every p (the policy gradient); maxrl's is w(p) = (1 - (1-p)^n)/p - (1-p)^(n-1)
 * (docs/loss.md): the rarely solved tasks weigh up to n - 1 times the nearly always solved.
 */
t.test('in expectation rloo follows grad p and maxrl w(p) grad p', async (t) => {
  const expectedWeight = (estimator: 'rloo' | 'maxrl', n: number, p: number) => {
    let sum = 0;
    for (let outcome = 0; outcome < 2 ** n; outcome++) {
      const rewards = Array.from({ length: n }, (_, i) => (outcome >> i) & 1);
      const probability = rewards.reduce((a, r) => a * (r === 1 ? p : 1 - p), 1);
      const a = computeAdvantages(rewards, new Array(n).fill(0), { estimator })[0]!;
      sum += probability * a * (rewards[0] === 1 ? 1 / p : -1 / (1 - p));
    }
    return sum;
  };
  for (const n of [2, 4, 8]) {
    for (const p of [0.05, 0.25, 0.5, 0.9]) {
      t.ok(Math.abs(expectedWeight('rloo', n, p) - 1) < 1e-5, `rloo n=${n} p=${p}`);
      const w = (1 - (1 - p) ** n) / p - (1 - p) ** (n - 1);
      t.ok(Math.abs(expectedWeight('maxrl', n, p) - w) < 1e-5 * w, `maxrl n=${n} p=${p}: ${expectedWeight('maxrl', n, p).toFixed(4)} = w(p) ${w.toFixed(4)}`);
    }
  }
});
