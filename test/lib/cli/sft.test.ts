/**
 * `swerl sft` as a person meets it: its help, the data named before the config, a run of a
 * couple of steps into a temporary folder and its resume, --print-config, the refusals (exit
 * 2), and Ctrl-C on the real process (exit 130, the finished steps kept).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import t from 'tap';

import { splitSftArguments } from '../../../lib/cli/sft.js';
import { CLI, ROOT, spawnTs, waitForExit } from '../../support/child-process.js';
import { smallCorpus } from '../train/sft/fixtures.js';
import { cliInProcess as cli } from '../../support/cli-in-process.js';

const EXAMPLE = path.join(ROOT, 'examples', 'sft-tiny.json');


function corpus(dir: string): string {
  const file = path.join(dir, 'corpus.jsonl');
  writeFileSync(file, smallCorpus().map((c) => JSON.stringify(c)).join('\n'));
  return file;
}

const steps = (dir: string) => readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { step: number }).step);

t.test('--help, and the words after swerl sft', async (t) => {
  for (const flag of ['--help', '-h']) {
    const r = await cli('sft', flag);
    t.equal(r.code, 0);
    t.match(r.stdout, /Usage: swerl sft \[options\] <data\.\.\.> <config> \[overrides\.\.\.\][\s\S]*--resume[\s\S]*--steps <n>[\s\S]*--print-config/);
  }
  t.match((await cli('--help')).stdout, /sft \[options\] <data-and-config\.\.\.>\s+supervised fine-tuning/, 'listed among the verbs');
  t.same(splitSftArguments(['a.jsonl', 'runs/b', 'sft.maxLength=64', 'c.yaml', '~eval.every']), { data: ['a.jsonl', 'runs/b'], config: 'c.yaml', overrides: ['sft.maxLength=64', '~eval.every'] });
  t.same(splitSftArguments(['c.json']), { data: [], config: 'c.json', overrides: [] });
});

t.test('a run of two steps into a temporary folder, then --resume to three', async (t) => {
  const root = t.testdir();
  const data = corpus(root);
  const dir = path.join(root, 'run');
  const words = [data, EXAMPLE, '--dir', dir, 'sft.sequencesPerStep=2', 'sft.heldOutFraction=0', 'model.threads=1', 'run.progress=none'];
  const first = await cli('sft', ...words, '--steps', '2');
  t.equal(first.code, 0, first.stderr);
  t.match(first.stdout, /^done: 2 step\(s\) in [\d.]+ s, run dir .*run\nlast step: nll [\d.]+\nlast checkpoint: .*step-2\n$/);
  t.same(steps(dir), [1, 2]);
  t.same(JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8')).sft.data, [data], 'the data named replaced the example\'s');
  const again = await cli('sft', ...words, '--steps', '3', '--resume');
  t.equal(again.code, 0, again.stderr);
  t.same(steps(dir), [1, 2, 3]);
});

t.test('--print-config, and refusals with exit 2', async (t) => {
  const printed = await cli('sft', 'chat.jsonl', EXAMPLE, '--print-config');
  t.equal(printed.code, 0);
  const resolved = JSON.parse(printed.stdout) as { sft: { data: string[]; sequencesPerStep: number } };
  t.same(resolved.sft.data, [path.resolve('chat.jsonl')], 'a path typed here is taken from the working directory');
  t.equal(resolved.sft.sequencesPerStep, 4);
  const own = JSON.parse((await cli('sft', EXAMPLE, '--print-config')).stdout) as { sft: { data: string[] } };
  t.same(own.sft.data, [path.join(ROOT, 'examples', 'sft-tiny.jsonl')], 'without data named, the config\'s, from its folder');
  const viaTrain = await cli('train', EXAMPLE, '--print-config');
  t.equal(viaTrain.code, 0, 'swerl train --print-config prints an SFT config too (train() runs it)');
  t.same(JSON.parse(viaTrain.stdout), own);

  const noData = await cli('sft', path.join(ROOT, 'examples', 'frozenlake.json'));
  t.equal(noData.code, 2);
  t.match(noData.stderr, /has no data: none was named and .*frozenlake\.json has no sft\.data; name the data before the config/);
  const typo = await cli('sft', 'chat.jsonl', EXAMPLE, 'sft.sequencesPerStp=2', '--print-config');
  t.equal(typo.code, 2);
  t.match(typo.stderr, /config\.sft\.sequencesPerStp is not a known option \(did you mean sequencesPerStep\?\)/);
  const missing = await cli('sft', path.join(ROOT, 'nope.jsonl'), EXAMPLE, '--dir', path.join(t.testdir(), 'run'));
  t.equal(missing.code, 2);
  t.match(missing.stderr, /sft\.data\[0\] names .*nope\.jsonl, which does not exist/);
  const none = await cli('sft');
  t.equal(none.code, 2);
  t.match(none.stderr, /missing required argument/);
});

t.test('Ctrl-C on the real process: exit 130, finished steps kept', async (t) => {
  const root = t.testdir();
  const dir = path.join(root, 'run');
  const child = spawnTs(CLI, {}, ['sft', corpus(root), EXAMPLE, '--dir', dir, '--steps', '100000', 'sft.sequencesPerStep=2', 'model.threads=1', 'run.checkpointEvery=1']);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const deadline = Date.now() + 60_000;
  // metrics.jsonl has a row once the first step is done (checkpoints come and go: only the last two are kept).
  const metrics = path.join(dir, 'metrics.jsonl');
  while (!(existsSync(metrics) && readFileSync(metrics, 'utf8').length > 0) && Date.now() < deadline && child.exitCode === null) await sleep(100);
  child.kill('SIGINT');
  const exit = await waitForExit(child);
  t.equal(exit.code, 130, `exit 130; stderr: ${stderr.slice(-500)}`);
  t.match(stderr, /stopping after the running step/);
  const summary = JSON.parse(readFileSync(path.join(dir, 'summary.json'), 'utf8')) as { stopped: boolean; steps: number };
  t.equal(summary.stopped, true);
  t.ok(summary.steps >= 1, `${summary.steps} step(s) kept`);
  t.same(steps(dir), Array.from({ length: summary.steps }, (_, i) => i + 1));
});
