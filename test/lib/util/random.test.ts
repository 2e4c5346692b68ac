import t from 'tap';

import { mixSeed, mulberry32, permutation, tasksForStep } from '../../../lib/util/random.js';

t.test('mulberry32: reproducible, in [0, 1), roughly uniform', async (t) => {
  const a = mulberry32(42);
  const b = mulberry32(42);
  const draws = Array.from({ length: 20000 }, () => a());
  t.same(Array.from({ length: 20000 }, () => b()), draws, 'same seed, same stream');
  t.ok(draws.every((x) => x >= 0 && x < 1));
  const buckets = new Array(10).fill(0);
  for (const x of draws) buckets[Math.floor(x * 10)]++;
  for (const count of buckets) t.ok(Math.abs(count - 2000) < 200, `bucket count ${count} near 2000`);
  t.not(mulberry32(43)(), mulberry32(42)(), 'another seed, another stream');
});

t.test('mixSeed: 32-bit, order-sensitive, sensitive to each part', async (t) => {
  const base = mixSeed(1, 2, 3);
  t.ok(Number.isInteger(base) && base >= 0 && base < 2 ** 32);
  t.equal(mixSeed(1, 2, 3), base);
  t.not(mixSeed(3, 2, 1), base);
  t.not(mixSeed(1, 2, 4), base);
  t.not(mixSeed(1, 2, 3 + 2 ** 32), base, 'bits above 32 count');
  const seen = new Set(Array.from({ length: 1000 }, (_, i) => mixSeed(7, i)));
  t.equal(seen.size, 1000, 'no collisions over 1000 consecutive parts');
});

t.test('permutation: a permutation, reproducible', async (t) => {
  for (const n of [0, 1, 2, 7, 100]) {
    const p = permutation(n, 5);
    t.same([...p].sort((x, y) => x - y), Array.from({ length: n }, (_, i) => i), `n = ${n}`);
    t.same(permutation(n, 5), p);
  }
  t.not(permutation(100, 5).join(), permutation(100, 6).join());
});

t.test('tasksForStep: every task once per epoch, a pure function of the step', async (t) => {
  const n = 7;
  const perStep = 3;
  const steps = Array.from({ length: 14 }, (_, step) => tasksForStep(n, perStep, 11, step));
  const flat = steps.flat();
  for (let epoch = 0; epoch < 6; epoch++) {
    const slice = flat.slice(epoch * n, epoch * n + n);
    t.same([...slice].sort(), [0, 1, 2, 3, 4, 5, 6], `epoch ${epoch} visits each task once`);
  }
  t.same(tasksForStep(n, perStep, 11, 9), steps[9], 'recomputed alone, step 9 is the same (resume)');
  t.not(tasksForStep(n, perStep, 12, 0).join() + tasksForStep(n, perStep, 12, 1).join(), steps[0]!.join() + steps[1]!.join(), 'another seed, another order');
});
