/**
 * swerl train-verifier's core: on a small separable labeled set (resolved patches return a
 * value, unresolved ones raise), a tiny model trained on the answer tokens alone drives the
 * held-out AUC from its start to near 1; the judge saved loads back and scores as it did;
 * bad data and a taken output directory are refused before a model loads.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import { NativePolicy } from '../../../../lib/model/native-policy.js';
import { judgeScores } from '../../../../lib/tts/judge.js';
import { rocAuc } from '../../../../lib/train/verifier/metrics.js';
import { METRICS_FILE, SUMMARY_FILE, trainVerifier, type VerifierEpochRow } from '../../../../lib/train/verifier/train-verifier.js';
import { jsonl, separableCandidates } from './fixtures.js';

t.test('training on a separable set drives held-out AUC up (tiny model)', async (t) => {
  const dir = t.testdir();
  const data = path.join(dir, 'candidates.jsonl');
  const records = separableCandidates(24, 1, 4) as { taskId: string; problemStatement: string; patch: string; reward: number }[];
  writeFileSync(data, jsonl(records));
  const out = path.join(dir, 'judge');
  const rows: VerifierEpochRow[] = [];
  const started = performance.now();
  const summary = await trainVerifier(
    { data: [data], preset: 'qwen3-tiny', out, epochs: 8, lr: 3e-3, batchSize: 4, heldOutFraction: 0.33, seed: 0, threads: 1 },
    { onEpoch: (row) => rows.push(row) },
  );
  const seconds = (performance.now() - started) / 1000;
  t.comment(`${seconds.toFixed(1)} s; held-out AUC by epoch ${rows.map((r) => r.heldOut!.auc.toFixed(3)).join(' ')}, accuracy ${rows.map((r) => r.heldOut!.accuracy.toFixed(3)).join(' ')}`);

  const first = rows[0]!.heldOut!;
  const last = rows.at(-1)!.heldOut!;
  t.same(rows.map((r) => r.epoch), [0, 1, 2, 3, 4, 5, 6, 7, 8], 'before training, then each epoch');
  t.ok(last.auc >= 0.9 && last.auc > first.auc + 0.2, `held-out AUC ${first.auc.toFixed(3)} -> ${last.auc.toFixed(3)}`);
  t.ok(last.accuracy >= 0.75, `held-out accuracy at 0.5: ${first.accuracy.toFixed(3)} -> ${last.accuracy.toFixed(3)}`);
  t.ok(last.meanScore.yes > 0.5 && last.meanScore.no < 0.5, `mean score of resolved ${last.meanScore.yes.toFixed(3)}, of unresolved ${last.meanScore.no.toFixed(3)}`);
  t.ok(rows.at(-1)!.trainNll! < rows[1]!.trainNll!, 'the answer NLL falls');

  t.same([summary.data.train.yes, summary.data.train.no], [summary.data.train.records / 2, summary.data.train.records / 2], 'balanced training classes');
  t.equal(summary.data.train.tasks + summary.data.heldOut.tasks, 24, 'every task on one side');
  t.equal(summary.training.steps, 8 * Math.ceil(summary.data.train.records / 4));
  t.same(summary.training.answerIds, { yes: [89, 69, 83, 258], no: [78, 79, 258] }, 'YES / NO and <|im_end|> in bytes');
  t.same(summary.data.issueFrom, { record: 48, tasks: 0, firstUserMessage: 0 });

  // What was written: a model directory with the metrics and the summary beside the weights.
  t.ok(existsSync(path.join(out, 'config.json')) && existsSync(path.join(out, 'model.safetensors')));
  const written = readFileSync(path.join(out, METRICS_FILE), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as VerifierEpochRow);
  t.same(written.map((r) => r.epoch), [0, 1, 2, 3, 4, 5, 6, 7, 8]);
  t.same(JSON.parse(readFileSync(path.join(out, SUMMARY_FILE), 'utf8')).heldOut, JSON.parse(JSON.stringify(last)));

  // The saved judge scores the held-out candidates as training measured them.
  const judge = await NativePolicy.load(out);
  t.teardown(() => judge.dispose());
  const heldOut = records.filter((r) => summary.data.heldOut.taskIds.includes(r.taskId));
  t.equal(heldOut.length, summary.data.heldOut.records);
  const scores = await judgeScores(judge, heldOut.map((r) => ({ issue: r.problemStatement, patch: r.patch, messages: [] })));
  t.equal(rocAuc(scores, heldOut.map((r) => r.reward > 0)), last.auc, 'the saved judge\'s held-out AUC is the last epoch\'s');
});

t.test('refusals before a model loads', async (t) => {
  const dir = t.testdir();
  const oneClass = path.join(dir, 'resolved.jsonl');
  writeFileSync(oneClass, jsonl(separableCandidates(4, 1).filter((r) => (r as { reward: number }).reward > 0)));
  await t.rejects(trainVerifier({ data: [oneClass], preset: 'qwen3-tiny', out: path.join(dir, 'o') }), /--data has 4 resolved \(reward > 0\) and 0 unresolved record\(s\); a judge learns to tell the two apart/);
  const data = path.join(dir, 'c.jsonl');
  writeFileSync(data, jsonl(separableCandidates(4, 1)));
  writeFileSync(path.join(dir, 'taken'), '');
  await t.rejects(trainVerifier({ data: [data], preset: 'qwen3-tiny', out: dir }), /out \(.*\) already holds files; choose a new directory, or pass --overwrite/);
  await t.rejects(trainVerifier({ data: [data], out: path.join(dir, 'o') }), /options\.model \/ options\.preset are both unset; start the judge from one/);
  await t.rejects(trainVerifier({ data: [data], model: dir, out: dir }), /options\.out is the model it starts from/);
  await t.rejects(trainVerifier({ data: [data], preset: 'qwen3-tiny', out: path.join(dir, 'o'), epoch: 2 }), /options\.epoch is not a known option \(did you mean epochs\?\)/);
  t.notOk(existsSync(path.join(dir, 'o')), 'nothing written');
});
