/**
 * Extreme inputs to the loss API, in every dtype: values at and past float32's range, NaN and
 * Inf, -0, impossible logprobs, huge advantages and weights, empty and mismatched sequences,
 * options out of range. Each case returns finite numbers (loss, stats, gradients) or throws a
 * SwerlError; a NaN or Inf handed back is a crash.
 */
import t from 'tap';

import { computeAdvantages } from '../../lib/math/advantages.js';
import { fusedLinearPolicyLoss, policyLoss, type PolicyLossOptions } from '../../lib/math/policy-loss.js';
import { tokenWeights } from '../../lib/math/token-weights.js';
import { AdversarialTally } from '../support/adversarial.js';
import { Rng, testSeed } from '../reference/random.js';

const CASES = 400;
const BOUND_MS = 1000;
const EXTREMES = [0, -0, 1, -1, 1e-45, 1e4, -1e4, 65504, 7e4, 1e30, -1e30, 3.4e38, -3.4e38, 1e39, NaN, Infinity, -Infinity];

function allFinite(value: unknown): boolean {
  if (typeof value === 'number') return Number.isFinite(value);
  if (value instanceof Float32Array) return value.every((x) => Number.isFinite(x));
  if (typeof value === 'object' && value !== null) return Object.values(value).every(allFinite);
  return true;
}

t.test('extreme loss inputs', async (t) => {
  const seed = testSeed();
  t.comment(`seed ${seed} (SWERL_TEST_SEED=${seed} replays it)`);
  const rng = new Rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[rng.int(xs.length)]!;
  const tally = new AdversarialTally('loss', { clock: 'cpu' });
  // The first native call loads libtorch (seconds); the bound is for the cases, not for that.
  await policyLoss({ targets: [0], oldLogprobs: [-1], advantages: [1], weights: [1], logits: [0, 0], vocabSize: 2 });

  for (let i = 0; i < CASES; i++) {
    const T = rng.int(6) === 0 ? 0 : 1 + rng.int(6);
    const V = 1 + rng.int(9);
    const H = 1 + rng.int(5);
    const column = (n: number, base: () => number) => Array.from({ length: n + (rng.int(12) === 0 ? 1 : 0) }, () => (rng.int(40) === 0 ? pick(EXTREMES) : base()));
    const tokens = {
      targets: Array.from({ length: T }, () => (rng.int(10) === 0 ? pick([-1, V, 2 ** 31, 0.5]) : rng.int(V))),
      oldLogprobs: column(T, () => -Math.abs(rng.normal())),
      advantages: column(T, () => rng.normal()),
      weights: column(T, () => rng.uniform()),
      refLogprobs: column(T, () => -Math.abs(rng.normal())),
    };
    const options: PolicyLossOptions = rng.int(2)
      ? {
          temperature: rng.int(3) ? 1 : pick([1e-30, 0.01, 100, 1e30]),
          entropyCoef: rng.int(3) ? 0 : pick([-1e308, -1, 0.01, 1e308]),
          kl: rng.int(2) ? { coef: pick([-1, 0, 0.1, 1e308]), kind: pick(['k1', 'k2', 'k3'] as const) } : undefined,
          clipLow: rng.int(3) ? 0.2 : pick([-0.1, 0, 0.99, 1, 1e30]),
        }
      : {};
    const dtype = pick(['float32', 'bfloat16', 'float16'] as const);
    const name = `#${i} T=${T} V=${V} H=${H} ${dtype} ${JSON.stringify({ tokens, options }).slice(0, 200)}`;
    await tally.case(name, async () => {
      const result = rng.int(2)
        ? await policyLoss({ ...tokens, logits: column(T * V, () => rng.normal() * 3), vocabSize: V }, options)
        : await fusedLinearPolicyLoss({ ...tokens, hidden: column(T * H, () => rng.normal()), hiddenSize: H, weight: column(V * H, () => rng.normal()), vocabSize: V }, { ...options, dtype });
      if (!allFinite(result)) throw new Error('returned a non-finite number');
    }, BOUND_MS);
  }

  for (const [name, run] of [
    ['advantages of NaN rewards', () => computeAdvantages([NaN, 1], [0, 0], { estimator: 'rloo' })],
    ['advantages of 1e308 rewards', () => computeAdvantages([1e308, -1e308, 1e308], [0, 0, 0], { estimator: 'grpo' })],
    ['token weights of no tokens', () => tokenWeights({ mask: [], seqLengths: [], aggregation: 'token-mean' })],
    ['token weights of a 2^31 length', () => tokenWeights({ mask: [1], seqLengths: [2 ** 31], aggregation: 'token-mean' })],
  ] as const) {
    await tally.case(name, () => {
      const result = (run as () => unknown)();
      if (!allFinite(result)) throw new Error('returned a non-finite number');
    }, BOUND_MS);
  }
  tally.report(t);
});
