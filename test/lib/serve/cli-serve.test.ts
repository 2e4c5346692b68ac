// `swerl serve <model dir>` as a user runs it: it loads a Hugging Face directory (tokenizer.json
// included), prints its URL, answers, and stops cleanly on Ctrl-C.
import path from 'node:path';

import t from 'tap';

import { presetConfig } from '../../../lib/policy/model-config.js';
import { NativePolicy } from '../../../lib/policy/native-policy.js';
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
