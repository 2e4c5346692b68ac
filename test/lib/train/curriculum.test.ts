/**
 * tasks.curriculum: tiers of generated tasks written with disjoint seeds, each a pool and a dev
 * slice (never trained on, never the held-out split); the trainer draws from the current tier,
 * checks its dev slice greedily and advances, says so in the metrics and on the console, a
 * resumed run goes on in the tier it was in, and a later run can start in the tier one ended in. Bad curricula are refused when the config loads.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import { resolveTrainConfig } from '../../../lib/train/config.js';
import { Curriculum, tierOptions, tierSeeds, unsolvedPools } from '../../../lib/train/curriculum.js';
import type { TrainEvent } from '../../../lib/train/progress.js';
import { openTaskSource } from '../../../lib/train/task-source.js';
import { train } from '../../../lib/train/trainer.js';

const TIERS = [
  { name: 'easy', kinds: ['operator'], languages: ['python'], functions: { min: 1, max: 1 } },
  { name: 'medium', kinds: ['operator', 'comparison'] },
  { name: 'all' },
];

function config(dir: string, curriculum: object, extra: Record<string, unknown> = {}) {
  return {
    run: { dir, steps: 3, seed: 4, checkpointEvery: 1, keepCheckpoints: 5, progress: 'none' },
    model: { preset: 'qwen3-tiny', threads: 1 },
    optimizer: { lr: 1e-3 },
    tasks: { kind: 'swe', generate: { train: 3, heldout: 2, functions: { min: 1, max: 2 }, lines: { min: 4, max: 16 } }, curriculum, env: { prompt: 'compact', maxSteps: 2 } },
    rollout: { tasksPerStep: 2, samplesPerTask: 2, maxTurns: 2, maxTokensPerTurn: 16, promptBudget: 1024, responseBudget: 64, concurrency: 4 },
    eval: { every: 0 },
    ...extra,
  };
}

t.test('the tiers are written with disjoint seeds; the source trains on the current tier only', async (t) => {
  const dir = path.join(t.testdir(), 'run');
  const resolved = resolveTrainConfig(config(dir, { tiers: TIERS, devTasks: 2 }));
  const source = await openTaskSource(resolved.tasks, 'swerl-test');
  const c = source.curriculum!;
  t.equal(c.tiers.length, 3);
  t.same(c.tiers.map((x) => [x.train.length, x.dev.length]), [[3, 2], [3, 2], [3, 2]]);
  const ids = c.tiers.flatMap((x) => [...x.train, ...x.dev].map((r) => r.id));
  t.equal(new Set(ids).size, ids.length, 'no task in two places');
  t.ok(ids.every((id) => id.includes('-train-')), 'pools and dev slices are train-split seeds');
  t.ok(source.evaluation.every((r) => r.id.includes('-heldout-')), 'the held-out split is evaluation only');
  t.same(source.train.map((r) => r.id), c.tiers[0]!.train.map((r) => r.id), 'steps draw from the first tier');
  for (const r of c.tiers[0]!.train) {
    const meta = JSON.parse(readFileSync(path.join(dir, 'tasks', r.id, 'task.json'), 'utf8')).swe_gen;
    t.ok(meta.language === 'python' && meta.kind === 'operator', `${r.id}: the tier's knobs`);
  }
  c.resume(2);
  t.same(source.train.map((r) => r.id), c.tiers[2]!.train.map((r) => r.id), 'and from the tier it is in');
  t.same(tierSeeds(1, 10, 4), { pool: { firstSeed: 14, count: 10 }, dev: { firstSeed: 24, count: 4 } });
  t.same(tierSeeds(1, 10, 4, 1000), { pool: { firstSeed: 1014, count: 10 }, dev: { firstSeed: 1024, count: 4 } }, 'from tasks.generate.firstSeed');
});

t.test('tasks.only narrows every tier\'s pool and leaves the dev slices whole; a tier left empty is refused', async (t) => {
  const dir = path.join(t.testdir(), 'run');
  const open = (only?: string[]) => {
    const raw = config(dir, { tiers: TIERS, devTasks: 2 });
    return openTaskSource(resolveTrainConfig({ ...raw, tasks: { ...raw.tasks, ...(only ? { only } : {}) } }).tasks, 'swerl-test');
  };
  const whole = (await open()).curriculum!;
  const pools = whole.tiers.map((tier) => tier.train.map((r) => r.id));
  const devs = whole.tiers.map((tier) => tier.dev.map((r) => r.id));
  // One task of the first tier, two of the second, the third's first, and a dev task (never trained on either way).
  const narrowed = await open([pools[0]![1]!, pools[1]![0]!, pools[1]![2]!, pools[2]![0]!, devs[2]![0]!]);
  const c = narrowed.curriculum!;
  t.same(c.tiers.map((tier) => tier.train.map((r) => r.id)), [[pools[0]![1]], [pools[1]![0], pools[1]![2]], [pools[2]![0]]], 'each pool keeps the tasks named');
  t.same(c.tiers.map((tier) => tier.dev.map((r) => r.id)), devs, 'the dev slices are whole');
  t.same(narrowed.train.map((r) => r.id), [pools[0]![1]], 'steps draw from the narrowed first tier');
  await t.rejects(open([pools[0]![0]!, pools[2]![1]!]), {
    code: 'ERR_SWERL_INVALID_ARG',
    message: /config.tasks.only leaves tier "medium" of config.tasks.curriculum no task to train on \(its 3 pool tasks are all left out\); name at least one of its pool tasks, or drop the tier/,
  });
});

t.test('unsolvedPools: each tier\'s pool less the tasks every sample of which resolved; a tier solved whole stays whole', async (t) => {
  const episode = (taskId: string, reward: number) => ({ taskId, reward });
  const episodes = [
    episode('a', 1), episode('a', 1), // solved every time: left out
    episode('b', 1), episode('b', 0), // mixed: kept
    episode('c', 1), episode('c', 1), // the second tier's only task, solved every time: its tier keeps it
    episode('d', 0), episode('d', 0), // never solved: kept (a T=1 group may still mix)
    episode('f', 1), // one sample, resolved: left out
    episode('x', 1), // not in a pool: ignored
  ];
  t.same(unsolvedPools([['a', 'b'], ['c'], ['d', 'e', 'f']], episodes), ['b', 'c', 'd', 'e'], 'e was never sampled and stays');
  t.same(unsolvedPools([['a', 'b']], episodes.map((e) => ({ ...e, reward: 0.5 }))), ['a', 'b'], 'a partial reward is not resolved');
  t.same(unsolvedPools([['a'], ['c']], []), ['a', 'c'], 'nothing sampled: the pools whole');
});

t.test('the advance rule', async (t) => {
  const tier = (name: string) => ({ name, train: [], dev: [] });
  const c = new Curriculum([tier('a'), tier('b')], { tiers: [], advanceAt: 0.5, devTasks: 2, checkEvery: 2, placement: false });
  t.notOk(c.checks(1));
  t.ok(c.checks(2));
  t.notOk(c.observe(0.49), 'below the threshold: stays');
  t.equal(c.current.name, 'a');
  t.ok(c.observe(0.5), 'at it: advances');
  t.equal(c.current.name, 'b');
  t.ok(c.last);
  t.notOk(c.checks(2), 'the last tier is never checked');
  t.notOk(c.observe(1));
  t.throws(() => c.resume(2), /2 is not a tier of this run \(0..1\)/);
});

t.test('a run advances at its checks, says so, and resumes in its tier', async (t) => {
  const dir = path.join(t.testdir(), 'run');
  const events: TrainEvent[] = [];
  // advanceAt 0: every check advances (a fixed schedule), so a model that solves nothing still moves.
  const curriculum = { tiers: TIERS, devTasks: 2, advanceAt: 0, checkEvery: 1 };
  const first = await train(config(dir, curriculum, { run: { dir, steps: 2, seed: 4, checkpointEvery: 1, keepCheckpoints: 5, progress: 'none' } }), { onEvent: (e) => events.push(e) });
  t.equal(first.steps, 2);
  t.equal(first.curriculumTier, 'all', 'the summary names the tier it ended in');
  const rows = readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  t.same(rows.map((r) => r.curriculum.name), ['easy', 'medium'], 'the tier each step trained on');
  t.same(rows.map((r) => r.curriculum.advancedTo), ['medium', 'all']);
  t.ok(rows.every((r) => typeof r.curriculum.dev === 'number'), 'with the dev rate that decided it');
  t.equal(events.filter((e) => e.type === 'note' && /curriculum: the dev slice of tier "easy"/.test(e.message)).length, 1, 'said on the console');
  const trajectories = rows.length;
  t.ok(trajectories > 0);

  const resumed = await train(config(dir, curriculum, { run: { dir, steps: 3, seed: 4, checkpointEvery: 1, keepCheckpoints: 5, progress: 'none', resume: true } }));
  t.equal(resumed.steps, 3);
  const after = readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  t.equal(after.at(-1).curriculum.name, 'all', 'the resumed run trains in the tier the first one reached');
  t.equal(after.at(-1).curriculum.dev, undefined, 'the last tier is not checked');

  // A later phase starts where this one got to, and places itself before its first step
  // (advanceAt 0: every check passes, so the placement checks "medium" and moves on).
  const next = path.join(t.testdir(), 'next');
  const notes: TrainEvent[] = [];
  const later = await train(config(next, { ...curriculum, checkEvery: 100, startTier: 'medium', placement: true }, { run: { dir: next, steps: 1, seed: 4, progress: 'none' } }), { onEvent: (e) => notes.push(e) });
  const rows2 = readFileSync(path.join(next, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  t.same(rows2[0].curriculum.placement.map((c: { tier: string }) => c.tier), ['medium'], 'the placement starts at startTier, not the first tier');
  t.type(rows2[0].curriculum.placement[0].dev, 'number');
  t.equal(rows2[0].curriculum.name, 'all', 'and the first step trains where it placed the run');
  t.equal(later.curriculumTier, 'all');
  t.ok(notes.some((e) => e.type === 'note' && /curriculum placement: the dev slice of tier "medium"/.test(e.message)), 'said on the console');
});

t.test('bad curricula are refused when the config loads, by field', async (t) => {
  const dir = path.join(t.testdir(), 'run');
  const load = (curriculum: object, tasks: Record<string, unknown> = {}) => () => resolveTrainConfig({ ...config(dir, curriculum), tasks: { ...config(dir, curriculum).tasks, ...tasks } });
  t.throws(load({ tiers: [{ name: 'x', kinds: ['typo'] }] }), { code: 'ERR_SWERL_INVALID_ARG', message: /config.tasks.curriculum.tiers\[0\].kinds names "typo", which is not a bug kind; use some of operator/ });
  t.throws(load({ tiers: [{ name: 'x', languages: ['rust'] }] }), /tiers\[0\].languages names "rust"/);
  t.throws(load({ tiers: [{ name: 'x' }, { name: 'x' }] }), /tiers\[1\].name repeats "x"/);
  t.throws(load({ tiers: [{ name: 'x', functions: { min: 3, max: 2 } }] }), /tiers\[0\].functions has min 3 above max 2/);
  t.throws(load({ tiers: [] }), /config.tasks.curriculum.tiers must NOT have fewer than 1 items/);
  t.throws(load({ tiers: [{ name: 'x' }], advanceAt: 2 }), /config.tasks.curriculum.advanceAt must be <= 1/);
  t.throws(load({ tiers: [{ name: 'x' }], tier: 1 }), /config.tasks.curriculum.tier is not a known option/);
  t.throws(load({ tiers: [{ name: 'x' }, { name: 'y' }], startTier: 'z' }), { code: 'ERR_SWERL_INVALID_ARG', message: /config.tasks.curriculum.startTier names "z", which is not one of its tiers; use one of x, y/ });
  t.throws(load({ tiers: [{ name: 'x' }] }, { generate: undefined, path: dir }), /config.tasks.curriculum needs generated tasks/);
  t.same(tierOptions({ tiers: [{ name: 'a', kinds: ['operator'] }], advanceAt: 0.5, devTasks: 1, checkEvery: 1, placement: false }, { lines: { min: 4, max: 9 } })[0]!.lines, { min: 4, max: 9 }, 'a tier keeps the generate knobs it does not set');
});
