/**
 * The tracker as the trainer uses it: options, a fresh run, a resumed one, W&B beside
 * TensorBoard (W&B through a stand-in loader: the service cannot be reached from here).
 */
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

import t, { type Test } from 'tap';

import { SwerlError } from '../../../../lib/errors.js';
import { openTracker, parseTrackingOptions, type TrackingOptions } from '../../../../lib/train/tracking/index.js';
import { scalarTags } from '../../../../lib/train/tracking/metric-names.js';
import { readEvents, type DecodedEvent } from './events-reader.js';

const r = () => (Math.random() - 0.3) * 100;

/** A metrics row of swerl's shape with fresh values. */
function row(step: number): Record<string, unknown> {
  return {
    step,
    reward: { mean: r(), std: r(), shapedMean: r() },
    loss: { value: r(), entropy: r(), approxKl: r(), clipFracLow: r(), clipFracHigh: r(), gradNorm: r(), lr: r(), ratioMax: r() },
    length: { responseMean: r(), responseMax: r(), promptMean: r() },
    terminations: { submitted: r() },
    warning: 'text is skipped',
  };
}

const options = (overrides: Partial<TrackingOptions> = {}): TrackingOptions => ({ ...parseTrackingOptions({}, 'config.tracking'), ...overrides });

async function readRun(runDir: string): Promise<DecodedEvent[]> {
  const dir = path.join(runDir, 'tensorboard');
  const files = (await fs.readdir(dir)).filter((name) => name.includes('tfevents'));
  if (files.length !== 1) throw new Error(`expected one events file, found ${files.join(', ')}`);
  const { events, tornBytes } = readEvents(await fs.readFile(path.join(dir, files[0]!)));
  if (tornBytes) throw new Error(`${tornBytes} torn bytes`);
  return events;
}

/** The events after the file version hold exactly these rows' tags (verl's and TRL's names included). */
function holdsRows(t: Test, events: DecodedEvent[], rows: Record<string, unknown>[]): void {
  t.equal(events[0]!.fileVersion, 'brain.Event:2');
  t.same(events.slice(1).map((e) => e.step), rows.map((row) => row.step), 'each step once, in order');
  rows.forEach((row, i) => {
    const expected = [...scalarTags(row, ['verl', 'trl'])].map(([tag, v]) => [tag, Math.fround(v)]);
    t.same([...events[i + 1]!.scalars!].sort(), expected.sort(), `step ${row.step}'s tags and values`);
  });
}

t.test('options: TensorBoard and both alias sets by default, W&B when a project is named', async (t) => {
  t.same(parseTrackingOptions(undefined, 'config.tracking'), { tensorboard: true, aliases: ['verl', 'trl'], wandb: null });
  t.same(parseTrackingOptions({ tensorboard: false, aliases: [], wandb: { project: 'p', entity: 'e', name: 'n' } }, 'config.tracking'),
    { tensorboard: false, aliases: [], wandb: { project: 'p', entity: 'e', name: 'n' } });
  const refusals: [unknown, string][] = [
    [{ wandb: {} }, 'config.tracking.wandb.project is required'],
    [{ wandb: { project: '' } }, 'config.tracking.wandb.project '],
    [{ wandb: { project: 'p', tags: ['x'] } }, 'config.tracking.wandb.tags is not a known option'],
    [{ aliases: ['mlflow'] }, 'config.tracking.aliases.0 must be one of "verl", "trl"'],
    [{ tensorBoard: true }, 'config.tracking.tensorBoard is not a known option'],
  ];
  for (const [value, message] of refusals) {
    let error: unknown;
    try {
      parseTrackingOptions(value, 'config.tracking');
    } catch (e) {
      error = e;
    }
    t.ok(error instanceof SwerlError && error.code === 'ERR_SWERL_INVALID_ARG' && error.message.startsWith(message), `${message}: ${error}`);
  }
});

t.test('a fresh run: every logged row lands in <run dir>/tensorboard, readable as each step completes', async (t) => {
  const runDir = t.testdir();
  const tracker = await openTracker(runDir, options(), { config: {} });
  const rows = [{ step: 0, eval: { success: Math.random() } }, ...[1, 2, 3, 4].map(row)];
  for (const [i, metrics] of rows.entries()) {
    await tracker.log(metrics.step as number, metrics);
    holdsRows(t, await readRun(runDir), rows.slice(0, i + 1));
  }
  await tracker.close();
});

t.test('a resumed run rewrites the kept rows, so a redone step shows once, with its new values', async (t) => {
  const runDir = t.testdir();
  const first = await openTracker(runDir, options(), { config: {} });
  const firstRows = [1, 2, 3, 4, 5, 6, 7].map(row);
  for (const metrics of firstRows) await first.log(metrics.step as number, metrics);
  // Killed without close(), an hour ago (so its file's name differs from the resumed one's);
  // the last checkpoint was step 4, so metrics.jsonl keeps steps 1-4.
  const dir = path.join(runDir, 'tensorboard');
  const [name] = await fs.readdir(dir);
  await fs.rename(path.join(dir, name!), path.join(dir, name!.replace(/tfevents\.(\d+)/, (_, s: string) => `tfevents.${Number(s) - 3600}`)));
  const kept = firstRows.slice(0, 4);
  const resumed = await openTracker(runDir, options(), { config: {}, rows: kept });
  holdsRows(t, await readRun(runDir), kept);
  const redone = [5, 6, 7, 8].map(row);
  for (const metrics of redone) await resumed.log(metrics.step as number, metrics);
  await resumed.close();
  await first.close();
  holdsRows(t, await readRun(runDir), [...kept, ...redone]);
});

t.test('W&B gets the same tags as TensorBoard: the kept rows first, then each step; close finishes it', async (t) => {
  const runDir = path.join(t.testdir(), 'run-7');
  const logged: { step: number; data: Record<string, unknown> }[] = [];
  const inits: Record<string, unknown>[] = [];
  let finished = 0;
  const sdk = {
    async init(init: Record<string, unknown>) {
      inits.push(init);
      return { log: (data: Record<string, unknown>, step: number) => logged.push({ step, data }), finish: async () => void finished++ };
    },
  };
  const config = { seed: Math.random() };
  const kept = [row(1), row(2)];
  const tracker = await openTracker(runDir, options({ wandb: { project: 'swerl' } }), { config, rows: kept }, async () => ({ default: sdk }));
  t.same(inits, [{ project: 'swerl', name: 'run-7', config }], 'the run is named after the run dir');
  const next = row(3);
  await tracker.log(3, next);
  await tracker.close();
  await tracker.close();
  t.equal(finished, 1, 'finished once');
  t.same(logged.map((l) => l.step), [1, 2, 3]);
  [...kept, next].forEach((metrics, i) => t.same(logged[i]!.data, Object.fromEntries(scalarTags(metrics, ['verl', 'trl'])), `step ${metrics.step}`));
  holdsRows(t, await readRun(runDir), [...kept, next]);
});

t.test('tensorboard: false writes no events; aliases: [] logs swerl\'s names only', async (t) => {
  const runDir = t.testdir();
  const logged: Record<string, unknown>[] = [];
  const sdk = { init: async () => ({ log: (data: Record<string, unknown>) => logged.push(data), finish: async () => undefined }) };
  const tracker = await openTracker(runDir, options({ tensorboard: false, aliases: [], wandb: { project: 'p' } }), { config: {} }, async () => sdk);
  const metrics = row(1);
  await tracker.log(1, metrics);
  await tracker.close();
  t.notOk(existsSync(path.join(runDir, 'tensorboard')), 'no tensorboard folder');
  t.same(logged, [Object.fromEntries(scalarTags(metrics, []))]);
  t.notOk('critic/score/mean' in logged[0]!);
});

t.test('W&B asked for but not installed: refused before any file is written', async (t) => {
  const runDir = t.testdir();
  const error = await openTracker(runDir, options({ wandb: { project: 'p' } }), { config: {} }).then(() => undefined, (e: unknown) => e);
  t.ok(error instanceof SwerlError && error.code === 'ERR_SWERL_INVALID_ARG', String(error));
  t.match((error as Error).message, /^config\.tracking\.wandb .*npm install @wandb\/sdk.*WANDB_API_KEY/);
  t.notOk(existsSync(path.join(runDir, 'tensorboard')));
});

t.test('a closed tracker refuses to log', async (t) => {
  const tracker = await openTracker(t.testdir(), options(), { config: {} });
  await tracker.close();
  const error = await tracker.log(1, row(1)).then(() => undefined, (e: unknown) => e);
  t.ok(error instanceof SwerlError && error.code === 'ERR_SWERL_DISPOSED', String(error));
});
