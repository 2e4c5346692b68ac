/**
 * Per-test statuses parsed from test runners' logs: pytest with -rA (short summary lines, and -v
 * progress lines) and the variants SWE-bench's harness uses for some repositories, django's
 * runtests.py, sympy's bin/test, and node's test runner in its TAP and spec reporters. A later
 * line for the same test overrides an earlier one.
 */
import type { TestLogFormat, TestStatus } from '../env.js';

/** Test id -> status. pytest ids are node ids (path::Class::test[param]). */
export type TestStatuses = Map<string, TestStatus>;

// "FAILED tests/test_a.py::test_x - AssertionError: ..." (the -rA short summary). The id is the
// first word after the status: ids with spaces are cut there, as SWE-bench's datasets recorded
// them, and any such line counts, as in SWE-bench's parser (pytest's own tests print nested
// runs' "PASSED [100%]" lines, and pytest-dev rows list "[100%]" among their tests).
const PYTEST_SUMMARY = /^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S+)(?:\s.*)?$/;
// "SKIPPED [1] tests/test_a.py:12: reason" (skips have no node id in the summary)
const PYTEST_SKIP = /^SKIPPED \[\d+\] (\S+?):(\d+):/;
// "tests/test_a.py::test_x PASSED   [ 50%]" (-v progress lines)
const PYTEST_VERBOSE = /^(\S+::\S+) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)(?:\s+\[\s*\d+%\])?\s*$/;

// Colour codes some runs leave in (ESC[32m, or "[32m" with the ESC lost).
const ANSI = /\u001b?\[\d+(;\d+)*m/g;

export function parsePytestLog(log: string): TestStatuses {
  const statuses: TestStatuses = new Map();
  for (const raw of log.split('\n')) {
    const line = raw.replace(ANSI, '').replace(/\r$/, '').trimEnd();
    let m = PYTEST_SKIP.exec(line);
    if (m) {
      statuses.set(`${m[1]}:${m[2]}`, 'SKIPPED');
      continue;
    }
    m = PYTEST_SUMMARY.exec(line);
    if (m) {
      statuses.set(m[2]!, m[1] as TestStatus);
      continue;
    }
    m = PYTEST_VERBOSE.exec(line);
    if (m) statuses.set(m[1]!, m[2] as TestStatus);
  }
  return statuses;
}

/**
 * R2E-Gym's parse_log_pytest (r2egym/repo_analysis/execution_log_parser.py), as its reward reads a
 * run: only the lines after "short test summary info"; a line containing PASSED, else FAILED,
 * else ERROR, anywhere in it; the key its node id's parts after the file, joined by "." and cut at
 * " - " (`r2e_tests/test_1.py::TestA::test_b - msg` is `TestA.test_b`); every other line (SKIPPED,
 * XFAIL, XPASS) ignored; then its colour codes dropped. expected_output_json was recorded by the
 * same parser, so any difference from pytest's own reading here would turn a right fix into 0.
 */
export function parseR2eGymLog(log: string): TestStatuses {
  const statuses: TestStatuses = new Map();
  const marker = 'short test summary info';
  const at = log.indexOf(marker);
  if (at < 0) return statuses;
  for (const raw of log.slice(at + marker.length).trim().split('\n')) {
    const line = raw.replace(/\r$/, '');
    const status: TestStatus | null = line.includes('PASSED') ? 'PASSED' : line.includes('FAILED') ? 'FAILED' : line.includes('ERROR') ? 'ERROR' : null;
    if (status === null) continue;
    statuses.set(r2eGymKey(line.split('::').slice(1).join('.')), status);
  }
  return statuses;
}

/** A key as R2E-Gym's reward compares it: cut at " - ", its colour codes (ESC[<n>m) dropped. */
export function r2eGymKey(key: string): string {
  return key.split(' - ')[0]!.replace(/\u001b\[\d+m/g, '');
}

/**
 * node --test with the TAP reporter. Nested tests are named "parent > child"; a test that
 * has subtests counts as its own entry too. "# SKIP" / "# TODO" directives give SKIPPED.
 */
export function parseNodeTapLog(log: string): TestStatuses {
  const statuses: TestStatuses = new Map();
  const stack: { indent: number; name: string }[] = [];
  for (const raw of log.split('\n')) {
    const line = raw.replace(/\r$/, '');
    const subtest = /^(\s*)# Subtest: (.*)$/.exec(line);
    if (subtest) {
      const indent = subtest[1]!.length;
      while (stack.length && stack[stack.length - 1]!.indent >= indent) stack.pop();
      stack.push({ indent, name: subtest[2]!.trim() });
      continue;
    }
    const result = /^(\s*)(not ok|ok) \d+(?: - ([^#]*?))?\s*(?:# (SKIP|TODO)\b.*)?$/i.exec(line);
    if (!result) continue;
    const indent = result[1]!.length;
    while (stack.length && stack[stack.length - 1]!.indent > indent) stack.pop();
    const parents = stack.filter((s) => s.indent < indent).map((s) => s.name);
    const name = (result[3] ?? stack[stack.length - 1]?.name ?? '').trim();
    const id = [...parents, name].join(' > ');
    const directive = result[4]?.toUpperCase();
    statuses.set(id, directive ? 'SKIPPED' : result[2] === 'ok' ? 'PASSED' : 'FAILED');
    if (stack.length && stack[stack.length - 1]!.indent === indent) stack.pop();
  }
  return statuses;
}

/**
 * node --test with the spec reporter: "✔ name (1ms)", "✖ name (1ms)", "﹣ name (1ms) # reason"
 * (skipped), suites opened by "▶ name" with children indented two spaces further and closed
 * by "✔ name (…)" or "✖ name (…)". The "✖ failing tests:" recap at the end is not re-read.
 */
export function parseNodeSpecLog(log: string): TestStatuses {
  const statuses: TestStatuses = new Map();
  const suites: { indent: number; name: string }[] = [];
  let inFailureDetails = false;
  for (const raw of log.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (/^✖ failing tests:/.test(line.trim())) inFailureDetails = true; // repeats failures with details
    if (inFailureDetails) continue;
    const m = /^(\s*)(✔|✖|﹣|▶) (.*?)(?: \([\d.]+m?s\))?(?: # (.*))?$/.exec(line);
    if (!m) continue;
    const indent = m[1]!.length;
    while (suites.length && suites[suites.length - 1]!.indent >= indent) suites.pop();
    const name = m[3]!.trim();
    const id = [...suites.map((s) => s.name), name].join(' > ');
    if (m[2] === '▶') {
      suites.push({ indent, name });
      continue;
    }
    const skipped = m[2] === '﹣' || /^(SKIP|TODO)\b/i.test(m[4] ?? '');
    statuses.set(id, skipped ? 'SKIPPED' : m[2] === '✔' ? 'PASSED' : 'FAILED');
  }
  return statuses;
}

/**
 * SWE-bench's parse_log_pytest_options (requests, pylint): a parameter that is an absolute path
 * keeps only its last segment (`test_x[/testbed/a/b.py]` is `test_x[/b.py]`), as the datasets'
 * test ids were recorded.
 */
export function parsePytestOptionsLog(log: string): TestStatuses {
  const statuses: TestStatuses = new Map();
  for (const [id, status] of parsePytestLog(log)) {
    const m = /^(.*?)\[(.*)\]$/.exec(id);
    const option = m?.[2];
    const short = option && option.startsWith('/') && !option.startsWith('//') && !option.includes('*') ? `/${option.split('/').pop()}` : option;
    statuses.set(m ? `${m[1]}[${short}]` : id, status);
  }
  return statuses;
}

/** SWE-bench's matplotlib parser: MouseButton parameters print as their numbers. */
export function parsePytestMatplotlibLog(log: string): TestStatuses {
  return parsePytestLog(log.replaceAll('MouseButton.LEFT', '1').replaceAll('MouseButton.RIGHT', '3'));
}

/**
 * django's `tests/runtests.py --verbosity 2`: "test_x (module.Class) ... ok|skipped '…'|FAIL|ERROR".
 * A test with a docstring prints its name, then the docstring's first line with the result:
 * that line is its id (as SWE-bench records it). Output printed between " ... " and the result
 * puts "ok" on a line of its own. Python 3.11's "test_x (module.Class.test_x)" is read as the
 * older "test_x (module.Class)" the datasets use.
 */
export function parseDjangoLog(log: string): TestStatuses {
  const statuses: TestStatuses = new Map();
  const normalize = (name: string) => name.replace(/^(\w+) \((.+)\.\1\)$/, '$1 ($2)');
  let pending: string | null = null;
  for (const raw of log.split('\n')) {
    const line = raw.trim();
    const separator = line.lastIndexOf(' ... ');
    if (separator >= 0) {
      const name = normalize(line.slice(0, separator).split(' ... ').pop()!); // two tests on a line: the result is the last one's
      const result = line.slice(separator + 5);
      pending = name;
      if (/^(ok|OK)$/.test(result)) statuses.set(name, 'PASSED');
      else if (result.startsWith('skipped')) statuses.set(name, 'SKIPPED');
      else if (result === 'FAIL') statuses.set(name, 'FAILED');
      else if (result === 'ERROR') statuses.set(name, 'ERROR');
      else if (result === 'expected failure') statuses.set(name, 'XFAIL');
      else if (result === 'unexpected success') statuses.set(name, 'FAILED');
      else continue; // the result comes later, after the test's own output
      pending = null;
      continue;
    }
    if (pending !== null && /^(ok|FAIL|ERROR)$/.test(line)) {
      statuses.set(pending, line === 'ok' ? 'PASSED' : line === 'FAIL' ? 'FAILED' : 'ERROR');
      pending = null;
    }
  }
  return statuses;
}

/**
 * sympy's `bin/test -C --verbose`: "test_name ok|F|E|f|X|s" under a "path.py[N] " header; the
 * last test of a file also carries the file's right-aligned [OK] / [FAIL] (SWE-bench's own
 * parser drops that test; it is read here). Ids are the bare test names, as in the datasets.
 */
export function parseSympyLog(log: string): TestStatuses {
  const statuses: TestStatuses = new Map();
  const outcomes: Record<string, TestStatus> = { ok: 'PASSED', F: 'FAILED', E: 'ERROR', T: 'ERROR', f: 'XFAIL', X: 'XPASS', s: 'SKIPPED', w: 'SKIPPED', K: 'SKIPPED' };
  for (const raw of log.split('\n')) {
    const line = raw.trim().replace(/\s+\[(OK|FAIL)\]$/, '');
    const m = /^(test_\w+)\s.*?(\S+)$/.exec(line);
    if (m && outcomes[m[2]!]) statuses.set(m[1]!, outcomes[m[2]!]!);
  }
  return statuses;
}


/**
 * Automake's test-suite lines, "PASS: name" / "FAIL: name", as SWE-rebench-V2's parse_log_jq
 * reads them (C projects' `make check`); its other results (XFAIL, SKIP, ERROR) are not read.
 */
export function parseAutomakeLog(log: string): TestStatuses {
  const statuses: TestStatuses = new Map();
  for (const raw of log.split('\n')) {
    const m = /^(PASS|FAIL):\s(.+)$/.exec(raw.trim());
    if (m) statuses.set(m[2]!, m[1] === 'PASS' ? 'PASSED' : 'FAILED');
  }
  return statuses;
}

const PARSERS: Record<TestLogFormat, (log: string) => TestStatuses> = {
  pytest: parsePytestLog,
  'pytest-options': parsePytestOptionsLog,
  'pytest-matplotlib': parsePytestMatplotlibLog,
  django: parseDjangoLog,
  sympy: parseSympyLog,
  'node-tap': parseNodeTapLog,
  'node-spec': parseNodeSpecLog,
  'r2e-gym': parseR2eGymLog,
  automake: parseAutomakeLog,
};

export function parseTestLog(format: TestLogFormat, log: string): TestStatuses {
  return PARSERS[format](log);
}
