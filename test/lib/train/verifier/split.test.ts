/** Held out by task (no task straddles), a held-out side with both classes, balanced classes by seeded downsampling. */
import t from 'tap';

import { balanceClasses, classCounts, splitByTask } from '../../../../lib/train/verifier/split.js';
import { mulberry32 } from '../../../../lib/util/random.js';

function items(tasks: number, perTask: number, pResolved: number, seed: number) {
  const rng = mulberry32(seed);
  return Array.from({ length: tasks * perTask }, (_, i) => ({ taskId: `t${Math.floor(i / perTask)}`, resolved: rng() < pResolved, i }));
}

t.test('split by task: whole tasks on each side, about the fraction held out, a pure function of the seed', async (t) => {
  for (let seed = 0; seed < 20; seed++) {
    const all = items(15, 4, 0.4, seed);
    const { train, heldOut } = splitByTask(all, 0.25, seed);
    const trainTasks = new Set(train.map((r) => r.taskId));
    t.notOk(heldOut.some((r) => trainTasks.has(r.taskId)), 'no task on both sides');
    t.equal(train.length + heldOut.length, all.length, 'nothing lost');
    t.ok(heldOut.length >= 12 && heldOut.length <= 24, `held out ${heldOut.length} of 60`);
    if (classCounts(all).yes >= 2) t.ok(classCounts(heldOut).yes > 0 && classCounts(heldOut).no > 0, 'both classes held out');
    t.same(splitByTask(all, 0.25, seed), { train, heldOut }, 'same seed, same split');
  }
  t.same(splitByTask(items(3, 2, 0.5, 1), 0, 1).heldOut, [], 'fraction 0: nothing held out');
  t.throws(() => splitByTask(items(1, 4, 0.5, 1), 0.2, 1), /data has 1 task\(s\); holding out by task needs at least 2 tasks/);
});

t.test('a held-out draw that lacks a class takes a task that has it', async (t) => {
  // Only t9 has a resolved candidate besides t0: whichever tasks the draw holds out, it ends with one of them.
  const all = Array.from({ length: 10 }, (_, k) => [0, 1].map((r) => ({ taskId: `t${k}`, resolved: (k === 0 || k === 9) && r === 0 }))).flat();
  for (let seed = 0; seed < 10; seed++) {
    const { train, heldOut } = splitByTask(all, 0.1, seed);
    t.ok(classCounts(heldOut).yes === 1 && classCounts(train).yes === 1, `seed ${seed}: one resolved task on each side`);
  }
});

t.test('balancing: the larger class downsampled to the smaller, seeded, order kept', async (t) => {
  const all = items(20, 3, 0.3, 5);
  const { yes, no } = classCounts(all);
  const balanced = balanceClasses(all, 7);
  t.same(classCounts(balanced), { yes: Math.min(yes, no), no: Math.min(yes, no) });
  t.same(balanced.filter((r) => r.resolved), all.filter((r) => r.resolved), 'the smaller class whole');
  t.ok(balanced.every((r, k) => k === 0 || r.i > balanced[k - 1]!.i), 'in the order given');
  t.same(balanceClasses(all, 7), balanced, 'same seed, same draw');
  t.not(JSON.stringify(balanceClasses(all, 8)), JSON.stringify(balanced), 'another seed, another draw');
  t.same(balanceClasses(all.filter((r) => r.resolved), 1), [], 'one class only: nothing is balanced');
});
