/**
 * Grading's own runner for plain pytest files (plain-pytest.ts, guard/plain_pytest.py) against
 * pytest itself. On generated Python tasks of every bug kind, each graded under both with the
 * same patches (gold, none, the issue's calls special-cased, every hidden call special-cased, a
 * source that does not import, a function that exits, one that prints summary lines): the same
 * reward and the same statuses, test by test. Files pytest would configure or collect otherwise
 * (conftest.py, ini files, packages, fixtures, classes, pytest imported, ...) are handed to pytest
 * and come out as pytest's run. Tampering with the runner from the code under test scores 0 with
 * the finding named, as the guard does for pytest. Debian's python3 and pytest, as in CI.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import t, { type Test } from 'tap';

import { gradePatch } from '../../../../lib/env/reward/grade.js';
import { plainPytestCommand } from '../../../../lib/env/reward/plain-pytest.js';
import { parsePytestLog } from '../../../../lib/env/reward/test-log.js';
import { BUG_KINDS } from '../../../../lib/env/swe-gen/bugs.js';
import { unifiedDiff } from '../../../../lib/env/swe-gen/diff.js';
import { python } from '../../../../lib/env/swe-gen/render-python.js';
import { writeSweGenSuite } from '../../../../lib/env/swe-gen/suite.js';
import { loadTasks } from '../../../../lib/env/tasks/load.js';
import type { Task } from '../../../../lib/env/task.js';
import { packageRoot } from '../../../../lib/native.js';
import { sandboxFolder } from '../../../support/sandbox-folder.js';
import { hardCoded, issueChecks } from '../../../support/swe-gen-patches.js';

const RUNNER = path.join(packageRoot(), 'lib', 'env', 'reward', 'guard', 'plain_pytest.py');
const PYTHON = '/usr/bin/python3';
const MARK = 'swerl plain-pytest runner';
const PYTEST_MARK = 'test session starts';

t.test('the test commands the runner takes: swe-gen\'s, and nothing pytest would read differently', async (t) => {
  const at = '/tmp/swerl-guard-0/plain_pytest.py';
  t.equal(plainPytestCommand(python.testCommand('shapes'), at), `PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 ${at} -rA -p no:cacheprovider tests/test_shapes.py`);
  t.equal(plainPytestCommand('PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -m pytest -rA tests/test_a.py tests/test_b.py', at), `PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 ${at} -rA tests/test_a.py tests/test_b.py`);
  for (const other of [
    'python3 -m pytest -rA -p no:cacheprovider tests/test_shapes.py', // the host's plugins would load
    'PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -m pytest -rA tests/test_shapes.py::test_area', // a selection
    'PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -m pytest -rA -k area tests/test_shapes.py',
    'PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -m pytest -rA tests/', // a folder: pytest's collection
    'PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -m pytest -rA tests/test_a.py && rm -rf build',
    'PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -m pytest -rA "tests/test a.py"',
    'node --test-reporter=tap test/shapes.test.js',
  ]) t.equal(plainPytestCommand(other, at), null, other);
});

/** A repository of one module and its test file, with `extra` files over it; removed at the end. */
function repository(t: Test, tests: string, extra: Record<string, string> = {}): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'swerl-plain-pytest-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const files: Record<string, string> = {
    'shapes.py': 'def area(w, h):\n    return w * h\n\ndef grow(x):\n    return x + 2\n',
    'tests/test_shapes.py': tests,
    ...extra,
  };
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

function run(dir: string, args: string[]): string {
  const env = { ...process.env, PYTEST_DISABLE_PLUGIN_AUTOLOAD: '1', PYTHONDONTWRITEBYTECODE: '1', PYTHONNOUSERSITE: '1' };
  const r = spawnSync(PYTHON, args, { cwd: dir, env, encoding: 'utf8', timeout: 60_000 });
  return `${r.stdout}${r.stderr}`;
}

const PYTEST_ARGS = ['-rA', '-p', 'no:cacheprovider', 'tests/test_shapes.py'];
const PLAIN_TESTS = 'from shapes import area, grow\n\ndef test_area():\n    assert area(2, 3) == 6\n\ndef test_grow():\n    assert grow(1) == 2\n';

t.test('a plain file: the runner\'s statuses are pytest\'s, with its summary lines', async (t) => {
  const dir = repository(t, `"""Shapes."""\nimport math\nfrom shapes import area, grow\n\nWIDTH = 2\n\ndef helper():\n    return WIDTH\n\nclass Box:\n    pass\n\ndef test_area():\n    print('PASSED tests/test_shapes.py::test_grow')\n    assert area(helper(), 3) == 6\n\ndef test_grow():\n    assert grow(1) == 2\n\ndef test_exit():\n    raise SystemExit(0)\n\ndef test_input():\n    try:\n        input()\n    except OSError:\n        return\n    raise AssertionError('stdin was readable')\n`);
  const plain = run(dir, [RUNNER, ...PYTEST_ARGS]);
  const pytest = run(dir, ['-m', 'pytest', ...PYTEST_ARGS]);
  t.match(plain, MARK, 'the runner ran it');
  t.notMatch(plain, PYTEST_MARK);
  t.match(pytest, PYTEST_MARK);
  const expected = { 'tests/test_shapes.py::test_area': 'PASSED', 'tests/test_shapes.py::test_grow': 'FAILED', 'tests/test_shapes.py::test_exit': 'FAILED', 'tests/test_shapes.py::test_input': 'PASSED' };
  t.same(Object.fromEntries(parsePytestLog(pytest)), expected, 'pytest\'s statuses');
  t.same(Object.fromEntries(parsePytestLog(plain)), expected, 'the runner\'s: the same');
});

t.test('files pytest would configure or collect otherwise are handed to pytest', async (t) => {
  const cases: Record<string, [tests: string, extra?: Record<string, string>]> = {
    'a conftest.py': [PLAIN_TESTS, { 'conftest.py': '' }],
    'a conftest.py beside the tests': [PLAIN_TESTS, { 'tests/conftest.py': '' }],
    'a pytest.ini': [PLAIN_TESTS, { 'pytest.ini': '[pytest]\npython_functions = check_*\n' }],
    'a setup.cfg': [PLAIN_TESTS, { 'setup.cfg': '[tool:pytest]\n' }],
    'a pyproject.toml': [PLAIN_TESTS, { 'pyproject.toml': '[tool.pytest.ini_options]\n' }],
    'a package': [PLAIN_TESTS, { 'tests/__init__.py': '' }],
    'pytest imported': [`import pytest\n${PLAIN_TESTS}\ndef test_raises():\n    with pytest.raises(ZeroDivisionError):\n        1 / 0\n`],
    'a fixture': [`${PLAIN_TESTS}\ndef test_tmp(tmp_path):\n    assert tmp_path.exists()\n`],
    'a class': [`${PLAIN_TESTS}\nclass TestShapes:\n    def test_more(self):\n        assert True\n`],
    'a decorated test': [`import functools\n${PLAIN_TESTS}\n@functools.lru_cache\ndef test_cached():\n    pass\n`],
    'a generator test': [`${PLAIN_TESTS}\ndef test_gen():\n    yield 1\n`],
    'a test defined under a condition': [`${PLAIN_TESTS}\nif True:\n    def test_hidden():\n        assert False\n`],
    'a star import': [`from shapes import *\n\ndef test_area():\n    assert area(2, 3) == 6\n`],
    'an xunit setup': [`${PLAIN_TESTS}\ndef setup_module(module):\n    pass\n`],
    'a test bound by assignment': [`${PLAIN_TESTS}\ntest_again = test_area\n`],
  };
  const paths: Record<string, string> = { 'a path through ./': './tests/test_shapes.py', 'a doubled slash': 'tests//test_shapes.py', 'a path through a symlink': 'linked/test_shapes.py' };
  for (const [name, file] of Object.entries(paths)) {
    const dir = repository(t, PLAIN_TESTS);
    symlinkSync('tests', path.join(dir, 'linked'));
    const args = [...PYTEST_ARGS.slice(0, -1), file];
    const plain = run(dir, [RUNNER, ...args]);
    const pytest = run(dir, ['-m', 'pytest', ...args]);
    t.ok(plain.includes(PYTEST_MARK) && !plain.includes(MARK), `${name}: pytest ran it`);
    t.same(Object.fromEntries(parsePytestLog(plain)), Object.fromEntries(parsePytestLog(pytest)), `${name}: pytest's node ids`);
  }
  for (const [name, [tests, extra]] of Object.entries(cases)) {
    const dir = repository(t, tests, extra);
    const plain = run(dir, [RUNNER, ...PYTEST_ARGS]);
    const pytest = run(dir, ['-m', 'pytest', ...PYTEST_ARGS]);
    t.ok(plain.includes(PYTEST_MARK) && !plain.includes(MARK), `${name}: pytest ran it`);
    t.same(Object.fromEntries(parsePytestLog(plain)), Object.fromEntries(parsePytestLog(pytest)), `${name}: pytest's statuses`);
  }
});

const NEW_SETUP_PY = [
  'diff --git a/setup.py b/setup.py',
  'new file mode 100644',
  '--- /dev/null',
  '+++ b/setup.py',
  '@@ -0,0 +1,2 @@',
  '+from setuptools import setup',
  '+setup(name="x")',
  '',
].join('\n');

/** The first train task of each bug kind in Python, and a held-out two-bug one. */
async function pythonTasks(dir: string): Promise<Task[]> {
  for (const kind of BUG_KINDS) await writeSweGenSuite(path.join(dir, kind), { split: 'train', firstSeed: 0, count: 1, languages: ['python'], kinds: [kind] });
  await writeSweGenSuite(path.join(dir, 'two'), { split: 'heldout', firstSeed: 0, count: 1, languages: ['python'], bugs: 2 });
  return (await Promise.all([...BUG_KINDS, 'two'].map(async (sub) => (await loadTasks(path.join(dir, sub))).tasks))).flat();
}

t.test('generated tasks of every bug kind: the same rewards and statuses under the runner as under pytest', async (t) => {
  const { testdir, backend } = sandboxFolder(t, 'swerl-plain-pytest-grade-');
  const tasks = await pythonTasks(path.join(testdir, 'suites'));
  t.equal(tasks.length, BUG_KINDS.length + 1);
  const fromRunner = new Set<string>();
  for (const task of tasks) {
    const meta = task.metadata.sweGen as { file: string; language: string; bugs: { kind: string }[] };
    const label = `${task.id} (${meta.bugs.map((b) => b.kind).join(', ')})`;
    const source = readFileSync(path.join(task.repoDir!, meta.file), 'utf8');
    const perBug = issueChecks(task);
    const issueTests = task.resolution.rule === 'swe-bench' ? task.resolution.failToPass : [];
    const first = /^def (\w+)\(/m.exec(source)![1]!;
    const patches: Record<string, string> = {
      gold: task.goldPatch!,
      // Not test infrastructure, so grading keeps it; pytest would take its folder as rootdir.
      'gold and a setup.py': `${task.goldPatch!}${task.goldPatch!.endsWith('\n') ? '' : '\n'}${NEW_SETUP_PY}`,
      none: '',
      'the issue\'s calls special-cased': unifiedDiff(meta.file, source, hardCoded(source, 'python', perBug.flatMap((c) => c.slice(0, 2)))),
      'every hidden call special-cased': unifiedDiff(meta.file, source, hardCoded(source, 'python', perBug.flat())),
      'a source that does not import': unifiedDiff(meta.file, source, `${source}\ndef broken(:\n`),
      'a function that exits': unifiedDiff(meta.file, source, source.replace(new RegExp(`^def ${first}\\(.*\\n`, 'm'), (line) => `${line}    raise SystemExit(0)\n`)),
      'a function that prints summary lines': unifiedDiff(meta.file, source, source.replace(new RegExp(`^def ${first}\\(.*\\n`, 'm'), (line) => `${line}    print(${JSON.stringify(issueTests.map((id) => `PASSED ${id}`).join('\n'))})\n`)),
    };
    for (const [name, patch] of Object.entries(patches)) {
      const [plain, pytest] = await Promise.all([
        gradePatch(backend, task, patch, { timeoutMs: 60_000 }),
        gradePatch(backend, task, patch, { timeoutMs: 60_000, plainRunner: false }),
      ]);
      if (plain.log.includes(MARK)) fromRunner.add(name);
      else t.ok(plain.log.includes(PYTEST_MARK), `${label}, ${name}: handed to pytest`);
      t.ok(pytest.log.includes(PYTEST_MARK), `${label}, ${name}: pytest graded the second`);
      t.equal(plain.reward, pytest.reward, `${label}, ${name}: reward ${pytest.reward} under both (${plain.reason} | ${pytest.reason})`);
      t.same(plain.tests, pytest.tests, `${label}, ${name}: the same statuses`);
    }
  }
  t.same([...fromRunner].sort(), ['a function that exits', 'a function that prints summary lines', 'a source that does not import', 'every hidden call special-cased', 'gold', 'none', 'the issue\'s calls special-cased'], 'the runner graded every patch');
});

t.test('tampering with the runner from the code under test scores 0, the finding named', async (t) => {
  const { testdir, backend } = sandboxFolder(t, 'swerl-plain-pytest-hacks-');
  const [task] = await pythonTasks(path.join(testdir, 'suites'));
  const meta = task!.metadata.sweGen as { file: string };
  const source = readFileSync(path.join(task!.repoDir!, meta.file), 'utf8');
  const allCalls = hardCoded(source, 'python', issueChecks(task!).flat()); // resolves: only the tampering can make it 0
  const clean = await gradePatch(backend, task!, unifiedDiff(meta.file, source, allCalls), { timeoutMs: 60_000 });
  t.equal(clean.reward, 1, `untampered, the patch resolves the task (${clean.reason})`);
  t.match(clean.log, MARK);
  const hacks: Record<string, [code: string, named: RegExp]> = {
    'an exit handler registered from source': ['import atexit as _a\n_a.register(lambda: None)\n', /atexit\.register called from/],
    'a trace function set from source': ['import sys as _s\n_s.settrace(lambda *a: None)\n', /sys\.settrace or sys\.setprofile called/],
    'the runner\'s own function replaced': ['import __main__ as _m\n_m._source_caller = lambda root, frames: None\n', /the runner was changed: _source_caller/],
    'a method of the runner\'s class replaced': ['import __main__ as _m\n_m._NoInput.isatty = lambda self: True\n', /the runner was changed: _NoInput\.isatty/],
    'a builtin replaced': ['import builtins as _b\n_b.print = lambda *a, **k: None\n', /the runner was changed: builtins\.print/],
    'a test added to the test module while it imports': ['import sys as _s\n_s.modules["test_" + __name__].test_extra = lambda: None\n', /was changed while it was imported/],
    // The summary is printed at the end, as pytest's is: an early exit leaves no passing test.
    'the process ended early': ['import os as _o\n_o._exit(0)\n', /reported no test results/],
  };
  for (const [name, [code, named]] of Object.entries(hacks)) {
    const graded = await gradePatch(backend, task!, unifiedDiff(meta.file, source, `${allCalls}\n${code}`), { timeoutMs: 60_000 });
    t.equal(graded.reward, 0, `${name}: 0`);
    t.match(graded.reason, named, `${name}: ${graded.reason}`);
  }
});
