// `swerl serve <model dir>` as a user runs it: it loads a Hugging Face directory (tokenizer.json
// included), prints its URL, answers, and stops cleanly on Ctrl-C.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import t from 'tap';

import { presetConfig } from '../../../lib/policy/model-config.js';
import { NativePolicy } from '../../../lib/policy/native-policy.js';
import { typescriptExecArgv } from '../../support/child-process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CLI = path.join(ROOT, 'lib/cli.ts');

t.test('swerl serve: loads a model directory, serves, stops on SIGINT', async (t) => {
  const dir = path.join(t.testdir(), 'tiny-model');
  const policy = await NativePolicy.load(presetConfig('qwen3-tiny', 265), { seed: 2 });
  await policy.save(dir);
  policy.dispose();

  const { NODE_OPTIONS: _ignored, ...env } = process.env;
  const child = spawn(process.execPath, [...typescriptExecArgv(), CLI, 'serve', dir, '--port', '0', '--served-model-name', 'tiny'], { env, cwd: ROOT });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const m = /at (http:\/\/[^\s]+)\/v1/.exec(stdout);
      if (m) resolve(m[1]!);
    });
    child.on('close', () => reject(new Error(`swerl serve exited: ${stderr}`)));
  });
  t.match(stdout, /swerl serve: tiny at http:\/\/127\.0\.0\.1:\d+\/v1/);
  const models = (await (await fetch(`${url}/v1/models`)).json()) as { data: { id: string }[] };
  t.same(models.data.map((m) => m.id), ['tiny']);
  const out = (await (await fetch(`${url}/v1/completions`, { method: 'POST', body: JSON.stringify({ model: 'tiny', prompt: 'hi', max_tokens: 4 }) })).json()) as { choices: { token_ids: number[] }[] };
  t.ok(out.choices[0]!.token_ids.length >= 1, 'a completion');
  child.kill('SIGINT');
  t.equal(await exited, 0, stderr);
  t.match(stdout, /swerl serve: stopped/);
});

t.test('swerl serve: a missing directory is a clear error', async (t) => {
  const { NODE_OPTIONS: _ignored, ...env } = process.env;
  const child = spawn(process.execPath, [...typescriptExecArgv(), CLI, 'serve', '/nonexistent/model'], { env, cwd: ROOT });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  t.not(code, 0);
  t.match(stderr, /nonexistent\/model/);
});
