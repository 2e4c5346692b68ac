import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';

import t from 'tap';

import type { Trajectory } from '../../../lib/agent/trajectory.js';
import { RunDirectory } from '../../../lib/train/run-dir.js';

/** Every file under dir, relative, sorted. */
async function files(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out.push(path.relative(dir, path.join(entry.parentPath, entry.name)));
  }
  return out.sort();
}

async function tmpFiles(dir: string): Promise<string[]> {
  return (await files(dir)).filter((f) => /\.tmp/.test(f));
}

/** A checkpoint folder as NativePolicy.save leaves it (complete: swerl_state.json written last). */
async function checkpoint(dir: RunDirectory, step: number, complete = true): Promise<void> {
  const folder = dir.checkpointDir(step);
  await fs.mkdir(folder, { recursive: true });
  await fs.writeFile(path.join(folder, 'model.safetensors'), 'weights');
  if (complete) await fs.writeFile(path.join(folder, 'swerl_state.json'), JSON.stringify({ step }));
}

function trajectory(i: number): Trajectory {
  return {
    taskId: `task-${i}`,
    group: i,
    sample: 0,
    tokens: Int32Array.from([257, 10, 20, 258]),
    mask: Uint8Array.from([0, 1, 1, 0]),
    logprobs: Float32Array.from([0, -0.1234567891, -2, 0]),
    promptTokens: 1,
    responseTokens: 3,
    turns: [],
    termination: 'submitted',
    reward: i % 2,
    rewardReason: 'r',
    attempts: 1,
    weightVersion: 3,
    timings: { totalMs: 1, generateMs: 0, envMs: 0, rewardMs: 0 },
  };
}

t.test('create writes the config and refuses an existing run without resume', async (t) => {
  const root = t.testdir();
  const dir = new RunDirectory(path.join(root, 'run'));
  await dir.create({ a: 1 }, false);
  t.same(JSON.parse(await fs.readFile(path.join(dir.dir, 'config.json'), 'utf8')), { a: 1 });
  t.ok(existsSync(dir.checkpoints) && existsSync(dir.trajectories));
  // Created but nothing run yet: creating again is fine.
  await dir.create({ a: 2 }, false);
  await dir.writeMetrics([{ step: 1 }]);
  await t.rejects(dir.create({ a: 3 }, false), { code: 'ERR_SWERL_INVALID_ARG', message: /config\.run\.resume: true/ });
  t.same(JSON.parse(await fs.readFile(path.join(dir.dir, 'config.json'), 'utf8')), { a: 2 }, 'the refused config is not written');
  await dir.create({ a: 4 }, true);
  t.same(JSON.parse(await fs.readFile(path.join(dir.dir, 'config.json'), 'utf8')), { a: 4 }, 'resume rewrites it');
  t.same(await dir.readMetrics(), [{ step: 1 }], 'resume keeps the metrics');
  t.same(await tmpFiles(root), []);
});

t.test('metrics: written whole, read back, truncated to a step', async (t) => {
  const root = t.testdir();
  const dir = new RunDirectory(root);
  await dir.create({}, false);
  t.same(await dir.readMetrics(), []);
  const rows = [{ step: 0, eval: { success: 0.5 } }, { step: 1, reward: 0.1 }, { step: 2, reward: 0.2 }, { step: 3, reward: 0.3 }, { step: 4 }];
  await dir.writeMetrics(rows);
  t.same(await dir.readMetrics(), rows);
  t.equal((await fs.readFile(dir.metricsFile, 'utf8')).split('\n').length, 6, 'one line per row');

  for (const step of [1, 2, 3, 4, 5]) await dir.writeTrajectories(step, [trajectory(step)], () => ({}));
  await fs.writeFile(path.join(dir.trajectories, 'step-4.jsonl.gz.123.456.tmp'), 'torn');
  const kept = await dir.truncateTo(2);
  t.same(kept, rows.slice(0, 3), 'rows of steps <= 2');
  t.same(await dir.readMetrics(), rows.slice(0, 3), 'and the file says so');
  t.same(await fs.readdir(dir.trajectories).then((n) => n.sort()), ['step-1.jsonl.gz', 'step-2.jsonl.gz'], 'later trajectory files (and leftovers) are deleted');
  t.same(await dir.truncateTo(0), [rows[0]]);
  t.same(await fs.readdir(dir.trajectories), []);
  t.same(await tmpFiles(root), []);
});

t.test('a torn or blank metrics line is skipped', async (t) => {
  const dir = new RunDirectory(t.testdir());
  await dir.create({}, false);
  await fs.writeFile(dir.metricsFile, '{"step":1}\n\n{"step":2}\n{"step":');
  t.same(await dir.readMetrics(), [{ step: 1 }, { step: 2 }]);
});

t.test('trajectories: gzip JSON lines with plain arrays and extra fields', async (t) => {
  const root = t.testdir();
  const dir = new RunDirectory(root);
  await dir.create({}, false);
  await dir.writeTrajectories(7, [trajectory(0), trajectory(1)], (traj, i) => ({ advantage: i === 0 ? -1 : 1, kept: traj.group === 1 }));
  const lines = gunzipSync(await fs.readFile(path.join(dir.trajectories, 'step-7.jsonl.gz'))).toString('utf8').split('\n');
  t.equal(lines.at(-1), '', 'ends with a newline');
  const rows = lines.slice(0, -1).map((l) => JSON.parse(l) as Record<string, unknown>);
  t.equal(rows.length, 2);
  t.same(rows[0]!.tokens, [257, 10, 20, 258]);
  t.same(rows[0]!.mask, [0, 1, 1, 0]);
  t.same(rows[0]!.logprobs, [0, -0.123457, -2, 0], 'logprobs rounded to 1e-6');
  t.same([rows[0]!.advantage, rows[1]!.advantage, rows[0]!.kept, rows[1]!.kept], [-1, 1, false, true]);
  t.equal(rows[1]!.taskId, 'task-1');
  t.equal(rows[1]!.weightVersion, 3);
  t.same(await dir.readTrajectories(7), rows, 'readTrajectories reads back exactly what was written');
  await t.rejects(dir.readTrajectories(8), { code: 'ENOENT' });
  t.same(await tmpFiles(root), []);
});

t.test('checkpoints: complete ones listed, temporary folders and old ones pruned', async (t) => {
  const root = t.testdir();
  const dir = new RunDirectory(root);
  t.same(await dir.checkpointSteps(), [], 'no checkpoints folder yet');
  await dir.create({}, false);
  for (const step of [10, 0, 2, 5]) await checkpoint(dir, step);
  await checkpoint(dir, 7, false); // a save killed before its state was written
  await fs.mkdir(path.join(dir.checkpoints, 'step-12.tmp-123-456-abc'));
  await fs.writeFile(path.join(dir.checkpoints, 'step-12.tmp-123-456-abc', 'model.safetensors'), 'half');
  await fs.mkdir(path.join(dir.checkpoints, 'notes'));
  await fs.writeFile(path.join(dir.checkpoints, 'notes', 'swerl_state.json'), '{}');
  t.same(await dir.checkpointSteps(), [0, 2, 5, 10], 'ascending, numerically; folders without swerl_state.json are not checkpoints');
  t.equal(dir.checkpointDir(5), path.join(root, 'checkpoints', 'step-5'));

  await dir.pruneCheckpoints(2);
  t.same((await fs.readdir(dir.checkpoints)).sort(), ['step-10', 'step-5', 'step-7'], 'the newest 2 kept; temporary and stray folders removed');
  t.same(await dir.checkpointSteps(), [5, 10]);
  t.ok(existsSync(path.join(dir.checkpointDir(10), 'model.safetensors')), 'kept checkpoints are intact');

  await dir.pruneCheckpoints(5);
  t.same(await dir.checkpointSteps(), [5, 10], 'nothing to prune');
  await dir.pruneCheckpoints(1);
  t.same(await dir.checkpointSteps(), [10]);
  await new RunDirectory(path.join(root, 'elsewhere')).pruneCheckpoints(1); // no folder: nothing to do
});

t.test('summary and other files are written atomically', async (t) => {
  const root = t.testdir();
  const dir = new RunDirectory(root);
  await dir.create({}, false);
  await dir.writeSummary({ steps: 3 });
  await dir.writeFile('curves.svg', '<svg/>');
  await dir.writeFile('curves.svg', '<svg>2</svg>');
  t.same(JSON.parse(await fs.readFile(path.join(root, 'summary.json'), 'utf8')), { steps: 3 });
  t.equal(await fs.readFile(path.join(root, 'curves.svg'), 'utf8'), '<svg>2</svg>');
  t.same(await files(root), ['config.json', 'curves.svg', 'summary.json']);
});
