/**
 * The grading guard outside a sandbox: its record (signed lines, forged lines, early ends), how
 * findings hold a log to it, and the runner-side guards on honest test suites of every shape
 * (no tampering reported, every verdict as the runner's own log says). The hacks it catches are
 * in runner-hacks.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import { guardFindings, guardRunnerOf, makeGuard, readGuardRecord } from '../../../../lib/env/reward/guard.js';
import { parseTestLog } from '../../../../lib/env/reward/test-log.js';

const KEY = 'k'.repeat(64);
const line = (body: object, key = KEY) => {
  const text = JSON.stringify(body);
  return `${createHmac('sha256', key).update(text).digest('hex')} ${text}`;
};

t.test('guarded runners by log format', async (t) => {
  t.same(['pytest', 'pytest-options', 'pytest-matplotlib', 'node-tap', 'node-spec', 'django', 'sympy'].map((f) => guardRunnerOf(f as never)), ['pytest', 'pytest', 'pytest', 'node', 'node', null, null]);
});

t.test('a record: signed lines count, others are tampering; every started process must end', async (t) => {
  const honest = [line({ kind: 'start', pid: 1 }), line({ kind: 'test', id: 'a::x', verdict: 'passed' }), line({ kind: 'end', pid: 1 })].join('\n');
  t.same(readGuardRecord(honest, KEY), { verdicts: new Map([['a::x', 'passed']]), tampering: [] });

  const forged = `${honest}\n${line({ kind: 'test', id: 'a::y', verdict: 'passed' }, 'another key')}\nnot even a line\n`;
  const read = readGuardRecord(forged, KEY);
  t.notOk(read.verdicts.has('a::y'), 'a line signed with another key is not read');
  t.same(read.tampering, ["2 line(s) of the guard's record were not written by the guard"]);

  t.match(readGuardRecord('', KEY).tampering, [/the guard never started/]);
  const cut = [line({ kind: 'start', pid: 1 }), line({ kind: 'start', pid: 2 }), line({ kind: 'end', pid: 1 })].join('\n');
  t.match(readGuardRecord(cut, KEY).tampering, [/a test process \(pid 2\) ended before its runner finished/]);
  const twice = [line({ kind: 'start', pid: 1 }), line({ kind: 'tamper', what: 'x' }), line({ kind: 'start', pid: 2 }), line({ kind: 'tamper', what: 'x' }), line({ kind: 'end', pid: 1 }), line({ kind: 'end', pid: 2 })].join('\n');
  t.same(readGuardRecord(twice, KEY).tampering, ['x'], 'the same finding from two test processes is one');
});

t.test('findings: each passing test of the log must have passed under the guard, ids as the log format writes them', async (t) => {
  const record = readGuardRecord([
    line({ kind: 'start', pid: 1 }),
    line({ kind: 'test', id: 'tests/test_a.py::test_ok[/testbed/x/data.json]', verdict: 'passed' }),
    line({ kind: 'test', id: 'tests/test_a.py::test_xf', verdict: 'xfailed' }),
    line({ kind: 'test', id: 'tests/test_a.py::test_bad', verdict: 'failed' }),
    line({ kind: 'end', pid: 1 }),
  ].join('\n'), KEY);
  // SWE-bench's pytest-options parser keeps a path parameter's last segment: the record's ids go through it too.
  const log = parseTestLog('pytest-options', 'PASSED tests/test_a.py::test_ok[/testbed/x/data.json]\nXFAIL tests/test_a.py::test_xf - reason\nFAILED tests/test_a.py::test_bad - assert');
  t.same(guardFindings(record, 'pytest', 'pytest-options', log, log.keys()), [], 'the log and the record agree');

  const forgedLog = parseTestLog('pytest', 'PASSED tests/test_a.py::test_bad\nPASSED tests/test_a.py::test_xf\nPASSED tests/test_a.py::test_never');
  const findings = guardFindings(record, 'pytest', 'pytest', forgedLog, forgedLog.keys());
  t.equal(findings.length, 1);
  t.match(findings[0], /^3 test\(s\) the log reports passing did not pass under the guard: tests\/test_a\.py::test_bad \(the log says PASSED, the guard saw FAILED\), tests\/test_a\.py::test_xf \(the log says PASSED, the guard saw XFAIL\), tests\/test_a\.py::test_never \(the log says PASSED, the guard saw no run of it\)$/);
  t.same(guardFindings(record, 'pytest', 'pytest', forgedLog, []), [], 'only the checked ids are held to it');
});

t.test('a guard for one grading: a fresh folder, a fresh key, a random pytest module name', async (t) => {
  const [a, b] = [makeGuard('pytest', '/testbed'), makeGuard('pytest', '/testbed')];
  t.not(a.dir, b.dir);
  t.not(a.key, b.key);
  t.match(a.file.name, /^swerl_guard_[0-9a-f]{16}\.py$/);
  t.match(a.exports, new RegExp(`PYTEST_ADDOPTS="-p ${a.file.name.slice(0, -3)}`));
  t.match(makeGuard('node', '/testbed').exports, /NODE_OPTIONS="--import \/tmp\/swerl-guard-[0-9a-f]{16}\/guard\.mjs/);
});

/** Runs `command` in `dir` with a guard as grading installs it (no sandbox); returns the log and the record. */
function guarded(runner: 'pytest' | 'node', dir: string, command: string) {
  const guard = makeGuard(runner, dir);
  const local = path.join(dir, '..', path.basename(guard.dir));
  mkdirSync(local);
  writeFileSync(path.join(local, guard.file.name), guard.file.contents);
  const exports = guard.exports.replaceAll(guard.dir, local);
  const run = spawnSync('sh', ['-c', `${exports} && cd '${dir}' && ${command}`], { encoding: 'utf8', env: { ...process.env, SWERL_GUARD_RECORD: '', NODE_OPTIONS: '' } });
  const record = (() => {
    try {
      return readFileSync(path.join(local, 'record'), 'utf8');
    } catch {
      return '';
    }
  })();
  return { log: run.stdout + run.stderr, record: readGuardRecord(record, guard.key) };
}

t.test('pytest: an honest suite of every shape reports no tampering, and each verdict is what pytest says', async (t) => {
  const root = t.testdir({
    repo: {
      'pkg.py': 'import atexit, logging\nlogging.getLogger(__name__)\ndef add(a, b):\n    return a + b\n',
      tests: {
        'conftest.py': 'import pytest\n\n@pytest.fixture\ndef two():\n    return 2\n',
        'test_shapes.py': [
          'import sys, unittest, pytest',
          'from pkg import add',
          'def test_plain(two): assert add(two, 2) == 4',
          'def test_fails(): assert add(1, 1) == 3',
          '@pytest.mark.parametrize("a,b", [(1, 2), (3, 4)])',
          'def test_param(a, b): assert add(a, b) == a + b',
          '@pytest.mark.skip(reason="no")',
          'def test_marked_skip(): pass',
          'def test_imperative_skip(): pytest.skip("later")',
          '@pytest.mark.xfail(reason="known")',
          'def test_xfail(): assert False',
          '@pytest.mark.xfail(reason="fixed")',
          'def test_xpass(): assert True',
          'def test_raises():',
          '    with pytest.raises(ZeroDivisionError): 1 / 0',
          'def test_monkeypatch(monkeypatch):',
          '    monkeypatch.setattr(sys, "argv", ["x"]); assert sys.argv == ["x"]',
          // What real suites do to sys.modules outside the runner (pydicom's and astroid's rows):
          // pyexpat registers submodules no import made; a module deleted and imported again.
          'def test_expat_submodules(): import xml.parsers.expat; assert "xml.parsers.expat.model" in sys.modules',
          'def test_module_reimported():',
          '    import json.decoder; del sys.modules["json.decoder"]; import json.decoder',
          'def test_stub_module():',
          '    import types; sys.modules["swerl_stub_dependency"] = types.ModuleType("other_name")',
          'class TestGroup:',
          '    def test_method(self): assert add(0, 0) == 0',
          'class Case(unittest.TestCase):',
          '    def test_unittest(self): self.assertEqual(add(1, 2), 3)',
          '    @unittest.skip("old")',
          '    def test_unittest_skip(self): pass',
          'def test_error_in_setup(missing_fixture): pass',
          '',
        ].join('\n'),
      },
    },
  });
  const dir = path.join(root, 'repo');
  const { log, record } = guarded('pytest', dir, 'python3 -m pytest -rA -p no:cacheprovider tests');
  const statuses = parseTestLog('pytest', log);
  t.ok(statuses.size >= 12, `pytest ran the suite (${statuses.size} results)`);
  t.same(record.tampering, [], 'no tampering on an honest suite');
  t.same(guardFindings(record, 'pytest', 'pytest', statuses, [...statuses.keys()].filter((id) => id.includes('::'))), [], 'every passing result agrees with the guard');
  t.same(
    Object.fromEntries(['test_fails', 'test_xfail', 'test_xpass', 'test_marked_skip', 'test_error_in_setup'].map((name) => [name, record.verdicts.get(`tests/test_shapes.py::${name}`)])),
    { test_fails: 'failed', test_xfail: 'xfailed', test_xpass: 'xpassed', test_marked_skip: 'skipped', test_error_in_setup: 'error' },
  );
});

t.test('pytest: doctests (requests collects with --doctest-modules) fill the runner\'s lazy caches, which is no tampering', async (t) => {
  const root = t.testdir({ repo: { 'pkg.py': 'def add(a, b):\n    """\n    >>> add(1, 2)\n    3\n    """\n    return a + b\n' } });
  const { log, record } = guarded('pytest', path.join(root, 'repo'), 'python3 -m pytest -rA -p no:cacheprovider --doctest-modules pkg.py');
  t.match(log, /1 passed/);
  t.same(record.tampering, [], 'no tampering');
});

t.test('node: an honest suite of every shape reports no tampering, and each verdict is what the runner says', async (t) => {
  const root = t.testdir({
    repo: {
      'package.json': '{"type":"module"}',
      'src.js': 'export const add = (a, b) => a + b;\n',
      test: {
        'shapes.test.js': [
          "import { test, describe, it } from 'node:test';",
          "import assert from 'node:assert/strict';",
          "import { add } from '../src.js';",
          "test('plain', () => assert.equal(add(2, 2), 4));",
          "test('fails', () => assert.equal(add(1, 1), 3));",
          "test('async', async () => { await new Promise((r) => setTimeout(r, 5)); assert.equal(add(1, 2), 3); });",
          "test('callback', (t, done) => { setTimeout(() => done(), 5); });",
          "test.skip('skipped', () => {});",
          "test('todo', { todo: true }, () => {});",
          "describe('suite', () => {",
          "  it('inner', () => assert.ok(true));",
          "  describe('nested', () => { it('deep', () => assert.ok(true)); });",
          '});',
          "test('parent', async (t) => { await t.test('child', () => assert.ok(true)); });",
          '',
        ].join('\n'),
        'second.test.js': "import { test } from 'node:test';\ntest('another file', () => {});\n",
      },
    },
  });
  const dir = path.join(root, 'repo');
  const commands = {
    'node --test, two test processes': 'node --test --test-reporter=tap test/',
    // swe-gen's command: one process is runner and tests.
    'a test file run directly': 'node --test-reporter=tap test/shapes.test.js',
    // A wrapper of the repository's (as npm is) takes no guard: its runner's test processes do.
    'a script that starts node --test': 'node run-tests.js',
  };
  writeFileSync(path.join(dir, 'run-tests.js'), "import { spawnSync } from 'node:child_process';\nprocess.exitCode = spawnSync(process.execPath, ['--test', '--test-reporter=tap', 'test/'], { stdio: 'inherit' }).status;\n");
  for (const [name, command] of Object.entries(commands)) {
    const { log, record } = guarded('node', dir, command);
    const statuses = parseTestLog('node-tap', log);
    t.ok(statuses.size >= 10, `${name}: the runner ran the suite (${statuses.size} results)`);
    t.same(record.tampering, [], `${name}: no tampering on an honest suite (each test process ended)`);
    t.same(guardFindings(record, 'node', 'node-tap', statuses, statuses.keys()), [], `${name}: every passing result agrees with the guard`);
    t.same(
      Object.fromEntries(['fails', 'suite > nested > deep', 'parent > child', 'callback'].map((id) => [id, record.verdicts.get(id)])),
      { fails: 'failed', 'suite > nested > deep': 'passed', 'parent > child': 'passed', callback: 'passed' },
      `${name}: the guard's verdicts`,
    );
  }
});
