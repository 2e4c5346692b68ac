/** AUC (Mann–Whitney, ties half) against a brute-force float64 count over every pair, and accuracy at 0.5. */
import t from 'tap';

import { accuracyAt, rocAuc } from '../../../../lib/train/verifier/metrics.js';
import { mulberry32 } from '../../../../lib/util/random.js';

/** Every (positive, negative) pair: 1 when the positive scores higher, 1/2 on a tie. */
function bruteForceAuc(scores: readonly number[], labels: readonly boolean[]): number {
  let wins = 0;
  let pairs = 0;
  scores.forEach((p, i) => {
    if (!labels[i]) return;
    scores.forEach((n, j) => {
      if (labels[j]) return;
      pairs++;
      wins += p > n ? 1 : p === n ? 0.5 : 0;
    });
  });
  return wins / pairs;
}

t.test('AUC equals the pairwise count on fresh random scores, ties included', async (t) => {
  const rng = mulberry32(Date.now() >>> 0);
  for (let trial = 0; trial < 200; trial++) {
    const n = 2 + Math.floor(rng() * 60);
    // Coarse scores (a few levels) make ties common; fine ones make them rare.
    const levels = trial % 2 === 0 ? 1 + Math.floor(rng() * 6) : 0;
    const scores = Array.from({ length: n }, () => (levels ? Math.floor(rng() * levels) / levels : rng()));
    const labels = Array.from({ length: n }, (_, i) => (i < 2 ? i === 0 : rng() < 0.4));
    const auc = rocAuc(scores, labels);
    const reference = bruteForceAuc(scores, labels);
    if (Math.abs(auc - reference) > 1e-12) t.fail(`trial ${trial}: ${auc} vs ${reference} for ${JSON.stringify({ scores, labels })}`);
  }
  t.pass('200 random sets agree');
});

t.test('AUC edge cases', async (t) => {
  t.equal(rocAuc([0.9, 0.8, 0.1, 0.2], [true, true, false, false]), 1, 'perfect separation');
  t.equal(rocAuc([0.1, 0.2, 0.9, 0.8], [true, true, false, false]), 0, 'perfectly wrong');
  t.equal(rocAuc([0.5, 0.5, 0.5], [true, false, false]), 0.5, 'all tied: one half');
  t.ok(Number.isNaN(rocAuc([0.1, 0.2], [true, true])), 'one class: undefined');
  t.throws(() => rocAuc([0.1], [true, false]), /scores has 1 entries for 2 labels/);
  t.throws(() => rocAuc([NaN, 0.2], [true, false]), /scores\[0\] is NaN/);
});

t.test('accuracy at 0.5: YES above the threshold', async (t) => {
  t.equal(accuracyAt([0.9, 0.4, 0.6, 0.5], [true, false, false, false]), 0.75);
  t.ok(Number.isNaN(accuracyAt([], [])));
});
