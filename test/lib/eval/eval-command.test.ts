// swerl eval end to end on swe-mini in bwrap sandboxes: the oracle (gold patch) scores
// Pass@1 = 1 over two runs, the no-op 0; report.json, report.md and SWE-bench predictions.
import { readFileSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import { ROOT, runSwerl } from '../../support/child-process.js';

const SWE_MINI = path.join(ROOT, 'tasks/swe-mini');
const swerl = runSwerl;

t.test('oracle: Pass@1 = 1 over 2 runs, predictions carry the gold patches', async (t) => {
  const out = path.join(t.testdir(), 'oracle');
  const r = await swerl(['eval', '--tasks', SWE_MINI, '--policy', 'oracle', '--runs', '2', '--concurrency', '4', '--out', out]);
  t.equal(r.code, 0, r.stderr);
  const report = JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8'));
  t.equal(report.tasks, 25);
  t.same(report.passAt1, { mean: 1, sem: 0, perRun: [1, 1] });
  t.same(report.passAtK, { 'pass@1': 1, 'pass@2': 1 });
  t.same(report.terminations, { submitted: 50 });
  t.match(r.stdout, /\| Pass@1 \(mean ± SEM over runs\) \| 100\.0% ± 0\.0 \|/);
  const predictions = readFileSync(path.join(out, 'predictions.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  t.equal(predictions.length, 25);
  for (const p of predictions) {
    t.same(Object.keys(p).sort(), ['instance_id', 'model_name_or_path', 'model_patch']);
    t.match(p.model_patch, /^diff --git /, `${p.instance_id}: a patch`);
  }
  t.ok(readFileSync(path.join(out, 'predictions-run-1.jsonl'), 'utf8').length > 0, 'one predictions file per run');
  t.match(readFileSync(path.join(out, 'report.md'), 'utf8'), /\| js-color-hex \| 2\/2 \| 1 1 \|/);
});

t.test('no-op: Pass@1 = 0', async (t) => {
  const out = path.join(t.testdir(), 'noop');
  const r = await swerl(['eval', '--tasks', SWE_MINI, '--policy', 'noop', '--concurrency', '4', '--out', out]);
  t.equal(r.code, 0, r.stderr);
  const report = JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8'));
  t.same(report.passAt1, { mean: 0, sem: 0, perRun: [0] });
  const predictions = readFileSync(path.join(out, 'predictions.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  t.ok(predictions.every((p) => p.model_patch === ''), 'no change, empty patches');
});

t.test('bad arguments name the flag', async (t) => {
  const r = await swerl(['eval', '--tasks', SWE_MINI]);
  t.equal(r.code, 2);
  t.match(r.stderr, /give exactly one of --policy, --model and --server/);
  const k = await swerl(['eval', '--tasks', SWE_MINI, '--policy', 'oracle', '--k', '3']);
  t.equal(k.code, 2);
  t.match(k.stderr, /--k 3 is more than --runs 1/);
});
