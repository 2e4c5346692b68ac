// Bounded concurrency: mapBounded keeps item order and never runs more than its limit; Slots
// serves waiters in order and frees a slot when the holder throws.
import t from 'tap';

import { Slots, mapBounded } from '../../../lib/util/bounded.js';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('mapBounded: results in item order, at most `limit` in flight', async (t) => {
  for (const limit of [1, 2, 5, 50]) {
    let running = 0;
    let peak = 0;
    const items = Array.from({ length: 12 }, (_, i) => i);
    const out = await mapBounded(items, limit, async (x) => {
      peak = Math.max(peak, ++running);
      await tick(Math.floor(Math.random() * 5));
      running--;
      return x * x;
    });
    t.same(out, items.map((x) => x * x), `limit ${limit}: in order`);
    t.equal(peak, Math.min(limit, items.length), `limit ${limit}: peak in flight`);
  }
  t.same(await mapBounded([], 3, async () => 1), []);
});

t.test('mapBounded: the first failure rejects, and no new call starts after it', async (t) => {
  const started: number[] = [];
  await t.rejects(mapBounded([0, 1, 2, 3, 4, 5], 2, async (x) => {
    started.push(x);
    await tick(1);
    if (x === 1) throw new Error('boom');
    return x;
  }), { message: 'boom' });
  await tick(20);
  t.ok(started.length <= 3, `calls started: ${started.join(', ')}`);
});

t.test('Slots: holders bounded, waiters served in order, a throwing holder frees its slot', async (t) => {
  const slots = new Slots(2);
  const order: string[] = [];
  let running = 0;
  let peak = 0;
  const job = (name: string, fail = false) => slots.run(async () => {
    peak = Math.max(peak, ++running);
    order.push(name);
    await tick(3);
    running--;
    if (fail) throw new Error(name);
    return name;
  });
  const results = await Promise.allSettled([job('a', true), job('b'), job('c'), job('d'), job('e')]);
  t.equal(peak, 2);
  t.same(order, ['a', 'b', 'c', 'd', 'e'], 'served in order');
  t.same(results.map((r) => r.status), ['rejected', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
  t.equal(await job('f'), 'f', 'every slot came back');
});
