// The C++ autograd functions (native/src/loss/autograd.cc), reached through a one-layer
// model built in C++: hidden = input . projection, then the loss; libtorch autograd must carry
// the gradient back to projection and to the LM head.
import t from 'tap';

import { projectedPolicyLoss } from '../../lib/math/policy-loss.js';
import { assertGradMatches, assertLossMatches } from '../reference/assert-loss.js';
import { OPTION_CASES, tokenCase } from '../reference/loss-cases.js';
import { abs, matmul, matmulTransposed, referencePolicyLoss, transposedMatmul } from '../reference/policy-loss.js';
import { Rng, testSeed } from '../reference/random.js';

const seed = testSeed();
t.comment(`seed ${seed} (replay with SWERL_TEST_SEED=${seed})`);
const rng = new Rng(seed);

const T = 21;
const D = 12;
const H = 16;
const V = 203;

for (const fused of [true, false]) {
  for (const c of [OPTION_CASES[0]!, OPTION_CASES[OPTION_CASES.length - 1]!]) {
    t.test(`${fused ? 'fused-linear' : 'materialized'} autograd function, ${c.name}`, async (t) => {
      const input = rng.normals(T * D, 1);
      const projection = rng.normals(D * H, 1 / Math.sqrt(D));
      const weight = rng.normals(V * H, 2 / Math.sqrt(H));
      const hidden = matmul(input, projection, T, D, H);
      const logits = matmulTransposed(hidden, weight, T, H, V);
      const tokens = tokenCase(rng, logits, T, V, c.ref.temperature);
      const ref = referencePolicyLoss({ logits, vocabSize: V, ...tokens }, c.ref);
      const out = await projectedPolicyLoss(
        { input, projection, weight, inputSize: D, hiddenSize: H, vocabSize: V, fused, ...tokens },
        { ...c.native, chunkSize: { tokens: 8, vocab: 64 } },
      );
      assertLossMatches(t, out, ref, 'vs float64');
      const gradHidden = matmul(ref.gradLogits, weight, T, V, H);
      const sensHidden = matmul(ref.gradSensitivity, abs(weight), T, V, H);
      assertGradMatches(t, out.gradProjection, transposedMatmul(input, gradHidden, T, D, H), transposedMatmul(abs(input), sensHidden, T, D, H), 'dLoss/dprojection');
      assertGradMatches(t, out.gradWeight, transposedMatmul(ref.gradLogits, hidden, T, V, H), transposedMatmul(ref.gradSensitivity, abs(hidden), T, V, H), 'dLoss/dweight');
    });
  }
}
