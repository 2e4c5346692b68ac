/**
 * Where a run's episodes come from: generated SWE tasks (tasks.generate) are written where the
 * config says, the same bytes on a second open (a resumed run), with the held-out split as the
 * eval tasks, never trained on.
 */
import { readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import { resolveTrainConfig } from '../../../lib/train/config.js';
import { assertGoldPatches, openTaskSource } from '../../../lib/train/task-source.js';

function config(dir: string, generate: object, extra: object = {}) {
  return {
    run: { dir, steps: 1 },
    model: { preset: 'qwen3-tiny' },
    tasks: { kind: 'swe', generate, env: { prompt: 'compact' }, ...extra },
    rollout: { tasksPerStep: 2, samplesPerTask: 2 },
  };
}

t.test('tasks.generate: suites written into <run.dir>/tasks, the held-out split evaluated', async (t) => {
  const dir = path.join(t.testdir(), 'run');
  const resolved = resolveTrainConfig(config(dir, { train: 6, heldout: 3, functions: { min: 1, max: 2 }, lines: { min: 4, max: 20 } }));
  t.equal(resolved.tasks.kind === 'swe' && resolved.tasks.path, path.join(dir, 'tasks'), 'the path defaults to the run directory');
  const source = await openTaskSource(resolved.tasks, 'swerl-test');
  t.equal(source.train.length, 6);
  t.same(source.evaluation.map((r) => r.id.split('-')[2]), ['heldout', 'heldout', 'heldout'], 'the held-out split is the eval set');
  t.ok(source.train.every((r) => r.id.includes('-train-')), 'and never trained on');
  const file = path.join(dir, 'tasks', source.train[0]!.id, 'task.json');
  const before = readFileSync(file, 'utf8');
  const again = await openTaskSource(resolved.tasks, 'swerl-test');
  t.same(again.train.map((r) => r.id), source.train.map((r) => r.id), 'a second open (a resumed run) finds the same tasks');
  t.equal(readFileSync(file, 'utf8'), before, 'byte for byte');

  // A data-parallel follower finds rank 0's suite and leaves its files alone (no rewrite under
  // rank 0's sandboxes); where the suite is missing (another node's disk) it writes it.
  const inode = statSync(file).ino;
  const follower = await openTaskSource(resolved.tasks, 'swerl-test', { reuseGenerated: true });
  t.same(follower.evaluation.map((r) => r.id), source.evaluation.map((r) => r.id), 'the follower has the same held-out ids');
  t.equal(statSync(file).ino, inode, 'and did not rewrite the files');
  rmSync(path.join(dir, 'tasks'), { recursive: true });
  const elsewhere = await openTaskSource(resolved.tasks, 'swerl-test', { reuseGenerated: true });
  t.same(elsewhere.train.map((r) => r.id), source.train.map((r) => r.id), 'on a disk without it, it generates the same tasks');
  t.equal(readFileSync(file, 'utf8'), before);
});

t.test('tasks.generate.firstSeed: where the run\'s seeds start in each split, so two runs can draw disjoint tasks', async (t) => {
  const knobs = { train: 3, heldout: 2, functions: { min: 1, max: 2 }, lines: { min: 4, max: 20 } };
  let runs = 0;
  const open = async (generate: object) => openTaskSource(resolveTrainConfig(config(path.join(t.testdir(), `run-${runs++}`), generate)).tasks, 'swerl-test');
  const first = await open(knobs);
  const later = await open({ ...knobs, firstSeed: 3 });
  const overlap = await open({ ...knobs, firstSeed: 1 });
  const seeds = (refs: readonly { id: string }[]) => refs.map((r) => Number(r.id.split('-')[3])).sort((a, b) => a - b);
  t.same(seeds(later.train), [3, 4, 5], 'train seeds from firstSeed');
  t.same(seeds(later.evaluation), [3, 4], 'held-out seeds from firstSeed');
  t.same(seeds(first.train), [0, 1, 2], 'default 0');
  const ids = (s: typeof first) => [...s.train, ...s.evaluation].map((r) => r.id);
  t.equal(ids(later).filter((id) => ids(first).includes(id)).length, 0, 'three seeds on: no task shared');
  const shared = ids(overlap).filter((id) => ids(first).includes(id));
  t.same(seeds(shared.map((id) => ({ id }))), [1, 1, 2], 'one seed on: the seeds both runs take are the same tasks (train 1 and 2, held-out 1)');
  t.throws(
    () => resolveTrainConfig(config(path.join(t.testdir(), 'bad'), { ...knobs, firstSeed: 2 ** 31 - 2 })),
    /config\.tasks\.generate\.firstSeed \(2147483646\) leaves too few seeds: the run takes 3 .*; give an earlier firstSeed/,
  );
  t.throws(() => resolveTrainConfig(config(path.join(t.testdir(), 'neg'), { ...knobs, firstSeed: -1 })), /config\.tasks\.generate\.firstSeed/);
});

t.test('tasks.generate is checked when the config loads', async (t) => {
  const dir = path.join(t.testdir(), 'run');
  t.throws(() => resolveTrainConfig(config(dir, { train: 4, heldout: 1, kinds: ['typo'] })), /config\.tasks\.generate\.kinds/);
  t.throws(() => resolveTrainConfig(config(dir, { train: 4 })), /heldout/);
  t.throws(() => resolveTrainConfig({ ...config(dir, {}), tasks: { kind: 'swe' } }), /config\.tasks\.path is required; name a task folder suite or dataset rows, or generate tasks/);
  const placed = resolveTrainConfig(config(dir, { train: 4, heldout: 1 }, { path: 'elsewhere' }));
  t.equal(placed.tasks.kind === 'swe' && placed.tasks.path, path.resolve('elsewhere'), 'or where tasks.path says');
});

t.test('algorithm.partialCredit needs a gold patch for every training task', async (t) => {
  const dir = path.join(t.testdir(), 'run');
  const resolved = resolveTrainConfig(config(dir, { train: 3, heldout: 0, functions: { min: 1, max: 1 }, lines: { min: 4, max: 20 } }));
  const source = await openTaskSource(resolved.tasks, 'swerl-test');
  t.ok(source.train.every((ref) => ref.task?.goldPatch), 'generated tasks carry their gold patch');
  assertGoldPatches(source, 'config.algorithm.partialCredit');
  rmSync(path.join(dir, 'tasks', source.train[1]!.id, 'gold.patch'));
  const folders = resolveTrainConfig({ ...config(dir, {}), tasks: { kind: 'swe', path: path.join(dir, 'tasks') } });
  const without = await openTaskSource(folders.tasks, 'swerl-test');
  t.throws(() => assertGoldPatches(without, 'config.algorithm.partialCredit'), {
    code: 'ERR_SWERL_INVALID_ARG',
    message: new RegExp(`config\\.algorithm\\.partialCredit.*training task ${source.train[1]!.id} has none.*remove it`),
  });
});
