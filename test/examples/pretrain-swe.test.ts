/**
 * `npm run pretrain:swe` as a user runs it, a few steps long: the domain tokenizer, pretraining
 * of the qwen3-swe preset on the shipped config, copy probes, and the reader written as the
 * shipped one is (weights, config, tokenizer, curves and a README of the run; no optimizer
 * state). Run again with --resume on the finished run directory, it writes the same reader and
 * reports the minutes the run trained, not the few seconds of the second process.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import { NativePolicy } from '../../lib/model/native-policy.js';
import { tokenizerId } from '../../lib/model/tokenizer-id.js';
import { ROOT, runTs } from '../support/child-process.js';

const SCRIPT = path.join(ROOT, 'examples/pretrain-swe.ts');
t.setTimeout(15 * 60_000);

t.test('pretrain:swe --steps 3 writes a reader that loads with its own tokenizer; --resume reports the run\'s minutes', async (t) => {
  const root = t.testdir();
  const out = path.join(root, 'reader');
  const dir = path.join(root, 'run');
  const args = ['--out', out, '--dir', dir, '--steps', '3', '--probes', '2'];
  const first = await runTs(SCRIPT, args);
  t.equal(first.code, 0, `exits 0 (last output: ${first.output.slice(-1500)})`);
  t.match(first.output, /tokenizer: 2048 ids/, 'trains the domain tokenizer');
  t.match(first.output, /path \d+\.\d%, pathMadeUp \d+\.\d%, line \d+\.\d%, quote \d+\.\d%/, 'prints the probes');
  for (const file of ['model.safetensors', 'config.json', 'tokenizer.json', 'README.md', 'curves.svg']) t.ok(existsSync(path.join(out, file)), `writes ${file}`);
  t.notOk(existsSync(path.join(out, 'optimizer.safetensors')), 'without the optimizer state');
  t.notOk(existsSync(path.join(out, 'swerl_state.json')), 'or the trainer state');
  const readme = readFileSync(path.join(out, 'README.md'), 'utf8');
  t.match(readme, /then 3 steps, every\s+token trained: 3 of 32 repeated-span sequences/, 'the README gives the steps run (all 3 in the warm-up)');
  t.match(readme, /each step\s+8 drills, 16 repeated spans and 8 lookup sheets/, 'and what a step after the warm-up holds');
  t.match(readme, /\| line \| line K of the view, after a view_range \[K, \.\.\.\] call \| \d+\.\d%/, 'and the probe figures');

  const policy = await NativePolicy.load(out, { threads: 1 });
  t.teardown(() => policy.dispose());
  t.match(tokenizerId(policy.tokenizer), /^bpe-2048:/, 'the reader loads with its 2048-id BPE tokenizer');
  const metrics = readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  t.equal(metrics.length, 3, 'the run directory has its 3 steps');

  const again = await runTs(SCRIPT, [...args, '--resume']);
  t.equal(again.code, 0, `--resume on the finished run exits 0 (last output: ${again.output.slice(-1500)})`);
  t.equal(readFileSync(path.join(out, 'README.md'), 'utf8'), readme, "the same README: the minutes are the run's, not this process's");
});

