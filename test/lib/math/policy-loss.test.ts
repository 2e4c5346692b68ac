import t from 'tap';

import { policyLoss } from '../../../lib/math/policy-loss.js';
import { assertGradMatches, assertLossMatches } from '../../reference/assert-loss.js';
import { centralDifferences, maxErrorOverMax } from '../../reference/compare.js';
import { logitsCase, OPTION_CASES, tokenCase } from '../../reference/loss-cases.js';
import { referenceLossValue, referencePolicyLoss, type RefInputs } from '../../reference/policy-loss.js';
import { Rng, testSeed } from '../../reference/random.js';

const seed = testSeed();
t.comment(`seed ${seed} (replay with SWERL_TEST_SEED=${seed})`);
const rng = new Rng(seed);

const SHAPES = [
  { T: 1, V: 7 },
  { T: 19, V: 300 },
  { T: 64, V: 1000 },
];

for (const { T, V } of SHAPES) {
  for (const c of OPTION_CASES) {
    t.test(`policyLoss T=${T} V=${V}, ${c.name}`, async (t) => {
      const logits = logitsCase(rng, T, V);
      const tokens = tokenCase(rng, logits, T, V, c.ref.temperature);
      const inputs = { logits, vocabSize: V, ...tokens };
      const ref = referencePolicyLoss(inputs, c.ref);
      const out = await policyLoss(inputs, c.native);
      assertLossMatches(t, out, ref, 'vs float64');
      assertGradMatches(t, out.gradLogits, ref.gradLogits, ref.gradSensitivity, 'gradLogits vs float64');
    });
  }
}

t.test('policyLoss: all advantages zero and all weights zero give a zero gradient', async (t) => {
  const T = 9;
  const V = 50;
  const logits = logitsCase(rng, T, V);
  const tokens = tokenCase(rng, logits, T, V, 1);
  const zeroAdv = await policyLoss({ logits, vocabSize: V, ...tokens, advantages: new Float32Array(T) });
  t.equal(zeroAdv.loss, 0);
  t.ok(zeroAdv.gradLogits.every((g) => g === 0), 'A = 0 everywhere: no gradient');
  const masked = await policyLoss({ logits, vocabSize: V, ...tokens, weights: new Float32Array(T) });
  t.equal(masked.stats.maskedTokens, 0);
  t.equal(masked.stats.ratioMean, 0, 'stats over no tokens are 0');
  t.ok(masked.gradLogits.every((g) => g === 0), 'fully masked: no gradient');
});

t.test('policyLoss: extreme logits stay finite', async (t) => {
  const T = 4;
  const V = 33;
  const logits = logitsCase(rng, T, V).map((x, i) => (i % 5 === 0 ? x * 1e4 : x));
  const tokens = tokenCase(rng, logits, T, V, 1);
  const out = await policyLoss({ logits, vocabSize: V, ...tokens }, { entropyCoef: 0.1 });
  t.ok(Number.isFinite(out.loss), 'loss finite');
  t.ok(out.gradLogits.every(Number.isFinite) && out.logprobs.every(Number.isFinite), 'no NaN/Inf');
  const ref = referencePolicyLoss({ logits, vocabSize: V, ...tokens }, { clipLow: 0.2, clipHigh: 0.28, temperature: 1, entropyCoef: 0.1 });
  assertGradMatches(t, out.gradLogits, ref.gradLogits, ref.gradSensitivity, 'gradLogits vs float64');
});

// The reference gradient must itself be right: check it against central differences of the
// reference loss, and check the native gradient against the same differences, on small cases
// away from the loss's kinks (clip boundaries, the log-ratio clamp) and from the region beyond
// the clamp, whose huge constant terms (|A| e^20) would drown the differences in roundoff.
function unfitForDifferences(inputs: RefInputs, o: (typeof OPTION_CASES)[number]['ref']): boolean {
  const lp = referencePolicyLoss(inputs, o).logprobs;
  return Array.from(lp).some((l, i) => {
    const d = l - inputs.oldLogprobs[i]!;
    const r = Math.exp(d);
    const edges = [1 - o.clipLow, 1 + o.clipHigh, o.dualClip ?? Infinity];
    return Math.abs(d) > 5 || edges.some((e) => Math.abs(r - e) < 1e-3 * Math.max(1, e));
  });
}

for (const c of OPTION_CASES) {
  t.test(`finite differences, ${c.name}`, async (t) => {
    const T = 3;
    const V = 6;
    let inputs: RefInputs & ReturnType<typeof tokenCase> & { logits: Float32Array };
    do {
      const logits = logitsCase(rng, T, V);
      inputs = { logits, vocabSize: V, ...tokenCase(rng, logits, T, V, c.ref.temperature) };
      inputs.weights.fill(1 / T); // every token contributes
    } while (unfitForDifferences(inputs, c.ref));
    const ref = referencePolicyLoss(inputs, c.ref);
    const fd = centralDifferences(inputs.logits, (logits) => referenceLossValue({ ...inputs, logits }, c.ref));
    const refError = maxErrorOverMax(ref.gradLogits, fd);
    t.ok(refError <= 1e-6, `float64 reference gradient = finite differences (${refError.toExponential(2)})`);
    // The native gradient is float32: held to the same fp32 bound as against the reference,
    // which counts the logprob's roundings times the gradient's sensitivity to them (a flat
    // 1e-5 failed at temperature 0.6, where 1/T amplifies them: 1.43e-5 in CI).
    const out = await policyLoss(inputs, c.native);
    assertGradMatches(t, out.gradLogits, fd, ref.gradSensitivity, 'native gradient vs finite differences');
  });
}
