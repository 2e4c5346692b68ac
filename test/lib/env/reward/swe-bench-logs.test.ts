/**
 * The log formats of SWE-bench's repositories, on real logs (test/fixtures/logs/SOURCES.md).
 * Expected statuses are read off the logs by hand.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import t from 'tap';

import { parseTestLog } from '../../../../lib/env/reward/test-log.js';

const LOGS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../fixtures/logs');
const log = (name: string) => readFileSync(path.join(LOGS, name), 'utf8');

t.test('django runtests.py --verbosity 2', async (t) => {
  const error = parseTestLog('django', log('django-error.log'));
  t.same(Object.fromEntries(error), {
    'test_callable_path (model_fields.test_filepathfield.FilePathFieldTests)': 'ERROR',
    'test_path (model_fields.test_filepathfield.FilePathFieldTests)': 'PASSED',
  }, "an ERROR, and an 'ok' after the test's own output");

  const skipped = parseTestLog('django', log('django-skipped.log'));
  t.equal(skipped.get('test_watched_roots_contains_files (utils_tests.test_autoreload.WatchmanReloaderTests)'), 'SKIPPED');
  t.equal(skipped.size, 2);

  const docstring = parseTestLog('django', log('django-docstring.log'));
  t.equal(docstring.get('A translated display value is coerced to str.'), 'PASSED', "a docstring's first line is the id");
  t.equal(docstring.get('test_iterator_choices (model_fields.tests.GetFieldDisplayTests)'), 'PASSED');
  t.equal(docstring.get('test_overriding_FIELD_display (model_fields.tests.GetFieldDisplayTests)'), 'FAILED', 'FAIL on its own line after the output');
  t.notOk([...docstring.keys()].some((k) => k.startsWith('Applying')), "migrations' '... OK' lines are not tests");

  const two = parseTestLog('django', log('django-two-on-a-line.log'));
  t.equal(two.get('test_order_of_operations (expressions.tests.BasicExpressionsTests)'), 'PASSED', 'two tests on a line: the result is the second one');
  t.equal(two.get('test_order_by_multiline_sql (expressions.tests.BasicExpressionsTests)'), undefined, 'the first one has no result of its own');
  t.equal(two.get('test_mixed_comparisons1 (expressions.tests.FTimeDeltaTests)'), 'SKIPPED');
  t.equal(two.get('test_hash (expressions.tests.SimpleExpressionTests)'), 'PASSED');

  const py311 = parseTestLog('django', log('django-py311.log'));
  t.equal(py311.get('test_showmigrations_unmigrated_app (migrations.test_commands.MigrateTests)'), 'PASSED', "Python 3.11's Class.test form read as the datasets' form");
  t.equal(py311.get("Transaction wrappers aren't shown for databases that don't support"), 'PASSED', 'a docstring unittest cut with "..."');
  t.equal(py311.size, 7);
});

t.test('sympy bin/test --verbose', async (t) => {
  const ccode = parseTestLog('sympy', log('sympy-ccode.log'));
  t.equal(ccode.size, 32, 'every test of the file, the last one too');
  t.equal(ccode.get('test_ccode_Relational'), 'FAILED');
  t.equal(ccode.get('test_ccode_sinc'), 'FAILED');
  t.equal(ccode.get('test_ccode_For'), 'PASSED', 'the last test, on the line of [FAIL]');
  t.equal(ccode.get('test_printmethod'), 'PASSED');
  const prefixes = parseTestLog('sympy', log('sympy-prefixes.log'));
  t.same(Object.fromEntries(prefixes), { test_prefix_operations: 'FAILED', test_prefix_unit: 'PASSED', test_bases: 'PASSED', test_repr: 'PASSED' });
});

t.test('pytest -rA summaries and their SWE-bench variants', async (t) => {
  const summary = parseTestLog('pytest', log('pytest-summary.log'));
  t.same(Object.fromEntries(summary), {
    'test_example.py:22': 'SKIPPED',
    'test_example.py::test_xfail': 'XFAIL',
    'test_example.py::test_xpass': 'XPASS',
    'test_example.py::test_error': 'ERROR',
    'test_example.py::test_fail': 'FAILED',
  });
  const spaces = parseTestLog('pytest', log('pytest-sklearn-spaces.log'));
  t.same([...spaces.keys()], ["sklearn/feature_extraction/tests/test_text.py::test_callable_analyzer_error[file-AttributeError-'str'"], 'ids cut at the first space, as the datasets recorded them');
  const options = parseTestLog('pytest-options', 'PASSED tests/test_self.py::test_x[/testbed/tests/regrtest_data/foo.py]\nFAILED tests/t.py::test_y[a/b] - boom\n');
  t.same(Object.fromEntries(options), { 'tests/test_self.py::test_x[/foo.py]': 'PASSED', 'tests/t.py::test_y[a/b]': 'FAILED' });
  const mpl = parseTestLog('pytest-matplotlib', 'PASSED lib/matplotlib/tests/test_widgets.py::test_span[MouseButton.LEFT]\n');
  t.same([...mpl.keys()], ['lib/matplotlib/tests/test_widgets.py::test_span[1]']);
  t.equal(parseTestLog('pytest', '\u001b[32mPASSED\u001b[0m tests/a.py::test_b\n').get('tests/a.py::test_b'), 'PASSED', 'colour codes are dropped');
  t.equal(parseTestLog('pytest', 'PASSED [100%]\n').get('[100%]'), 'PASSED', "a nested run's line, as SWE-bench records it (pytest-dev rows list it)");
});

t.test("R2E-Gym's parser on its own example run (sympy, pytest -rA over r2e_tests)", async (t) => {
  const statuses = parseTestLog('r2e-gym', log('r2e-gym-sympy.log'));
  t.equal(statuses.size, 22, '22 tests in the summary');
  t.equal(statuses.get('test_Idx_inequalities_current_fails'), 'FAILED', 'the key cut at " - "');
  t.equal([...statuses.values()].filter((s) => s === 'PASSED').length, 21);
  t.equal(statuses.get('test_Idx_construction'), 'PASSED', 'the file path dropped');
});

t.test("R2E-Gym's quirks, as its parse_log_pytest and reward read the same lines", async (t) => {
  // Each expected value below is what R2E-Gym's own code (execution_log_parser.py, then the
  // reward's " - " cut) returned for these lines: a status word anywhere in the line counts,
  // PASSED first; SKIPPED, XFAIL and XPASS lines are not read; a module error has the empty key.
  const lines = [
    'collected 9 items',
    '=== short test summary info ===',
    'PASSED r2e_tests/test_1.py::TestA::test_b',
    'PASSED r2e_tests/test_1.py::test_param[a b - c]',
    'FAILED r2e_tests/test_1.py::test_f - AssertionError: got PASSED',
    "ERROR r2e_tests/test_2.py::TestB::test_e - fixture 'x' not found",
    'SKIPPED [1] r2e_tests/test_1.py:12: needs numpy',
    'XFAIL r2e_tests/test_1.py::test_x - reason',
    'XPASS r2e_tests/test_1.py::test_xp',
    'FAILED r2e_tests/test_3.py - ImportError: cannot import',
    'PASSED r2e_tests/test_1.py::\u001b[32mtest_col\u001b[0m',
    '=== 3 failed, 3 passed in 0.1s ===',
  ];
  const statuses = parseTestLog('r2e-gym', lines.join('\n'));
  t.same(Object.fromEntries(statuses), {
    'TestA.test_b': 'PASSED',
    'test_param[a b': 'PASSED',
    test_f: 'PASSED',
    'TestB.test_e': 'ERROR',
    '': 'FAILED',
    test_col: 'PASSED',
  });
  t.same(Object.fromEntries(parseTestLog('r2e-gym', lines.slice(2).join('\n'))), {}, 'no "short test summary info": nothing');
});
