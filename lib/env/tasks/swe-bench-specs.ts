/**
 * How SWE-bench's evaluation harness runs each repository's tests (its per-repository specs
 * and log parsers, as of harness v4): the command, the log format, the test directives taken
 * from a test patch, and the harness's own files. SWE-rebench rows bring their own command and
 * parser name in install_config.
 */
import type { TestLogFormat } from '../env.js';
import { shellQuote } from '../sandbox/sandbox.js';
import { patchFiles } from '../patch-files.js';

export interface TestSpec {
  /** The command; the test directives are appended, each quoted. */
  command: string;
  logFormat: TestLogFormat;
  /** Files of the runner itself, restored before grading. */
  harnessFiles?: string[];
}

const PYTEST = 'pytest -rA';
const DJANGO = './tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1';
// django 1.7-3.2 ran under these locale settings in the harness.
const DJANGO_LOCALE = 'LANG=en_US.UTF-8 LC_ALL=en_US.UTF-8 PYTHONIOENCODING=utf8 LANGUAGE=en_US:en';
const DJANGO_HARNESS = ['tests/runtests.py', 'tests/test_sqlite.py'];
const SYMPY_HARNESS = ['bin/test', 'sympy/testing/runtests.py', 'sympy/utilities/runtests.py'];

function versionNumber(version: string | undefined): number {
  const m = /^v?(\d+)\.(\d+)/.exec(version ?? '');
  return m ? Number(m[1]) + Number(m[2]) / 100 : NaN;
}

/** The spec of a SWE-bench repository at a version, or null for a repository it does not cover. */
export function sweBenchSpec(repo: string | undefined, version: string | undefined): TestSpec | null {
  const v = versionNumber(version);
  switch (repo) {
    case 'astropy/astropy':
      return v <= 1.3 ? { command: 'pytest -rA -vv -o console_output_style=classic --tb=no', logFormat: 'pytest' } : { command: PYTEST, logFormat: 'pytest' };
    case 'django/django': {
      const command = v === 1.09 ? './tests/runtests.py --verbosity 2' : DJANGO;
      return { command: v >= 1.07 && v <= 3.02 ? `${DJANGO_LOCALE} ${command}` : command, logFormat: 'django', harnessFiles: DJANGO_HARNESS };
    }
    case 'matplotlib/matplotlib':
      return { command: PYTEST, logFormat: 'pytest-matplotlib' };
    case 'mwaskom/seaborn':
      return { command: 'pytest --no-header -rA', logFormat: 'pytest' };
    case 'psf/requests':
    case 'pylint-dev/pylint':
    case 'pydicom/pydicom':
      return { command: PYTEST, logFormat: 'pytest-options' };
    case 'pallets/flask':
    case 'pydata/xarray':
    case 'pytest-dev/pytest':
    case 'scikit-learn/scikit-learn':
    case 'pylint-dev/astroid':
    case 'marshmallow-code/marshmallow':
    case 'pvlib/pvlib-python':
    case 'pyvista/pyvista':
    case 'sqlfluff/sqlfluff':
      return { command: PYTEST, logFormat: 'pytest' };
    case 'sphinx-doc/sphinx':
      return { command: 'tox --current-env -epy39 -v --', logFormat: 'pytest' };
    case 'sympy/sympy':
      return { command: "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose", logFormat: 'sympy', harnessFiles: SYMPY_HARNESS };
    default:
      return null;
  }
}

/** The harness's parser names (SWE-rebench's install_config.log_parser, SWE-bench v5's log_parser). */
export const LOG_PARSER_NAMES: Record<string, TestLogFormat> = {
  parse_log_pytest: 'pytest',
  parse_log_pytest_v2: 'pytest',
  parse_log_pytest_options: 'pytest-options',
  parse_log_django: 'django',
  parse_log_sympy: 'sympy',
  parse_log_matplotlib: 'pytest-matplotlib',
  parse_log_seaborn: 'pytest',
  parse_log_astropy: 'pytest',
  parse_log_scikit: 'pytest',
  parse_log_sphinx: 'pytest',
  parse_log_flask: 'pytest',
  parse_log_xarray: 'pytest',
  parse_log_astroid: 'pytest',
  parse_log_marshmallow: 'pytest',
  parse_log_pvlib: 'pytest',
  parse_log_pyvista: 'pytest',
  parse_log_sqlfluff: 'pytest',
  parse_log_requests: 'pytest-options',
  parse_log_pylint: 'pytest-options',
  parse_log_pydicom: 'pytest-options',
  // SWE-rebench-V2's, for C projects' automake `make check`
  parse_log_jq: 'automake',
};

// Files of a test patch that are data, not tests to run (the harness's list, "csv" without its dot).
const NON_TEST_ENDINGS = ['.json', '.png', 'csv', '.txt', '.md', '.jpg', '.jpeg', '.pkl', '.yml', '.yaml', '.toml'];

/**
 * The test directives of a test patch: the files it adds or changes (not those it deletes),
 * data files left out; django's as dotted module labels (tests/a/test_b.py is a.test_b).
 */
export function testDirectives(testPatch: string, repo: string | undefined): string[] {
  const directives: string[] = [];
  for (const { newPath: file } of patchFiles(testPatch, 'row.test_patch')) {
    if (file === null || NON_TEST_ENDINGS.some((ending) => file.endsWith(ending))) continue;
    directives.push(repo === 'django/django' ? file.replace(/\.py$/, '').replace(/^tests\//, '').replaceAll('/', '.') : file);
  }
  return [...new Set(directives)];
}

/** The command with its directives appended, each one shell-quoted (a row's paths are data). */
export function withDirectives(command: string, directives: readonly string[]): string {
  return [command, ...directives.map(shellQuote)].join(' ');
}
