/**
 * `swerl eval --predictions`: SWE-bench predictions made elsewhere, graded on the real
 * marshmallow rows (test/fixtures/swe-real) in fresh sandboxes. Every line of the file gets a
 * status and a reason, in our report and in the harness's run report; nothing crashes, and a
 * hostile prediction touches neither its neighbours' results nor the clones.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';

import t from 'tap';

import { harnessReport, readPredictions, type PredictionOutcome } from '../../../lib/eval/predictions.js';
import { ROOT, runSwerl } from '../../support/child-process.js';

const ROWS = 'test/fixtures/swe-real/rows.jsonl';
const REPOS = 'test/fixtures/swe-real/repos';
const [R1359, R1229, R1810, R2123] = ['marshmallow-code__marshmallow-1359', 'marshmallow-code__marshmallow-1229', 'marshmallow-code__marshmallow-1810', 'marshmallow-code__marshmallow-2123'];

interface Row {
  instance_id: string;
  patch: string;
}

async function rows(): Promise<Map<string, Row>> {
  const text = await fs.readFile(path.join(ROOT, ROWS), 'utf8');
  return new Map(text.trim().split('\n').map((l) => JSON.parse(l) as Row).map((r) => [r.instance_id, r]));
}

const line = (instanceId: unknown, patch: unknown, model: unknown = 'team/agent-v1') => JSON.stringify({ instance_id: instanceId, model_patch: patch, model_name_or_path: model });

t.test('reading: each line accepted once, or refused with its status and why', async (t) => {
  const dir = t.testdir({
    'preds.jsonl': [
      line('a', 'diff'),
      '{not json',
      JSON.stringify({ instance_id: 'b', model_name_or_path: 'm' }),
      line('b', 42),
      line('c', null),
      line('nobody', 'diff'),
      line('d', 'one'),
      '',
      line('d', 'two'),
      line('e', 'diff', ''),
      '[1, 2]',
    ].join('\n'),
    'list.json': JSON.stringify([{ instance_id: 'a', model_patch: 'diff', model_name_or_path: 'm' }, 'text']),
    'broken.json': '[{"instance_id": "a"',
  });
  const ids = new Set(['a', 'b', 'c', 'd', 'e']);
  const { accepted, refused } = await readPredictions(path.join(dir, 'preds.jsonl'), ids);
  t.same(accepted.map((p) => [p.line, p.instanceId, p.modelPatch]), [[1, 'a', 'diff'], [5, 'c', null]]);
  t.same(refused.map((r) => [r.line, r.status]), [[2, 'malformed'], [3, 'malformed'], [4, 'malformed'], [6, 'unknown'], [7, 'duplicate'], [9, 'duplicate'], [10, 'malformed'], [11, 'malformed']]);
  t.match(refused.find((r) => r.line === 3)!.reason, /model_patch is missing/);
  t.match(refused.find((r) => r.line === 4)!.reason, /model_patch is a number/);
  t.match(refused.find((r) => r.line === 7)!.reason, /instance_id d is given on lines 7, 9; keep one/);
  t.match(refused.find((r) => r.line === 10)!.reason, /model_name_or_path/);

  const list = await readPredictions(path.join(dir, 'list.json'), ids);
  t.same([list.accepted.length, list.refused.map((r) => r.status)], [1, ['malformed']], 'a JSON list, as the harness also reads');
  await t.rejects(readPredictions(path.join(dir, 'broken.json'), ids), { code: 'ERR_SWERL_INVALID_ARG', message: /JSON list that does not parse/ });
  await t.rejects(readPredictions(path.join(dir, 'missing.jsonl'), ids), { code: 'ERR_SWERL_INVALID_ARG', message: /cannot be read/ });
});

t.test("the harness's run report: graded ids by status, rows without a prediction incomplete, refused lines not submitted", async (t) => {
  const outcomes: PredictionOutcome[] = [
    { line: 1, instanceId: 'b', status: 'resolved', reason: '' },
    { line: 2, instanceId: 'a', status: 'unresolved', reason: '' },
    { line: 3, instanceId: 'c', status: 'empty', reason: '' },
    { line: 4, instanceId: 'd', status: 'error', reason: '' },
    { line: 5, instanceId: 'x', status: 'unknown', reason: '' },
    { line: 6, status: 'malformed', reason: '' },
  ];
  const r = harnessReport(['a', 'b', 'c', 'd', 'e', 'f'], outcomes);
  t.match(r, {
    total_instances: 6, submitted_instances: 4, completed_instances: 2, resolved_instances: 1, unresolved_instances: 1, empty_patch_instances: 1, error_instances: 1,
    completed_ids: ['a', 'b'], incomplete_ids: ['e', 'f'], empty_patch_ids: ['c'], submitted_ids: ['a', 'b', 'c', 'd'], resolved_ids: ['b'], unresolved_ids: ['a'], error_ids: ['d'], schema_version: 2,
  });
});

t.test('swerl eval --predictions on the real rows: gold, empty, broken, hostile and refused lines each get their status', async (t) => {
  const real = await rows();
  const gold = real.get(R1359)!.patch;
  // Applies, changes nothing the tests look at: the tests run and the fix is missing.
  const noFix = ['diff --git a/AUTHORS.rst b/AUTHORS.rst', '--- a/AUTHORS.rst', '+++ b/AUTHORS.rst', '@@ -1,3 +1,4 @@', '+An added line.', ' *******', ' Authors', ' *******', ''].join('\n');
  // Gold's hunk with a context line that is not in the file: git apply refuses it, and the
  // harness's last try (patch --fuzz=5) applies it, so it counts as applied, as there.
  const wrongContext = gold.replace('super()._bind_to_schema(field_name, schema)', 'super()._bind_to_schema(field_name, schema, 1)');
  // Hostile: rewrites the hidden tests to pass trivially and reaches out of the work tree.
  const hostile = [
    real.get(R2123)!.patch,
    'diff --git a/tests/test_validate.py b/tests/test_validate.py',
    'new file mode 100644',
    '--- /dev/null',
    '+++ b/tests/test_validate.py',
    '@@ -0,0 +1,2 @@',
    '+def test_everything():',
    '+    assert True',
    'diff --git a/../../outside.txt b/../../outside.txt',
    'new file mode 100644',
    '--- /dev/null',
    '+++ b/../../outside.txt',
    '@@ -0,0 +1 @@',
    '+escaped',
    '',
  ].join('\n');
  const dir = t.testdir({
    'preds.jsonl': [
      line(R1359, gold),
      line(R1229, ''),
      line(R1810, 'this is not a diff'),
      line(R2123, hostile),
      '{"instance_id": ',
      line('someone__else-1', gold),
    ].join('\n') + '\n',
    'more.jsonl': [line(R1359, wrongContext), line(R1229, noFix), line(R1810, null), line(R1810, gold)].join('\n') + '\n',
  });
  const refs = () => execFileSync('git', ['-C', path.join(ROOT, REPOS, 'marshmallow-code__marshmallow'), 'for-each-ref', '--format=%(refname) %(objectname)'], { encoding: 'utf8' });
  const before = refs();

  const out = path.join(dir, 'out');
  const run = await runSwerl(['eval', '--tasks', ROWS, '--repos', REPOS, '--predictions', path.join(dir, 'preds.jsonl'), '--out', out]);
  t.equal(run.code, 0, run.stderr + run.stdout);
  t.match(run.stderr, /preds\.jsonl:5: malformed: not JSON/);
  t.match(run.stderr, /preds\.jsonl:6: unknown: no row has instance_id someone__else-1/);
  const report = JSON.parse(await fs.readFile(path.join(out, 'predictions-report.json'), 'utf8')) as { counts: Record<string, number>; outcomes: PredictionOutcome[] };
  const status = Object.fromEntries(report.outcomes.map((o) => [o.line, o.status]));
  t.same(status, { 1: 'resolved', 2: 'empty', 3: 'error', 4: 'error', 5: 'malformed', 6: 'unknown' });
  t.match(report.outcomes[2]!.reason, /does not apply/);
  t.match(report.outcomes[3]!.reason, /does not apply/, 'a patch reaching out of the work tree is refused whole by git apply');
  t.same(report.outcomes[0]!.requiredPassing, { passed: 77, of: 77 }, "gold: every FAIL_TO_PASS and PASS_TO_PASS test passes");
  const harness = JSON.parse(await fs.readFile(path.join(out, `team__agent-v1.out.json`), 'utf8')) as Record<string, unknown>;
  t.match(harness, { total_instances: 4, submitted_instances: 4, resolved_ids: [R1359], empty_patch_ids: [R1229], error_ids: [R1810, R2123].sort(), unresolved_ids: [], incomplete_ids: [], schema_version: 2 });
  t.match(await fs.readFile(path.join(out, 'predictions-report.md'), 'utf8'), /\| 1 \| marshmallow-code__marshmallow-1359 \| resolved \| 77\/77 \|/);

  const out2 = path.join(dir, 'out2');
  const second = await runSwerl(['eval', '--tasks', ROWS, '--repos', REPOS, '--predictions', path.join(dir, 'more.jsonl'), '--out', out2, '--concurrency', '1']);
  t.equal(second.code, 0, second.stderr + second.stdout);
  const more = JSON.parse(await fs.readFile(path.join(out2, 'predictions-report.json'), 'utf8')) as { outcomes: PredictionOutcome[] };
  t.same(more.outcomes.map((o) => o.status), ['resolved', 'unresolved', 'duplicate', 'duplicate']);
  t.match(more.outcomes[1]!, { requiredPassing: { of: 69 } }, 'the tests ran on the no-fix patch');
  t.ok(more.outcomes[1]!.requiredPassing!.passed < 69);

  t.equal(refs(), before, 'the clones are as they were');
  await t.rejects(fs.access(path.join(ROOT, REPOS, 'outside.txt')));
});

t.test('flags that shape episodes are refused with --predictions, naming the flag', async (t) => {
  for (const [flag, value] of [['--runs', '2'], ['--temperature', '0'], ['--select', 'random'], ['--name', 'x']] as const) {
    const run = await runSwerl(['eval', '--tasks', ROWS, '--repos', REPOS, '--predictions', 'p.jsonl', flag, value]);
    t.equal(run.code, 2, `${flag} refused`);
    t.match(run.stderr, new RegExp(`${flag} shapes a policy's episodes|${flag} only matters`));
  }
  const both = await runSwerl(['eval', '--tasks', ROWS, '--policy', 'oracle', '--predictions', 'p.jsonl']);
  t.match(both.stderr, /give exactly one of --policy, --model, --server and --predictions/);
});
