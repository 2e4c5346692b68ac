// Parsers fed with logs of real runs: Debian's pytest and this Node's test runner, on small
// projects written here.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import t from 'tap';

import { parseNodeSpecLog, parseNodeTapLog, parsePytestLog, parseR2eGymLog } from '../../../../lib/env/reward/test-log.js';

const dir = mkdtempSync(join(tmpdir(), 'swerl-testlog-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

function run(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { cwd: dir, encoding: 'utf8' });
  return r.stdout + r.stderr;
}

t.test('pytest -rA (and -v)', async (t) => {
  mkdirSync(join(dir, 'tests'));
  writeFileSync(
    join(dir, 'tests', 'test_a.py'),
    [
      'import pytest',
      'def test_ok(): assert 1',
      'def test_fail(): assert 0, "boom"',
      '@pytest.mark.skip(reason="later")',
      'def test_skip(): pass',
      '@pytest.mark.xfail',
      'def test_xfail(): assert 0',
      '@pytest.mark.xfail',
      'def test_xpass(): assert 1',
      'class TestThing:',
      '    @pytest.mark.parametrize("x", [1, 2])',
      '    def test_param(self, x): assert x == 1',
      '@pytest.fixture',
      'def broken(): raise RuntimeError("fixture")',
      'def test_error(broken): pass',
      '',
    ].join('\n'),
  );
  const expected = {
    'tests/test_a.py::test_ok': 'PASSED',
    'tests/test_a.py::test_fail': 'FAILED',
    'tests/test_a.py:4': 'SKIPPED',
    'tests/test_a.py::test_xfail': 'XFAIL',
    'tests/test_a.py::test_xpass': 'XPASS',
    'tests/test_a.py::TestThing::test_param[1]': 'PASSED',
    'tests/test_a.py::TestThing::test_param[2]': 'FAILED',
    'tests/test_a.py::test_error': 'ERROR',
  };
  const summary = run('python3', ['-m', 'pytest', '-rA', '-p', 'no:cacheprovider', 'tests']);
  t.same(Object.fromEntries(parsePytestLog(summary)), expected, 'short summary lines');
  const verbose = run('python3', ['-m', 'pytest', '-v', '-p', 'no:cacheprovider', 'tests']);
  const fromVerbose = Object.fromEntries(parsePytestLog(verbose));
  t.equal(fromVerbose['tests/test_a.py::TestThing::test_param[2]'], 'FAILED', '-v progress lines');
  t.equal(fromVerbose['tests/test_a.py::test_xpass'], 'XPASS');
  // R2E-Gym's reading of the same run: the summary's PASSED / FAILED / ERROR lines keyed
  // without the file; skips, xfails and xpasses not at all (R2E-Gym's parse_log_pytest, run on
  // Debian's pytest's log of this run, gave exactly this map).
  t.same(Object.fromEntries(parseR2eGymLog(summary)), {
    test_ok: 'PASSED',
    test_fail: 'FAILED',
    'TestThing.test_param[1]': 'PASSED',
    'TestThing.test_param[2]': 'FAILED',
    test_error: 'ERROR',
  }, "R2E-Gym's keys and statuses");
  t.same(Object.fromEntries(parseR2eGymLog(verbose)), { test_fail: 'FAILED', 'TestThing.test_param[2]': 'FAILED', test_error: 'ERROR' }, "without -rA the summary lists failures alone, and R2E-Gym reads only those");
});

t.test('node --test, TAP and spec reporters agree', async (t) => {
  writeFileSync(
    join(dir, 'x.test.mjs'),
    [
      "import test, { describe, it } from 'node:test';",
      "import assert from 'node:assert';",
      "test('adds', () => assert.equal(1 + 1, 2));",
      "test('fails', () => assert.equal(1, 2));",
      "test('skipped', { skip: 'later' }, () => {});",
      "describe('suite', () => { it('inner ok', () => {}); it('inner bad', () => { throw new Error('x'); }); });",
      "describe('outer', () => { describe('mid', () => { it('deep', () => {}); }); });",
      '',
    ].join('\n'),
  );
  const expected = {
    adds: 'PASSED',
    fails: 'FAILED',
    skipped: 'SKIPPED',
    'suite > inner ok': 'PASSED',
    'suite > inner bad': 'FAILED',
    suite: 'FAILED',
    'outer > mid > deep': 'PASSED',
    'outer > mid': 'PASSED',
    outer: 'PASSED',
  };
  const tap = run(process.execPath, ['--test', '--test-reporter=tap', 'x.test.mjs']);
  t.same(Object.fromEntries(parseNodeTapLog(tap)), expected, 'TAP');
  const spec = run(process.execPath, ['--test', '--test-reporter=spec', 'x.test.mjs']);
  t.same(Object.fromEntries(parseNodeSpecLog(spec)), expected, 'spec');
});

t.test('logs with no tests give no statuses', async (t) => {
  t.equal(parsePytestLog('ImportError: cannot import name x\n').size, 0);
  t.equal(parseNodeTapLog('SyntaxError: Unexpected token\n').size, 0);
  t.equal(parseNodeSpecLog('').size, 0);
});
