// `swerl serve <model dir>` as a user runs it: it loads a Hugging Face directory (tokenizer.json
// included), prints its URL, answers, and stops cleanly on Ctrl-C; SWERL_API_KEY guards it and
// weight updates come from the model directory's parent folder unless --weights-root says.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import t from 'tap';

import { presetConfig } from '../../../lib/model/model-config.js';
import { NativePolicy } from '../../../lib/model/native-policy.js';
import { CLI, runSwerl, spawnTs, waitForExit, waitForLine } from '../../support/child-process.js';

t.test('swerl serve: loads a model directory, serves, stops on SIGINT', async (t) => {
  const dir = path.join(t.testdir(), 'tiny-model');
  const policy = await NativePolicy.load(presetConfig('qwen3-tiny', 265), { seed: 2 });
  await policy.save(dir);
  policy.dispose();

  const child = spawnTs(CLI, {}, ['serve', dir, '--port', '0', '--served-model-name', 'tiny']);
  const url = (await waitForLine(child, /swerl serve: tiny at (http:\/\/127\.0\.0\.1:\d+)\/v1/))[1]!;
  const models = (await (await fetch(`${url}/v1/models`)).json()) as { data: { id: string }[] };
  t.same(models.data.map((m) => m.id), ['tiny']);
  const out = (await (await fetch(`${url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'tiny', prompt: 'hi', max_tokens: 4 }) })).json()) as { choices: { token_ids: number[] }[] };
  t.ok(out.choices[0]!.token_ids.length >= 1, 'a completion');
  const stopped = waitForLine(child, /swerl serve: stopped/);
  child.kill('SIGINT');
  await stopped;
  t.same(await waitForExit(child), { code: 0, signal: null }, 'exits 0 on SIGINT');
});

t.test('swerl serve: a missing directory is a clear error', async (t) => {
  const r = await runSwerl(['serve', '/nonexistent/model']);
  t.not(r.code, 0);
  t.match(r.stderr, /nonexistent\/model/);
});

t.test('swerl serve: SWERL_API_KEY, and weights from the model directory\'s parent by default', async (t) => {
  const parent = path.join(t.testdir(), 'models');
  const dir = path.join(parent, 'tiny-model');
  const policy = await NativePolicy.load(presetConfig('qwen3-tiny', 265), { seed: 2 });
  await policy.save(dir);
  await policy.save(path.join(parent, 'step-1'));
  const elsewhere = mkdtempSync(path.join(os.tmpdir(), 'swerl-elsewhere-'));
  t.teardown(() => rmSync(elsewhere, { recursive: true, force: true }));
  await policy.save(elsewhere);
  policy.dispose();

  const child = spawnTs(CLI, { SWERL_API_KEY: 'sk-env' }, ['serve', dir, '--port', '0']);
  t.teardown(() => void child.kill('SIGKILL'));
  const url = (await waitForLine(child, /swerl serve: tiny-model at (http:\/\/127\.0\.0\.1:\d+)\/v1/))[1]!;
  const update = (modelPath: string, key = 'sk-env') =>
    fetch(`${url}/update_weights_from_disk`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify({ model_path: modelPath }) });
  t.equal((await update(path.join(parent, 'step-1'), 'sk-other')).status, 401, 'the key from SWERL_API_KEY');
  t.equal((await fetch(`${url}/health`)).status, 200, '/health open');
  t.equal((await update(path.join(parent, 'step-1'))).status, 200, 'a sibling checkpoint loads');
  const outside = await update(elsewhere);
  t.equal(outside.status, 400, 'one outside the parent folder does not');
  t.match(await outside.json(), { message: `is outside ${realpathSync(parent)}, the only folder` });
  child.kill('SIGINT');
  await waitForExit(child);

  const empty = await runSwerl(['serve', dir, '--port', '0', '--api-key', '']);
  t.not(empty.code, 0);
  t.match(empty.stderr, /serve\.apiKey is empty/, 'an empty --api-key is refused, not taken as none');
});
