import t from 'tap';

import { perToken, tokenWeights, type Aggregation } from '../../../lib/math/token-weights.js';
import { maxRelativeError } from '../../reference/compare.js';
import { Rng, testSeed } from '../../reference/random.js';

const seed = testSeed();
t.comment(`seed ${seed} (replay with SWERL_TEST_SEED=${seed})`);
const rng = new Rng(seed);

function reference(mask: Uint8Array, lengths: number[], aggregation: Aggregation, L: number, B?: number, M?: number): Float64Array {
  const sequences = B ?? lengths.length;
  const total = M ?? mask.reduce((a, b) => a + b, 0);
  const out = new Float64Array(mask.length);
  let t0 = 0;
  for (const n of lengths) {
    let ni = 0;
    for (let t = t0; t < t0 + n; t++) ni += mask[t]!;
    for (let t = t0; t < t0 + n; t++) {
      if (!mask[t]) continue;
      out[t] = aggregation === 'token-mean' ? 1 / total : aggregation === 'seq-mean-token-mean' ? 1 / (sequences * ni) : 1 / (sequences * L);
    }
    t0 += n;
  }
  return out;
}

for (const aggregation of ['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum-norm'] as const) {
  t.test(aggregation, async (t) => {
    for (let trial = 0; trial < 5; trial++) {
      const lengths = Array.from({ length: 1 + rng.int(12) }, () => 1 + rng.int(40));
      const T = lengths.reduce((a, b) => a + b, 0);
      const mask = Uint8Array.from({ length: T }, () => (rng.uniform() < 0.7 ? 1 : 0));
      mask.fill(0, 0, lengths[0]); // the first sequence fully masked
      const w = tokenWeights({ mask, seqLengths: lengths, aggregation, maxLength: 32768 });
      t.ok(maxRelativeError(w, reference(mask, lengths, aggregation, 32768), 1e-12) <= 1e-6, `trial ${trial}`);
      // Same layout given as per-token sequence ids.
      const ids = perToken(lengths.map((_, i) => i), lengths);
      t.same(tokenWeights({ mask, sequenceIds: ids, aggregation, maxLength: 32768 }), w, 'sequenceIds form');
      // Global denominators (data parallelism).
      const wg = tokenWeights({ mask, seqLengths: lengths, aggregation, maxLength: 1000, globalSequences: 64, globalMaskedTokens: 5000 });
      t.ok(maxRelativeError(wg, reference(mask, lengths, aggregation, 1000, 64, 5000), 1e-12) <= 1e-6, `trial ${trial}, global`);
    }
  });
}

t.test('token-mean sums to 1; fully masked batch gives zeros', async (t) => {
  const w = tokenWeights({ mask: [1, 1, 0, 1], seqLengths: [2, 2], aggregation: 'token-mean' });
  t.ok(Math.abs(w.reduce((a, b) => a + b, 0) - 1) < 1e-6);
  t.same(Array.from(tokenWeights({ mask: [0, 0], seqLengths: [2], aggregation: 'seq-mean-token-mean' })), [0, 0]);
  t.same(Array.from(perToken([0.5, -1], [2, 1])), [0.5, 0.5, -1]);
});
