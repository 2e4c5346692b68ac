import t from 'tap';

import { SEEDS_PER_SPLIT, parseTaskId, streamSeed, taskId } from '../../../../lib/env/swe-gen/splits.js';

t.test('train and held-out seeds draw from halves of the 32-bit seeds that never meet', async (t) => {
  t.equal(streamSeed('train', 0), 0);
  t.equal(streamSeed('train', SEEDS_PER_SPLIT - 1), 2 ** 31 - 1);
  t.equal(streamSeed('heldout', 0), 2 ** 31);
  t.equal(streamSeed('heldout', SEEDS_PER_SPLIT - 1), 2 ** 32 - 1);
  t.throws(() => streamSeed('heldout', SEEDS_PER_SPLIT), { code: 'ERR_SWERL_INVALID_ARG', message: /^seed is 2147483648; a split's seeds are whole numbers from 0 to 2147483647/ });
  t.throws(() => streamSeed('train', 1.5), { message: /^seed is 1\.5/ });
});

t.test('a task id names its language, split and seed, and gives them back', async (t) => {
  t.equal(taskId('python', 'train', 123), 'gen-py-train-000123');
  t.equal(taskId('javascript', 'heldout', 1234567), 'gen-js-heldout-1234567');
  t.same(parseTaskId('gen-js-heldout-000042'), { split: 'heldout', seed: 42 });
  t.same(parseTaskId('gen-py-train-1234567'), { split: 'train', seed: 1234567 });
  t.equal(parseTaskId('py-lru-recency'), null);
  t.equal(parseTaskId('gen-py-test-000001'), null);
});
