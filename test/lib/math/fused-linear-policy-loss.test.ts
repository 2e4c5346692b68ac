import t from 'tap';

import { fusedLinearPolicyLoss, policyLoss } from '../../../lib/math/policy-loss.js';
import { assertGradMatches, assertLossMatches } from '../../reference/assert-loss.js';
import { centralDifferences, maxErrorOverMax } from '../../reference/compare.js';
import { linearCase, OPTION_CASES, tokenCase, trueLogprobs } from '../../reference/loss-cases.js';
import { abs, matmul, matmulTransposed, referenceLossValue, referencePolicyLoss, transposedMatmul } from '../../reference/policy-loss.js';
import { Rng, testSeed } from '../../reference/random.js';

const seed = testSeed();
t.comment(`seed ${seed} (replay with SWERL_TEST_SEED=${seed})`);
const rng = new Rng(seed);

const SHAPES = [
  { T: 1, H: 1, V: 7 },
  { T: 23, H: 16, V: 301 },
  { T: 64, H: 48, V: 1000 },
];
// The default tile is bigger than these vocabularies; the small one splits T and V unevenly.
const CHUNKINGS = [undefined, { tokens: 5, vocab: 97 }];

for (const { T, H, V } of SHAPES) {
  for (const chunkSize of CHUNKINGS) {
    for (const c of OPTION_CASES) {
      const chunkName = chunkSize ? `chunks ${chunkSize.tokens}x${chunkSize.vocab}` : 'default chunks';
      t.test(`fusedLinearPolicyLoss T=${T} H=${H} V=${V}, ${chunkName}, ${c.name}`, async (t) => {
        const { hidden, weight, logits } = linearCase(rng, T, H, V);
        const tokens = tokenCase(rng, logits, T, V, c.ref.temperature);
        const ref = referencePolicyLoss({ logits, vocabSize: V, ...tokens }, c.ref);
        const out = await fusedLinearPolicyLoss(
          { hidden, hiddenSize: H, weight, vocabSize: V, ...tokens },
          { ...c.native, chunkSize },
        );
        assertLossMatches(t, out, ref, 'vs float64');
        // dX = G W, dW = G^T X with G = dLoss/dlogits.
        const sens = ref.gradSensitivity;
        assertGradMatches(t, out.gradHidden, matmul(ref.gradLogits, weight, T, V, H), matmul(sens, abs(weight), T, V, H), 'gradHidden vs float64');
        assertGradMatches(t, out.gradWeight, transposedMatmul(ref.gradLogits, hidden, T, V, H), transposedMatmul(sens, abs(hidden), T, V, H), 'gradWeight vs float64');
      });
    }
  }
}

t.test('fused-linear agrees with the materialized loss on the same logits', async (t) => {
  const T = 40;
  const H = 32;
  const V = 517;
  for (const c of OPTION_CASES) {
    const { hidden, weight, logits } = linearCase(rng, T, H, V);
    const tokens = tokenCase(rng, logits, T, V, c.ref.temperature);
    const fused = await fusedLinearPolicyLoss({ hidden, hiddenSize: H, weight, vocabSize: V, ...tokens }, { ...c.native, chunkSize: { tokens: 16, vocab: 128 } });
    const materialized = await policyLoss({ logits: Float32Array.from(logits), vocabSize: V, ...tokens }, c.native);
    const ref = referencePolicyLoss({ logits, vocabSize: V, ...tokens }, c.ref);
    assertLossMatches(t, fused, { ...ref, loss: materialized.loss, logprobs: Float64Array.from(materialized.logprobs), entropy: Float64Array.from(materialized.entropy), stats: materialized.stats }, c.name);
    assertGradMatches(t, fused.gradHidden, matmul(materialized.gradLogits, weight, T, V, H), matmul(ref.gradSensitivity, abs(weight), T, V, H), `${c.name}: gradHidden = gradLogits W`);
  }
});

t.test('finite differences through the linear head', async (t) => {
  const T = 3;
  const H = 4;
  const V = 9;
  const c = OPTION_CASES[OPTION_CASES.length - 1]!;
  const { hidden, weight, logits } = linearCase(rng, T, H, V);
  const tokens = tokenCase(rng, logits, T, V, c.ref.temperature);
  tokens.oldLogprobs.set(referencePolicyLoss({ logits, vocabSize: V, ...tokens }, c.ref).logprobs.map((l) => l - 0.05));
  tokens.weights.fill(1 / T);
  const lossAt = (x: ArrayLike<number>, w: ArrayLike<number>) =>
    referenceLossValue({ logits: matmulTransposed(x, w, T, H, V), vocabSize: V, ...tokens }, c.ref);
  const fdX = centralDifferences(hidden, (x) => lossAt(x, weight));
  const fdW = centralDifferences(weight, (w) => lossAt(hidden, w));
  const out = await fusedLinearPolicyLoss({ hidden, hiddenSize: H, weight, vocabSize: V, ...tokens }, { ...c.native, chunkSize: { tokens: 2, vocab: 4 } });
  t.ok(maxErrorOverMax(out.gradHidden, fdX) <= 1e-5, 'gradHidden = finite differences');
  t.ok(maxErrorOverMax(out.gradWeight, fdW) <= 1e-5, 'gradWeight = finite differences');
});

t.test('tokens with zero coefficients get exactly zero gradient', async (t) => {
  const T = 12;
  const H = 8;
  const V = 64;
  const { hidden, weight, logits } = linearCase(rng, T, H, V);
  const tokens = tokenCase(rng, logits, T, V, 1);
  tokens.weights.fill(1 / T);
  tokens.advantages.fill(0, 0, 6); // first half: A = 0, no entropy term: coefficient 0
  // Second half: ratio 1 and A != 0, so no token there is clipped to zero gradient by chance.
  const now = trueLogprobs(logits, tokens.targets, V, 1);
  for (let i = 6; i < T; i++) {
    tokens.oldLogprobs[i] = Math.min(0, now[i]!);
    tokens.advantages[i] = 0.5 + rng.uniform();
  }
  const out = await fusedLinearPolicyLoss({ hidden, hiddenSize: H, weight, vocabSize: V, ...tokens });
  t.ok(out.gradHidden.subarray(0, 6 * H).every((g) => g === 0), 'skipped tokens: dX rows are 0');
  t.ok(out.gradHidden.subarray(6 * H).some((g) => g !== 0), 'active tokens: dX rows are not');
});
