import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import { loadTasks } from '../../../../lib/env/tasks/load.js';
import { generateSweGenTask } from '../../../../lib/env/swe-gen/generate.js';
import { assertSweGenSuitesDisjoint, writeSweGenSuite } from '../../../../lib/env/swe-gen/suite.js';

t.test('a suite: one folder per seed, the generator\'s bytes, loaded as tasks with their swe_gen metadata', async (t) => {
  const dir = path.join(t.testdir(), 'suite');
  const suite = await writeSweGenSuite(dir, { split: 'heldout', firstSeed: 10, count: 4 });
  const ids = [10, 11, 12, 13].map((seed) => generateSweGenTask('heldout', seed).id);
  t.same(readdirSync(dir).sort(), [...ids].sort(), 'the task folders, nothing else');
  t.same(suite.paths, ids.map((id) => path.join(dir, id)));
  t.match(suite.summary, /^wrote 4 task\(s\) to .*suite \(heldout seeds 10-13; (python|javascript) \d.*; bugs: [a-z-]+ \d/);
  for (const [i, seed] of [10, 11, 12, 13].entries()) {
    const generated = generateSweGenTask('heldout', seed);
    for (const [name, text] of Object.entries(generated.files)) t.equal(readFileSync(path.join(dir, generated.id, name), 'utf8'), text, `${generated.id}/${name}`);
    t.same(suite.tasks[i]!.metadata.sweGen, generated.metadata, 'the loader carries swe_gen as metadata.sweGen');
    t.equal(suite.tasks[i]!.goldPatch, generated.files['gold.patch']);
  }
  const { tasks } = await loadTasks(dir);
  t.same(tasks.map((task) => task.id), ids);
  t.same(suite.options, { split: 'heldout', firstSeed: 10, count: 4, force: false, languages: ['python', 'javascript'], kinds: ['operator', 'comparison', 'off-by-one', 'wrong-variable', 'missing-case'], functions: { min: 2, max: 4 }, lines: { min: 15, max: 40 }, bugs: 1 });
});

t.test('a non-empty folder is refused unless force, which replaces tasks of the same ids', async (t) => {
  const dir = path.join(t.testdir(), 'suite');
  await writeSweGenSuite(dir, { count: 3 });
  const before = readFileSync(path.join(dir, generateSweGenTask('train', 0).id, 'task.json'), 'utf8');
  await t.rejects(writeSweGenSuite(dir, { count: 3 }), { code: 'ERR_SWERL_INVALID_ARG', message: /^dir ".*suite" is not empty \(3 entries\); give a new or empty folder, or force \(--force\)/ });
  t.equal(readFileSync(path.join(dir, generateSweGenTask('train', 0).id, 'task.json'), 'utf8'), before, 'untouched');
  const forced = await writeSweGenSuite(dir, { count: 1, force: true, bugs: 2 });
  t.equal(forced.tasks.length, 1);
  const replaced = generateSweGenTask('train', 0, { bugs: 2 });
  t.equal(readFileSync(path.join(dir, replaced.id, 'task.json'), 'utf8'), replaced.files['task.json'], 'seed 0 rewritten');
  t.equal(readdirSync(dir).length, readdirSync(dir).filter((name) => !name.includes('.tmp-') && !name.includes('.old-')).length, 'no temporary folders left');
  await t.rejects(writeSweGenSuite(path.join(dir, 'x'), { count: 0 }), { message: /^options\.count must be >= 1/ });
});

t.test('suites that share a seed of a split, or a program, are told apart from disjoint ones', async (t) => {
  const root = t.testdir();
  const train = path.join(root, 'train');
  await writeSweGenSuite(train, { count: 6 });
  const heldout = path.join(root, 'heldout');
  await writeSweGenSuite(heldout, { count: 6, split: 'heldout', disjointFrom: train });
  await assertSweGenSuitesDisjoint(train, heldout);
  const again = path.join(root, 'again');
  await writeSweGenSuite(again, { firstSeed: 4, count: 4 });
  await t.rejects(assertSweGenSuitesDisjoint(train, again), { message: /overlap in 2 task\(s\): gen-(py|js)-train-000004 and gen-(py|js)-train-000004 share a seed/ });
  const refused = path.join(root, 'refused');
  await t.rejects(writeSweGenSuite(refused, { firstSeed: 5, count: 2, disjointFrom: train }), { message: /^disjointFrom ".*train" overlaps the suite asked for in 1 task\(s\): gen-(py|js)-train-000005 and gen-(py|js)-train-000005 share a seed/ });
  t.notOk(existsSync(refused), 'nothing written');

  // one function per file leaves few programs: different seeds of different splits can meet
  const small = { functions: { min: 1, max: 1 }, lines: { min: 1, max: 40 } };
  const programs = new Map<string, number>();
  for (let seed = 0; seed < 100; seed++) {
    const task = generateSweGenTask('train', seed, small);
    programs.set(task.files[`repo/${task.metadata.file}`]!, seed);
  }
  let pair: [number, number] | undefined;
  for (let seed = 0; seed < 100 && !pair; seed++) {
    const task = generateSweGenTask('heldout', seed, small);
    const trainSeed = programs.get(task.files[`repo/${task.metadata.file}`]!);
    if (trainSeed !== undefined) pair = [trainSeed, seed];
  }
  t.ok(pair, `train seed ${pair?.[0]} and held-out seed ${pair?.[1]} give the same program`);
  const smallTrain = path.join(root, 'small-train');
  await writeSweGenSuite(smallTrain, { ...small, firstSeed: pair![0], count: 1 });
  const smallHeldout = path.join(root, 'small-heldout');
  await writeSweGenSuite(smallHeldout, { ...small, split: 'heldout', firstSeed: pair![1], count: 1 });
  await t.rejects(assertSweGenSuitesDisjoint(smallTrain, smallHeldout), { message: /overlap in 1 task\(s\): gen-(py|js)-train-\d{6} and gen-(py|js)-heldout-\d{6} have the same program/ });

  // dropShared: one folder for both splits, the held-out task whose program a train task has left out
  const shared = path.join(root, 'shared');
  await writeSweGenSuite(shared, { ...small, firstSeed: pair![0], count: 1 });
  const kept = await writeSweGenSuite(shared, { ...small, split: 'heldout', firstSeed: pair![1] - 1, count: 3, disjointFrom: shared, dropShared: true, force: true });
  t.equal(kept.dropped.length, 1, `left out: ${kept.dropped.join(', ')}`);
  t.match(kept.dropped[0], new RegExp(`heldout-${String(pair![1]).padStart(6, '0')}$`));
  t.equal(kept.tasks.length, 2, 'the others written');
  t.notOk(existsSync(path.join(shared, kept.dropped[0]!)), 'the shared one not written');
  t.match(kept.summary, /1 left out: their programs are in/);
  const rerun = await writeSweGenSuite(shared, { ...small, split: 'heldout', firstSeed: pair![1] - 1, count: 3, disjointFrom: shared, dropShared: true, force: true });
  t.same(rerun.tasks.map((x) => x.id), kept.tasks.map((x) => x.id), 'written again over itself: its own split is not compared');
});
