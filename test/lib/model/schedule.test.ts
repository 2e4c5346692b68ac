import t from 'tap';

import { learningRate } from '../../../lib/model/schedule.js';

t.test('warmup rises linearly to the base rate', async (t) => {
  const s = { kind: 'constant' as const, warmupSteps: 4, minLrRatio: 0 };
  t.same([0, 1, 2, 3, 4, 100].map((step) => learningRate(1, step, s)), [0.25, 0.5, 0.75, 1, 1, 1]);
});

t.test('cosine decays from the base rate to the floor over the steps after warmup', async (t) => {
  const s = { kind: 'cosine' as const, warmupSteps: 2, totalSteps: 12, minLrRatio: 0.1 };
  t.equal(learningRate(2, 1, s), 2, 'end of warmup');
  t.equal(learningRate(2, 2, s), 2, 'decay starts at the base rate');
  t.ok(Math.abs(learningRate(2, 7, s) - 2 * (0.1 + 0.9 * 0.5)) < 1e-12, 'half way: the mean of base and floor');
  t.ok(Math.abs(learningRate(2, 12, s) - 0.2) < 1e-12, 'the floor at totalSteps');
  t.ok(Math.abs(learningRate(2, 50, s) - 0.2) < 1e-12, 'and after');
  for (let step = 3; step <= 12; ++step) t.ok(learningRate(2, step, s) < learningRate(2, step - 1, s), `decreasing at ${step}`);
});
