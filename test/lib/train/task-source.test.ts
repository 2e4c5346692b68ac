/**
 * Where a run's episodes come from: generated SWE tasks (tasks.generate) are written where the
 * config says, the same bytes on a second open (a resumed run), with the held-out split as the
 * eval tasks, never trained on.
 */
import { readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import { resolveTrainConfig } from '../../../lib/train/config.js';
import { openTaskSource } from '../../../lib/train/task-source.js';

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

t.test('tasks.generate is checked when the config loads', async (t) => {
  const dir = path.join(t.testdir(), 'run');
  t.throws(() => resolveTrainConfig(config(dir, { train: 4, heldout: 1, kinds: ['typo'] })), /config\.tasks\.generate\.kinds/);
  t.throws(() => resolveTrainConfig(config(dir, { train: 4 })), /heldout/);
  t.throws(() => resolveTrainConfig({ ...config(dir, {}), tasks: { kind: 'swe' } }), /config\.tasks\.path is required; name a task folder suite or dataset rows, or generate tasks/);
  const placed = resolveTrainConfig(config(dir, { train: 4, heldout: 1 }, { path: 'elsewhere' }));
  t.equal(placed.tasks.kind === 'swe' && placed.tasks.path, path.resolve('elsewhere'), 'or where tasks.path says');
});
