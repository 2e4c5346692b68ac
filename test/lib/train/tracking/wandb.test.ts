/**
 * The W&B adapter. The W&B service cannot be reached from here (nor from CI), so the SDK is a
 * stand-in passed as the module loader, with @wandb/sdk 0.5's surface and habits: a default
 * export whose init(options) resolves with a run, run.log(data, step) writing _step into
 * data, run.finish(), and process.once handlers for SIGINT, SIGTERM and beforeExit installed
 * while init runs. The not-installed error is tested for real (@wandb/sdk is not a dependency).
 */
import { createRequire } from 'node:module';

import t, { type Test } from 'tap';

import { SwerlError, type SwerlErrorCode } from '../../../../lib/errors.js';
import type { StepScalars } from '../../../../lib/train/tracking/tensorboard.js';
import { openWandb, type WandbLoader } from '../../../../lib/train/tracking/wandb.js';

interface FakeRun {
  inits: Record<string, unknown>[];
  logs: { data: Record<string, unknown>; step: number | undefined }[];
  finished: number;
}

/** A loader for a stand-in SDK; `failInit` makes init reject as the SDK does without a key. */
function fakeSdk(failInit?: string): { load: WandbLoader; run: FakeRun } {
  const run: FakeRun = { inits: [], logs: [], finished: 0 };
  const sdk = {
    async init(options: Record<string, unknown>) {
      run.inits.push(options);
      await new Promise((resolve) => setImmediate(resolve));
      process.once('SIGINT', () => process.exit());
      process.once('SIGTERM', () => undefined);
      process.once('beforeExit', () => undefined);
      if (failInit) throw new Error(failInit);
      return {
        log(data: Record<string, unknown>, step?: number) {
          run.logs.push({ data: { ...data }, step });
          data._step = step;
        },
        async finish() {
          run.finished++;
        },
      };
    },
  };
  return { load: async () => ({ default: sdk }), run };
}

const entry = (step: number, scalars: Record<string, number>): StepScalars => ({ step, scalars: new Map(Object.entries(scalars)) });

async function failsWith(t: Test, promise: Promise<unknown>, code: SwerlErrorCode, ...parts: (string | RegExp)[]): Promise<void> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  if (!(error instanceof SwerlError)) {
    t.fail(`expected a SwerlError, got ${error === undefined ? 'none' : String(error)}`);
    return;
  }
  t.equal(error.code, code, 'code');
  for (const part of parts) t.match(error.message, part, `says ${part}`);
}

t.test('init gets the project, the run dir\'s name and the config; the history goes first, then each step', async (t) => {
  const { load, run } = fakeSdk();
  const config = { run: { dir: '/runs/alpha' }, seed: Math.random() };
  const history = [entry(0, { 'eval/success': 0.25 }), entry(1, {}), entry(2, { 'reward/mean': Math.random(), reward: 0.5 })];
  const sink = await openWandb({ project: 'swerl-test', entity: 'team' }, { name: 'alpha', config, history }, load);
  t.same(run.inits, [{ project: 'swerl-test', entity: 'team', name: 'alpha', config }]);
  const value = Math.random();
  sink.log(entry(3, { 'loss/entropy': value }));
  sink.log(entry(3, { 'loss/entropy': value }));
  t.same(run.logs, [
    { data: { 'eval/success': 0.25 }, step: 0 },
    { data: { 'reward/mean': history[2]!.scalars.get('reward/mean'), reward: 0.5 }, step: 2 },
    { data: { 'loss/entropy': value }, step: 3 },
    { data: { 'loss/entropy': value }, step: 3 },
  ], 'steps with no scalars are skipped; each call gets its own object (the SDK writes _step into it)');
  await sink.close();
  t.equal(run.finished, 1, 'close finishes the run');
});

t.test('a name given wins over the run dir\'s', async (t) => {
  const { load, run } = fakeSdk();
  await openWandb({ project: 'p', name: 'custom' }, { name: 'alpha', config: {}, history: [] }, load);
  t.equal(run.inits[0]!.name, 'custom');
  t.notOk('entity' in run.inits[0]!, 'no entity unless given');
});

t.test('the SDK\'s signal and exit handlers are removed, swerl\'s own stay', async (t) => {
  const ours = () => undefined;
  process.on('SIGINT', ours);
  t.teardown(() => process.removeListener('SIGINT', ours));
  const counts = () => ['SIGINT', 'SIGTERM', 'beforeExit'].map((e) => process.listenerCount(e));
  const before = counts();
  await openWandb({ project: 'p' }, { name: 'a', config: {}, history: [] }, fakeSdk().load);
  t.same(counts(), before, 'after a started run');
  t.ok(process.listeners('SIGINT').includes(ours), 'swerl\'s SIGINT handler is still there');
  await openWandb({ project: 'p' }, { name: 'a', config: {}, history: [] }, fakeSdk('no key').load).catch(() => undefined);
  t.same(counts(), before, 'after a failed start');
});

t.test('a run that cannot start is a remote error naming W&B, the project and the fixes', async (t) => {
  const { load } = fakeSdk('Cannot prompt for API key, set the WANDB_API_KEY environment variable');
  await failsWith(t, openWandb({ project: 'swerl-test' }, { name: 'a', config: {}, history: [] }, load), 'ERR_SWERL_REMOTE',
    /^Weights & Biases could not start a run in project "swerl-test": Cannot prompt for API key/, /WANDB_API_KEY/, /config\.tracking\.wandb to null/);
});

t.test('a module without init is refused, naming the field and the version to install', async (t) => {
  await failsWith(t, openWandb({ project: 'p' }, { name: 'a', config: {}, history: [] }, async () => ({ default: { log() {} } })), 'ERR_SWERL_INVALID_ARG',
    /^config\.tracking\.wandb /, /no init\(\)/, /npm install @wandb\/sdk@\^0\.5/);
});

t.test('a package missing inside the SDK is its own error, not "not installed"', async (t) => {
  const inner = Object.assign(new Error("Cannot find package 'graphql' imported from /x/node_modules/@wandb/sdk/dist/index.js"), { code: 'ERR_MODULE_NOT_FOUND' });
  const error = await openWandb({ project: 'p' }, { name: 'a', config: {}, history: [] }, async () => Promise.reject(inner)).then(() => undefined, (e: unknown) => e);
  t.equal(error, inner);
});

function sdkInstalled(): boolean {
  try {
    createRequire(import.meta.url).resolve('@wandb/sdk');
    return true;
  } catch {
    return false;
  }
}

t.test('without @wandb/sdk installed, the real import fails with the field and the fix', { skip: sdkInstalled() && '@wandb/sdk is installed here' }, async (t) => {
  await failsWith(t, openWandb({ project: 'p' }, { name: 'a', config: {}, history: [] }), 'ERR_SWERL_INVALID_ARG',
    /^config\.tracking\.wandb asks for Weights & Biases, but @wandb\/sdk is not installed/, /npm install @wandb\/sdk/, /WANDB_API_KEY/);
});
