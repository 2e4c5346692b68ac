/**
 * SWE-rebench-V2 rows: a real row (test/fixtures/swe-rebench-v2) becomes the task its harness
 * runs, and the harness's rule (exactly the listed tests pass) grades real automake output.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import t from 'tap';

import { loadTasks } from '../../../../lib/env/tasks/load.js';
import { resolveTask } from '../../../../lib/env/reward/grade.js';
import { parseTestLog } from '../../../../lib/env/reward/test-log.js';
import { toolDescriptions } from '../../../../lib/env/tools/index.js';

const ROWS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../fixtures/swe-rebench-v2/rows.jsonl');

t.test('the row runs where and how its harness runs it', async (t) => {
  const { tasks } = await loadTasks(ROWS);
  t.equal(tasks.length, 1);
  const task = tasks[0]!;
  t.equal(task.id, 'unidata__netcdf-c-1925');
  t.equal(task.image, 'docker.io/swerebenchv2/unidata-netcdf-c:1925-ad6bff3', "the row's image, as named");
  t.equal(task.workdir, '/netcdf-c', 'the repository at /<name>, not /testbed');
  t.equal(task.testCommand, 'set -e\nmake check', 'every test_cmd in order under set -e, no test files appended');
  t.equal(task.env, undefined, 'no conda environment put on PATH');
  t.equal(task.logFormat, 'automake', 'parse_log_jq');
  t.ok(task.resolution.rule === 'swe-bench' && task.resolution.exact, 'exactly the listed tests must pass');
  t.match(toolDescriptions('default', task.workdir).text, /the repository is at \/netcdf-c, e\.g\. `\/netcdf-c\/src\/module\.py`/, 'the tools tell the agent where');
});

t.test("the harness's rule on automake's make check output", async (t) => {
  const { tasks } = await loadTasks(ROWS);
  const task = tasks[0]!;
  if (task.resolution.rule !== 'swe-bench') throw new Error('a SWE-bench-kind rule');
  const listed = [...task.resolution.failToPass, ...task.resolution.passToPass];
  const summary = (lines: string[]) => ['Making check in nc_test4', ...lines, '============================================================================', '# TOTAL: 3', ''].join('\n');
  const pass = listed.map((name) => `PASS: ${name}`);
  t.same(resolveTask(task, parseTestLog('automake', summary(pass))), { resolved: true }, 'every listed test, and no other, passes');
  const extra = resolveTask(task, parseTestLog('automake', summary([...pass, 'PASS: tst_unlisted'])));
  t.equal(extra.resolved, false, 'an unlisted test passing fails it, as in the harness');
  t.match(extra.reason, /tst_unlisted \(passed, not listed\)/);
  const failing = resolveTask(task, parseTestLog('automake', summary([...pass.slice(1), `FAIL: ${listed[0]}`])));
  t.equal(failing.resolved, false);
  t.match(failing.reason, new RegExp(`${listed[0]!.replace(/[.]/g, '\\.')} \\(FAILED\\)`));
  const timed = listed.map((name, i) => `PASS: ${name}${i % 2 ? ' (12ms)' : ' [1.5 s]'}`);
  t.same(resolveTask(task, parseTestLog('automake', summary(timed))), { resolved: true }, 'timing suffixes stripped');
  const twice = [...pass, `PASS: ${listed[0]} (3ms)`];
  t.same(resolveTask(task, parseTestLog('automake', summary(twice))), { resolved: true }, 'one test under two timings is one name, as the harness keys them');
  const timedFail = resolveTask(task, parseTestLog('automake', summary([...pass.slice(1), `FAIL: ${listed[0]} (3ms)`])));
  t.match(timedFail.reason, /\(FAILED\)/, "a listed test failing under a timed name is reported with its status");
  const statuses = parseTestLog('automake', 'PASS: a\n  FAIL: b\nXFAIL: c\nSKIP: d\nERROR: e\nPASS:no-space\n');
  t.same(Object.fromEntries(statuses), { a: 'PASSED', b: 'FAILED' }, "parse_log_jq's reading: PASS and FAIL lines only");
});
