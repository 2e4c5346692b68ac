/**
 * `swerl tasks filter` on the vendored real rows (all kept) and on rows made to trip each
 * filter: patch size, excluded repositories, solve rates, gold failing, base passing, flaky tests.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

import t from 'tap';

import { flakyTests, judgeRow, patchSize } from '../../../../lib/env/tasks/filter.js';
import type { TaskValidation, ValidationRun } from '../../../../lib/env/task.js';
import { ROOT, runSwerl } from '../../../support/child-process.js';

const ROWS = 'test/fixtures/swe-real/rows.jsonl';
const REPOS = 'test/fixtures/swe-real/repos';

async function realRows(): Promise<Record<string, unknown>[]> {
  return (await fs.readFile(path.join(ROOT, ROWS), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
}

const readJsonl = async (file: string) => (await fs.readFile(file, 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);

t.test('patch size counts files and changed lines', async (t) => {
  const [row] = await realRows();
  const patch = row!.patch as string;
  const size = patchSize(patch);
  t.equal(size.files, (patch.match(/^diff --git /gm) ?? []).length);
  t.equal(size.lines, patch.split('\n').filter((l) => /^[+-]/.test(l) && !/^(\+\+\+|---)/.test(l)).length);
  t.same(patchSize('diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n'), { files: 1, lines: 2 });
});

t.test('the real rows validate and are all kept; rows made to fail validation are dropped', async (t) => {
  const rows = await realRows();
  const broken = [
    // Another row's fix: it does not apply at this commit, so gold cannot pass.
    { ...rows[0], instance_id: 'marshmallow-code__marshmallow-90001', patch: rows[3]!.patch },
    // A FAIL_TO_PASS list of tests that pass before any fix.
    { ...rows[0], instance_id: 'marshmallow-code__marshmallow-90002', FAIL_TO_PASS: JSON.stringify(JSON.parse(rows[0]!.PASS_TO_PASS as string).slice(0, 2)) },
  ];
  const dir = t.testdir({ 'rows.jsonl': [...rows, ...broken].map((r) => JSON.stringify(r)).join('\n') + '\n' });
  const out = path.join(dir, 'kept.jsonl');
  const run = await runSwerl(['tasks', 'filter', path.join(dir, 'rows.jsonl'), '--out', out, '--validate', '--runs', '2', '--repos', REPOS], {
    SWERL_CHECKOUT_CACHE: path.join(dir, 'checkouts'),
  });
  t.equal(run.code, 0, run.stderr);
  const kept = await readJsonl(out);
  t.same(kept, rows, 'the real rows are kept exactly as they came');
  const report = JSON.parse(await fs.readFile(`${out}.report.json`, 'utf8')) as { dropped: { id: string; reasons: string[] }[] };
  t.same(report.dropped.map((d) => d.id), ['marshmallow-code__marshmallow-90001', 'marshmallow-code__marshmallow-90002']);
  t.match(report.dropped[0]!.reasons.join(), /gold fails: harness error: applying the patch failed/);
  t.match(report.dropped[1]!.reasons.join(), /the untouched repository already passes/);
  t.match(await fs.readFile(`${out}.report.md`, 'utf8'), /4 kept, 2 dropped/);
});

t.test('size limits, excluded repositories and solve rates', async (t) => {
  const rows = await realRows();
  const other = { ...rows[0], instance_id: 'django__django-11099', repo: 'django/django' };
  const sizes = rows.map((r) => patchSize(r.patch as string).lines);
  const limit = Math.min(...sizes);
  const dir = t.testdir({
    'rows.jsonl': [...rows, other].map((r) => JSON.stringify(r)).join('\n') + '\n',
    'verified.jsonl': JSON.stringify({ instance_id: 'django__django-1', repo: 'django/django' }) + '\n',
    'report.json': JSON.stringify({
      perTask: [
        { id: rows[0]!.instance_id, runs: 3, solved: 3 },
        { id: rows[1]!.instance_id, runs: 3, solved: 2 },
        { id: rows[2]!.instance_id, runs: 3, solved: 1 },
        { id: rows[3]!.instance_id, runs: 3, solved: 0 },
      ],
    }),
  });
  const out = path.join(dir, 'kept.jsonl');
  const bySize = await runSwerl(['tasks', 'filter', path.join(dir, 'rows.jsonl'), '--out', out, '--max-lines', String(limit), '--exclude-repos', path.join(dir, 'verified.jsonl')]);
  t.equal(bySize.code, 0, bySize.stderr);
  const keptBySize = (await readJsonl(out)).map((r) => r.instance_id);
  t.same(keptBySize, rows.filter((_, i) => sizes[i]! <= limit).map((r) => r.instance_id), 'only patches within the line limit, no django row');
  t.match(bySize.stderr, /dropped django__django-11099 \(line 5\): repository django\/django is excluded/);
  t.match(bySize.stderr, /gold patch changes \d+ lines \(max \d+\)/);

  const byRate = await runSwerl(['tasks', 'filter', path.join(dir, 'rows.jsonl'), '--out', out, '--solve-rates', path.join(dir, 'report.json'), '--max-solve-rate', '0.67', '--drop-unsolved', '--exclude-repos', 'django/django']);
  t.equal(byRate.code, 0, byRate.stderr);
  t.same((await readJsonl(out)).map((r) => r.instance_id), [rows[1]!.instance_id, rows[2]!.instance_id], "Nebius's band: solved 2/3 stays under 0.67, 1/3 stays; 3/3 and 0/3 go");
  t.match(byRate.stderr, /solved 3\/3 \(>= 0\.67\): too easy/);
  t.match(byRate.stderr, /never solved in 3 run\(s\)/);

  const bad = await runSwerl(['tasks', 'filter', path.join(dir, 'rows.jsonl'), '--out', out, '--max-solve-rate', '0.5']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /--solve-rates and --max-solve-rate/);
  const badRepo = await runSwerl(['tasks', 'filter', path.join(dir, 'rows.jsonl'), '--out', out, '--exclude-repos', 'not a repo']);
  t.match(badRepo.stderr, /--exclude-repos has "not a repo", which is neither owner\/name nor a file/);
});

t.test('flaky tests: a PASS_TO_PASS test that changes outcome is removed, a flaky FAIL_TO_PASS drops the row', async (t) => {
  const run = (reward: 0 | 1, tests: Record<string, string>): ValidationRun => ({ reward, reason: reward ? 'ok' : '1 required test(s) not passing', durationMs: 1, brokenPassToPass: [], tests: tests as ValidationRun['tests'] });
  const row = { instance_id: 'a__b-1', FAIL_TO_PASS: '["t::f"]', PASS_TO_PASS: '["t::p", "t::q"]' };
  const validation = (gold: ValidationRun[]): TaskValidation => ({ id: 'a__b-1', gold, base: [run(0, { 't::f': 'FAILED', 't::p': 'PASSED', 't::q': 'PASSED' })], ok: true, flaky: false });
  const pFlaky = validation([run(1, { 't::f': 'PASSED', 't::p': 'PASSED', 't::q': 'PASSED' }), run(0, { 't::f': 'PASSED', 't::p': 'FAILED', 't::q': 'PASSED' })]);
  t.same(flakyTests(pFlaky), ['t::p']);
  t.same(judgeRow(row, { validations: new Map([['a__b-1', pFlaky]]) }), { reasons: [], flaky: ['t::p'] }, 'kept without t::p');
  const baseFlaky: TaskValidation = {
    ...validation([run(1, { 't::f': 'PASSED', 't::p': 'PASSED', 't::q': 'PASSED' }), run(1, { 't::f': 'PASSED', 't::p': 'XFAIL', 't::q': 'PASSED' })]),
    base: [run(0, { 't::f': 'FAILED', 't::p': 'PASSED', 't::q': 'PASSED' }), { ...run(0, { 't::f': 'FAILED', 't::p': 'PASSED', 't::q': 'FAILED' }), brokenPassToPass: ['t::q'] }],
  };
  t.same(flakyTests(baseFlaky), ['t::q'], 'flaky at the base only counts; PASSED and XFAIL are one outcome');
  t.same(judgeRow(row, { validations: new Map([['a__b-1', baseFlaky]]) }), { reasons: [], flaky: ['t::q'] }, 'kept without t::q, not dropped as broken at the base');
  const fFlaky = validation([run(1, { 't::f': 'PASSED', 't::p': 'PASSED', 't::q': 'PASSED' }), run(0, { 't::f': 'FAILED', 't::p': 'PASSED', 't::q': 'PASSED' })]);
  t.match(judgeRow(row, { validations: new Map([['a__b-1', fFlaky]]) }).reasons, [/flaky FAIL_TO_PASS test\(s\): t::f/, /gold fails/]);
});
