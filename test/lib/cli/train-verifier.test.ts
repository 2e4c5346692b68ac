/** `swerl train-verifier` as a person meets it: its help, a run end to end on tiny data (the table, the files), and refusals with exit 2. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

import t from 'tap';

import { ROOT } from '../../support/child-process.js';
import { cliInProcess as cli } from '../../support/cli-in-process.js';
import { jsonl, savedTrajectory, separableCandidates } from '../train/verifier/fixtures.js';

t.test('--help, and listed among the verbs', async (t) => {
  const help = await cli('train-verifier', '--help');
  t.equal(help.code, 0);
  t.match(help.stdout, /Usage: swerl train-verifier \[options\][\s\S]*--data <path\.\.\.>[\s\S]*--out <dir>[\s\S]*--epochs <n>[\s\S]*--held-out <fraction>/);
  t.match((await cli('--help')).stdout, /train-verifier \[options\]\s+fine-tune a YES\/NO judge/);
});

t.test('a run end to end: the table, the judge and its metrics', async (t) => {
  const dir = t.testdir();
  const data = path.join(dir, 'candidates.jsonl');
  writeFileSync(data, jsonl(separableCandidates(6, 2, 2)));
  const out = path.join(dir, 'judge');
  const r = await cli('train-verifier', '--data', data, '--preset', 'qwen3-tiny', '--out', out, '--epochs', '1', '--batch', '4', '--lr', '1e-3', '--held-out', '0.34', '--threads', '1');
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /^epoch  steps  train nll  held-out acc  held-out AUC       s\n\s+0\s+0\s+-\s+[\d.]+\s+[\d.]+\s+[\d.]+\n\s+1\s+2\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+\n/);
  t.match(r.stdout, /data: 6 resolved and 6 unresolved record\(s\) in 1 file\(s\); issues: 12 from the records\n/);
  t.match(r.stdout, /balanced: train 8 \(4 tasks\), held out 4 \(2 tasks\), 0 left out\n/);
  t.match(r.stdout, /done: 2 step\(s\) in [\d.]+ s, judge in .*judge\n$/);
  for (const file of ['config.json', 'model.safetensors', 'tokenizer.json', 'train-verifier-metrics.jsonl', 'train-verifier.json']) t.ok(existsSync(path.join(out, file)), file);
  t.equal(readFileSync(path.join(out, 'train-verifier-metrics.jsonl'), 'utf8').trim().split('\n').length, 2);

  const again = await cli('train-verifier', '--data', data, '--preset', 'qwen3-tiny', '--out', out, '--epochs', '1');
  t.equal(again.code, 2, 'a taken --out is refused');
  t.match(again.stderr, /already holds files; choose a new directory, or pass --overwrite/);

  // The saved judge is a model directory a next round starts from (its tokenizer.json read back).
  const next = await cli('train-verifier', '--data', data, '--model', out, '--out', path.join(dir, 'judge-2'), '--epochs', '1', '--batch', '4', '--held-out', '0.34', '--threads', '1');
  t.equal(next.code, 0, next.stderr);
  const summaries = [out, path.join(dir, 'judge-2')].map((d) => JSON.parse(readFileSync(path.join(d, 'train-verifier.json'), 'utf8')) as { startedFrom: string; training: { answerIds: unknown }; metrics: { heldOut: { auc: number } }[] });
  t.equal(summaries[1]!.startedFrom, out);
  t.same(summaries[1]!.training.answerIds, summaries[0]!.training.answerIds, 'the same answer ids through the saved tokenizer');
  t.equal(summaries[1]!.metrics[0]!.heldOut.auc, summaries[0]!.metrics[1]!.heldOut.auc, 'it starts where the first round ended');
});

t.test('refusals with exit 2', async (t) => {
  const dir = t.testdir();
  const missing = await cli('train-verifier', '--data', path.join(dir, 'nope.jsonl'), '--preset', 'qwen3-tiny', '--out', path.join(dir, 'o'));
  t.equal(missing.code, 2);
  t.match(missing.stderr, /--data\[0\] names .*nope\.jsonl, which does not exist/);
  const noOut = await cli('train-verifier', '--data', 'x.jsonl');
  t.equal(noOut.code, 2);
  t.match(noOut.stderr, /required option '--out <dir>' not specified/);
  const badPreset = await cli('train-verifier', '--data', 'x', '--out', 'o', '--preset', 'huge');
  t.equal(badPreset.code, 2);
  t.match(badPreset.stderr, /Allowed choices are qwen3-tiny/);
  const badHeldOut = await cli('train-verifier', '--data', 'x', '--out', 'o', '--preset', 'qwen3-tiny', '--held-out', '1');
  t.equal(badHeldOut.code, 2);
  t.match(badHeldOut.stderr, /--held-out is "1"; give a number in \[0, 1\)/);
});

t.test('trajectories of a run, their issues from --tasks', async (t) => {
  const dir = t.testdir();
  const tasks = path.join(ROOT, 'tasks', 'swe-mini');
  const ids = ['js-color-hex', 'js-cron-next', 'js-csv-writer', 'js-event-emitter'];
  const trajectories = ids.flatMap((id) => [savedTrajectory(id, 1), savedTrajectory(id, 0)]);
  mkdirSync(path.join(dir, 'run', 'trajectories'), { recursive: true });
  writeFileSync(path.join(dir, 'run', 'trajectories', 'step-1.jsonl.gz'), gzipSync(jsonl(trajectories)));
  const out = path.join(dir, 'judge');
  const r = await cli('train-verifier', '--data', path.join(dir, 'run'), '--tasks', tasks, '--preset', 'qwen3-tiny', '--out', out, '--epochs', '1', '--held-out', '0.25', '--threads', '1');
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /data: 4 resolved and 4 unresolved record\(s\) in 1 file\(s\); issues: 8 from --tasks\n/);
  const summary = JSON.parse(readFileSync(path.join(out, 'train-verifier.json'), 'utf8')) as { data: { prompts: { meanTokens: number } } };
  t.ok(summary.data.prompts.meanTokens > 600, 'the prompts hold the tasks\' problem statements');
});
