import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import t from 'tap';

import { MAX_SKIPPED, loadTasks, streamTasks } from '../../../../lib/env/tasks/load.js';
import { issueText } from '../../../../lib/env/tasks/r2e-gym.js';
import { MAX_ROW_BYTES, MAX_ROW_CONTAINERS } from '../../../../lib/env/tasks/rows.js';
import { patchedPaths } from '../../../../lib/env/patch-files.js';
import type { TaskProblem } from '../../../../lib/env/task.js';

const SWE_MINI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../tasks/swe-mini');

const TEST_PATCH = [
  'diff --git a/tests/test_core.py b/tests/test_core.py',
  '--- a/tests/test_core.py',
  '+++ b/tests/test_core.py',
  '@@ -1 +1,2 @@',
  ' x',
  '+y',
  'diff --git a/tests/test_new.py b/tests/test_new.py',
  'new file mode 100644',
  '--- /dev/null',
  '+++ b/tests/test_new.py',
  '@@ -0,0 +1 @@',
  '+z',
  '',
].join('\n');

function sweRow(overrides: Record<string, unknown> = {}) {
  return {
    instance_id: 'astropy__astropy-12907',
    repo: 'astropy/astropy',
    base_commit: 'd16bfe05a744909de4b27f5875fe0d4ed41ce607',
    problem_statement: 'Modeling separability is wrong for nested models',
    patch: 'diff --git a/a.py b/a.py\n',
    test_patch: TEST_PATCH,
    FAIL_TO_PASS: JSON.stringify(['tests/test_core.py::test_nested']),
    PASS_TO_PASS: '[]',
    install_config: { test_cmd: 'pytest -rA' },
    ...overrides,
  };
}

function r2eRow(overrides: Record<string, unknown> = {}) {
  return {
    repo_name: 'pillow',
    commit_hash: '0123456789abcdef0123',
    docker_image: 'namanjain12/pillow_final:0123456789abcdef0123',
    problem_statement: '[ISSUE]\nTitle: crop fails on empty images\n\nDetails…\n[/ISSUE]',
    expected_output_json: JSON.stringify({ 'TestCrop.test_empty': 'PASSED', 'TestCrop.test_basic': 'PASSED' }),
    ...overrides,
  };
}

const jsonl = (rows: unknown[]) => rows.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n';

t.test('SWE-bench rows: JSON-encoded lists, the test command over the test files, the image', async (t) => {
  const dir = t.testdir({ 'rows.jsonl': jsonl([sweRow(), sweRow({ instance_id: 'a__b-1', FAIL_TO_PASS: ['t::x'], docker_image: 'my/image:1' })]) });
  const { tasks, problems } = await loadTasks(`${dir}/rows.jsonl`);
  t.same(problems, []);
  t.equal(tasks.length, 2);
  const [first, second] = tasks;
  t.equal(first!.id, 'astropy__astropy-12907');
  t.equal(first!.source, 'swe-bench');
  t.equal(first!.image, 'swebench/sweb.eval.x86_64.astropy_1776_astropy-12907:latest');
  t.equal(first!.testCommand, "LANG=C.UTF-8 LC_ALL=C.UTF-8 pytest -rA 'tests/test_core.py' 'tests/test_new.py'", "SWE-rebench's command, its locale, the files quoted");
  t.same(first!.resolution, { rule: 'swe-bench', failToPass: ['tests/test_core.py::test_nested'], passToPass: [] });
  t.same(first!.hiddenTests, { kind: 'patch', patch: TEST_PATCH, paths: ['tests/test_core.py', 'tests/test_new.py'] });
  t.equal(first!.goldPatch, 'diff --git a/a.py b/a.py\n');
  t.same(second!.resolution, { rule: 'swe-bench', failToPass: ['t::x'], passToPass: [] }, 'plain arrays too');
  t.equal(second!.image, 'my/image:1', 'SWE-rebench docker_image wins');

  const json = t.testdir({ 'rows.json': JSON.stringify([sweRow({ install_config: undefined })]) });
  const overridden = await loadTasks(`${json}/rows.json`, { testCommand: 'python -m pytest -rA', imageTemplate: 'local/{id}' });
  t.equal(overridden.tasks[0]!.testCommand, "python -m pytest -rA 'tests/test_core.py' 'tests/test_new.py'");
  t.equal(overridden.tasks[0]!.image, 'local/astropy_1776_astropy-12907');
});

t.test('R2E-Gym rows: the issue inside [ISSUE], the expected map, hidden paths moved out', async (t) => {
  const dir = t.testdir({ 'r2e.jsonl': jsonl([r2eRow(), r2eRow({ commit_hash: 'fedcba9876543210', expected_output_json: { 'A.b': 'FAILED' } })]) });
  const { tasks } = await loadTasks(`${dir}/r2e.jsonl`);
  t.equal(tasks[0]!.id, 'pillow@0123456789ab');
  t.equal(tasks[0]!.problemStatement, 'Title: crop fails on empty images\n\nDetails…');
  t.same(tasks[0]!.resolution, { rule: 'r2e-gym', expected: { 'TestCrop.test_empty': 'PASSED', 'TestCrop.test_basic': 'PASSED' } });
  t.same(tasks[1]!.resolution, { rule: 'r2e-gym', expected: { 'A.b': 'FAILED' } });
  t.equal(tasks[0]!.testCommand, 'bash run_tests.sh');
  t.match(tasks[0]!.hiddenTests, { kind: 'image-paths', moves: [{ from: '/r2e_tests', to: '/testbed/r2e_tests' }, { from: '/testbed/run_tests.sh' }] });
  t.equal(issueText('no markers here '), 'no markers here');
  t.equal(tasks[0]!.logFormat, 'r2e-gym', "read by R2E-Gym's own parser");
  t.equal(tasks[0]!.guard, undefined, 'pytest runs the tests: graded under the guard');
});

t.test("R2E-Gym rows whose run_tests.sh runs R2E-Gym's unittest runner are graded without pytest's guard", async (t) => {
  const unittestPillow = r2eRow({ execution_result_content: JSON.stringify({ test_file_names: ['test_1.py', 'unittest_custom_runner.py'], test_file_codes: ['', ''] }) });
  const pytestPillow = r2eRow({ commit_hash: '1111111111111111', execution_result_content: { test_file_names: ['test_1.py'], test_file_codes: [''] } });
  const tornado = r2eRow({ repo_name: 'tornado', docker_image: 'namanjain12/tornado_final:0123' });
  const dir = t.testdir({ 'r2e.jsonl': jsonl([unittestPillow, pytestPillow, tornado]) });
  const { tasks } = await loadTasks(`${dir}/r2e.jsonl`);
  t.same(tasks.map((task) => task.guard), [false, undefined, false], 'the runner never loads pytest, so its guard could only void every run');
  const bad = t.testdir({ 'r2e.jsonl': jsonl([r2eRow({ execution_result_content: '{oops' })]) });
  await t.rejects(loadTasks(`${bad}/r2e.jsonl`), { message: /:1: row\.execution_result_content is not valid JSON/ });
});

t.test('a bad row names the file, the line and the field', async (t) => {
  const dir = t.testdir({
    'bad.jsonl': jsonl([sweRow(), '{not json', sweRow({ FAIL_TO_PASS: 'tests::x' }), sweRow({ instance_id: 7 }), '', sweRow({ test_patch: undefined }), sweRow({ instance_id: 'o__r-2' })]),
  });
  const file = `${dir}/bad.jsonl`;
  await t.rejects(loadTasks(file), { code: 'ERR_SWERL_INVALID_TASK', message: `${file}:2: the row is not valid JSON` }, 'stops at the first');
  const seen: TaskProblem[] = [];
  const { tasks, problems } = await loadTasks(file, { onError: 'skip', onProblem: (p) => seen.push(p) });
  t.equal(tasks.length, 2, 'the good rows load');
  t.same(problems.map((p) => p.line), [2, 3, 4, 6], 'blank lines are not rows, but count as lines');
  t.match(problems[1]!.message, /^row\.FAIL_TO_PASS is a string but not a JSON-encoded list/);
  t.match(problems[2]!.message, /^row\.instance_id must be of type string/);
  t.match(problems[3]!.message, /^row\.test_patch is required/);
  t.same(seen, problems, 'reported as they happen');

  const noCommand = t.testdir({ 'rows.json': JSON.stringify([sweRow({ repo: 'someone/else', install_config: {} })]) });
  await t.rejects(loadTasks(`${noCommand}/rows.json`), {
    message: /rows\.json:1: row\.repo is "someone\/else", a repository with no built-in SWE-bench test command, and the row has no install_config\.test_cmd; give one: --test-command/,
  });
  const badParser = t.testdir({ 'rows.json': JSON.stringify([sweRow({ install_config: { test_cmd: 'pytest', log_parser: 'parse_log_cobol' } })]) });
  await t.rejects(loadTasks(`${badParser}/rows.json`), { message: /row\.install_config\.log_parser is "parse_log_cobol", a parser swerl does not have; use one of parse_log_pytest/ });
  const unknown = t.testdir({ 'rows.jsonl': jsonl([{ hello: 1 }]) });
  await t.rejects(loadTasks(`${unknown}/rows.jsonl`), { message: /:1: row is neither a SWE-bench row/ });
  const r2eBad = t.testdir({ 'rows.jsonl': jsonl([r2eRow({ expected_output_json: '{oops' })]) });
  await t.rejects(loadTasks(`${r2eBad}/rows.jsonl`), { message: /:1: row\.expected_output_json is not valid JSON/ });
  await t.rejects(loadTasks('/no/such/file.jsonl'), { message: /no such file or folder/ });
});

t.test('JSONL is streamed: tasks arrive before the file is fully read', async (t) => {
  const rows = Array.from({ length: 5000 }, (_, i) => sweRow({ instance_id: `o__r-${i}` }));
  const dir = t.testdir({ 'big.jsonl': jsonl(rows) });
  let count = 0;
  for await (const task of streamTasks(`${dir}/big.jsonl`)) {
    if (count === 0) t.equal(task.id, 'o__r-0');
    count++;
    if (count === 10) break; // stopping early is fine
  }
  t.equal(count, 10);
});

t.test('swerl folders: the bundled suite, one folder, and errors naming the file', async (t) => {
  const { tasks, problems } = await loadTasks(SWE_MINI);
  t.same(problems, []);
  t.ok(tasks.length >= 24, `${tasks.length} tasks in swe-mini`);
  const languages = new Set(tasks.map((task) => task.metadata.language));
  t.same([...languages].sort(), ['javascript', 'python']);
  for (const difficulty of ['easy', 'medium', 'hard']) {
    t.ok(tasks.some((task) => task.metadata.difficulty === difficulty), `has ${difficulty} tasks`);
  }
  for (const task of tasks) {
    t.ok(task.goldPatch && task.problemStatement.length > 40 && task.hiddenTests.kind === 'files' && task.hiddenTests.paths.length > 0, `${task.id} is complete`);
    if (task.hiddenTests.kind === 'files') {
      const touched = patchedPaths(task.goldPatch!);
      t.same(touched.filter((p) => (task.hiddenTests as { paths: string[] }).paths.includes(p)), [], `${task.id}: the gold patch touches no hidden test`);
    }
  }
  const withIgnore = tasks.filter((task) => task.gitignore !== undefined);
  t.equal(withIgnore.length, 25, "the tasks' .gitignore files, kept beside repo/ as gitignore, are loaded");
  t.ok(withIgnore.every((task) => /__pycache__\/|node_modules/.test(task.gitignore!)));
  const both = t.testdir({ 'x-task': { 'task.json': JSON.stringify({ id: 'x-task', language: 'python', difficulty: 'easy', test_command: 'true', log_format: 'pytest', fail_to_pass: ['a'], pass_to_pass: [] }), 'issue.md': 'x', gitignore: 'a\n', repo: { '.gitignore': 'b\n' } } });
  await t.rejects(loadTasks(path.join(both, 'x-task')), { message: /gitignore and repo\/\.gitignore both exist; keep one/ });
  const one = await loadTasks(path.join(SWE_MINI, tasks[0]!.id));
  t.equal(one.tasks.length, 1, 'a single task folder loads too');

  const suite = t.testdir({
    good: { 'task.json': '{}', 'issue.md': 'x', repo: {} },
    broken: { 'task.json': '{"id": "broken"', repo: {} },
    notes: { 'README.md': 'not a task' },
  });
  const { tasks: none, problems: found } = await loadTasks(suite, { onError: 'skip' });
  t.same(none, []);
  t.same(
    found.map((p) => [path.basename(p.file), p.message.split(' ').slice(0, 2).join(' ')]),
    [
      ['broken', 'task.json is'],
      ['good', 'task.json.id is'],
    ],
  );
  await t.rejects(loadTasks(suite), { code: 'ERR_SWERL_INVALID_TASK', message: /broken: task\.json is not valid JSON/ });
  await t.rejects(loadTasks(suite, { format: 'swe-bench' }), { message: /is a folder, but format is swe-bench/ });
});

t.test("the harness's specs: command and log format by repository and version, directives quoted", async (t) => {
  const djangoPatch = [
    'diff --git a/tests/forms_tests/tests/test_formsets.py b/tests/forms_tests/tests/test_formsets.py',
    '--- a/tests/forms_tests/tests/test_formsets.py',
    '+++ b/tests/forms_tests/tests/test_formsets.py',
    'diff --git a/tests/forms_tests/data.json b/tests/forms_tests/data.json',
    '--- a/tests/forms_tests/data.json',
    '+++ b/tests/forms_tests/data.json',
    'diff --git a/tests/old_test.py b/tests/old_test.py',
    'deleted file mode 100644',
    '--- a/tests/old_test.py',
    '+++ /dev/null',
    '',
  ].join('\n');
  const evil = 'diff --git a/tests/$(touch${IFS}/tmp/x).py b/tests/$(touch${IFS}/tmp/x).py\n--- a/tests/$(touch${IFS}/tmp/x).py\n+++ b/tests/$(touch${IFS}/tmp/x).py\n';
  const base = { install_config: undefined, log_parser: undefined };
  const dir = t.testdir({
    'rows.jsonl': jsonl([
      sweRow({ ...base, instance_id: 'django__django-1', repo: 'django/django', version: '3.0', test_patch: djangoPatch }),
      sweRow({ ...base, instance_id: 'django__django-2', repo: 'django/django', version: '4.2', test_patch: djangoPatch }),
      sweRow({ ...base, instance_id: 'sympy__sympy-1', repo: 'sympy/sympy', version: '1.1' }),
      sweRow({ ...base, instance_id: 'psf__requests-1', repo: 'psf/requests', version: '2.0' }),
      sweRow({ ...base, instance_id: 'evil__row-1', repo: 'pallets/flask', version: '2.0', test_patch: evil }),
    ]),
  });
  const { tasks } = await loadTasks(`${dir}/rows.jsonl`);
  const [django30, django42, sympy, requests, evilTask] = tasks;
  t.equal(django30!.testCommand, "LANG=en_US.UTF-8 LC_ALL=en_US.UTF-8 PYTHONIOENCODING=utf8 LANGUAGE=en_US:en ./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 'forms_tests.tests.test_formsets'", 'django 3.0: locale, module labels, data files and deleted files left out');
  t.equal(django42!.testCommand, "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 'forms_tests.tests.test_formsets'");
  t.equal(django42!.logFormat, 'django');
  t.same(django42!.harnessFiles, ['tests/runtests.py', 'tests/test_sqlite.py']);
  t.match(sympy!.testCommand, /^PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin\/test -C --verbose 'tests\/test_core\.py' 'tests\/test_new\.py'$/);
  t.equal(sympy!.logFormat, 'sympy');
  t.equal(requests!.logFormat, 'pytest-options');
  t.equal(django42!.env?.PATH?.split(':')[0], '/opt/miniconda3/envs/testbed/bin', "SWE-bench images' conda env on PATH");
  t.equal(evilTask!.testCommand, "pytest -rA 'tests/$(touch${IFS}/tmp/x).py'", 'a path is quoted, never spliced into the shell');
  const echoed = spawnSync('sh', ['-c', evilTask!.testCommand.replace(/^pytest -rA/, 'printf %s')], { encoding: 'utf8', cwd: dir });
  t.equal(echoed.stdout, 'tests/$(touch${IFS}/tmp/x).py', 'the shell sees the path as it is: nothing runs');
});

t.test('hostile rows are skipped by name: too deep, not UTF-8; a byte-order mark is not an error', async (t) => {
  const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
  const good = (id: string) => JSON.stringify(sweRow({ instance_id: id }));
  const file = `${t.testdir()}/hostile.jsonl`;
  const { writeFileSync } = await import('node:fs');
  writeFileSync(file, Buffer.concat([
    Buffer.from('\ufeff' + good('o__r-1') + '\n'),
    Buffer.from(good('o__r-2').slice(0, -1) + `, "deep": ${deep(5000)}}\n`),
    Buffer.from(good('o__r-3').slice(0, -1) + `, "deeper": ${deep(100_000)}}\n`),
    Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a]),
    Buffer.from(good('o__r-5') + '\r\n'),
  ]));
  const { tasks, problems } = await loadTasks(file, { onError: 'skip' });
  t.same(tasks.map((task) => task.id), ['o__r-1', 'o__r-5'], 'the good rows load, BOM and CRLF included');
  t.same(problems.map((p) => `${p.line}: ${p.message}`), [
    '2: the row field deep nests more than 64 levels deep; no real row does',
    '3: the row field deeper nests more than 64 levels deep; no real row does',
    '4: the row is not valid UTF-8',
  ]);
  await t.rejects(loadTasks(file), { code: 'ERR_SWERL_INVALID_TASK', message: `${file}:2: the row field deep nests more than 64 levels` });
  const array = `${t.testdir()}/deep.json`;
  writeFileSync(array, `[${good('o__r-1')}, ${deep(100_000)}]`);
  await t.rejects(loadTasks(array), { message: `${array}:2: the row nests more than 64 levels` });
});

t.test('a row is measured before it is parsed: a 40 MB line of brackets is refused without being parsed', async (t) => {
  const { writeFileSync } = await import('node:fs');
  const dir = t.testdir();
  const good = JSON.stringify(sweRow({ instance_id: 'o__r-1' }));
  const depth = 20_000_000; // JSON.parse alone would build 20 million arrays (~10 s, ~2 GB)
  const file = `${dir}/brackets.jsonl`;
  writeFileSync(file, Buffer.concat([Buffer.from(`${good}\n{"deep": `), Buffer.alloc(depth, '['), Buffer.alloc(depth, ']'), Buffer.from('}\n')]));
  // Not a time bound (load moves it): JSON.parse is watched, and never sees the long line.
  const parse = JSON.parse;
  let longest = 0;
  JSON.parse = (text: string, ...rest: never[]) => {
    longest = Math.max(longest, text.length);
    return parse(text, ...rest);
  };
  let loaded: Awaited<ReturnType<typeof loadTasks>>;
  try {
    loaded = await loadTasks(file, { onError: 'skip' });
  } finally {
    JSON.parse = parse;
  }
  const { tasks, problems } = loaded;
  t.same(tasks.map((task) => task.id), ['o__r-1']);
  t.same(problems.map((p) => `${p.line}: ${p.message}`), ['2: the row field deep nests more than 64 levels deep; no real row does']);
  t.ok(longest < depth, `JSON.parse never saw the 40 MB line (longest text parsed: ${longest} characters)`);

  const many = `${dir}/objects.jsonl`;
  writeFileSync(many, `${good.slice(0, -1)}, "extra": [${'{},'.repeat(MAX_ROW_CONTAINERS)}{}]}\n`);
  await t.rejects(loadTasks(many), { code: 'ERR_SWERL_INVALID_TASK', message: `${many}:1: the row field extra holds more than 1000000 arrays and objects; no real row does` });
  const fewer = `${dir}/fewer.jsonl`;
  // The row, its install_config, the list and MAX - 3 objects: exactly at the bound.
  writeFileSync(fewer, `${good.slice(0, -1)}, "extra": [${'{},'.repeat(MAX_ROW_CONTAINERS - 4)}{}]}\n`);
  t.equal((await loadTasks(fewer)).tasks.length, 1, 'exactly at the bound it loads');
});

t.test('.json datasets: each element is a row of its own, truncated and trailing text named', async (t) => {
  const good = (id: string) => JSON.stringify(sweRow({ instance_id: id }));
  const dir = t.testdir({
    'mixed.json': `[${good('o__r-1')}, ${JSON.stringify(sweRow({ instance_id: 7 }))}, ${'['.repeat(100)}${']'.repeat(100)}, ${good('o__r-4')}]`,
    'truncated.json': `[${good('o__r-1')}, ${good('o__r-2')}`,
    'trailing.json': `[${good('o__r-1')}] [${good('o__r-2')}]`,
    'comma.json': `[${good('o__r-1')},]`,
    'empty.json': ' [ ] ',
    'object.json': good('o__r-1'),
  });
  const lines = async (name: string) => (await loadTasks(`${dir}/${name}`, { onError: 'skip' })).problems.map((p) => `${p.line}: ${p.message}`);
  const ids = async (name: string) => (await loadTasks(`${dir}/${name}`, { onError: 'skip' })).tasks.map((task) => task.id);
  t.same(await ids('mixed.json'), ['o__r-1', 'o__r-4'], 'the good elements load beside the bad ones');
  t.match(await lines('mixed.json'), [/^2: row\.instance_id must be of type string$/, /^3: the row nests more than 64 levels deep/]);
  t.same(await ids('truncated.json'), ['o__r-1', 'o__r-2']);
  t.match(await lines('truncated.json'), [/^3: the row is missing: the file ends before its array closes \(truncated\?\)$/]);
  t.match(await lines('trailing.json'), [/^2: the row is past the array's closing bracket/]);
  t.match(await lines('comma.json'), [/^2: the row is not valid JSON/], 'a trailing comma leaves an empty element');
  t.same(await ids('empty.json'), []);
  t.same(await lines('empty.json'), []);
  t.same(await ids('object.json'), ['o__r-1'], 'a file of one object is one row');
});

t.test('a source of nothing but bad rows is given up on after MAX_SKIPPED, even with onError: skip', async (t) => {
  const file = `${t.testdir()}/numbers.jsonl`;
  const { writeFileSync } = await import('node:fs');
  writeFileSync(file, '1\n'.repeat(MAX_SKIPPED + 1));
  let reported = 0;
  await t.rejects(loadTasks(file, { onError: 'skip', format: 'swe-bench', onProblem: () => reported++ }), {
    code: 'ERR_SWERL_INVALID_TASK',
    message: new RegExp(`^${file}:${MAX_SKIPPED + 1}: row must be of type object; stopping: over ${MAX_SKIPPED} tasks of ${file} were refused`),
  });
  t.equal(reported, MAX_SKIPPED, 'each one before the bound was reported');
});

t.test('task folders: task.json, issue.md and gold.patch bounded, UTF-8, measured before parsing', async (t) => {
  const { writeFileSync } = await import('node:fs');
  const json = (id: string) => JSON.stringify({ id, language: 'python', difficulty: 'easy', test_command: 'pytest', log_format: 'pytest', fail_to_pass: ['t::a'], pass_to_pass: [] });
  const suite = t.testdir({
    bom: { 'task.json': '\ufeff' + json('bom'), 'issue.md': '\ufeffThe issue', repo: {} },
    deep: { 'task.json': json('deep').slice(0, -1) + `, "x": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`, 'issue.md': 'x', repo: {} },
    latin1: { 'task.json': json('latin1'), 'issue.md': 'x', repo: {} },
    huge: { 'task.json': json('huge'), 'issue.md': 'x', repo: {} },
  });
  writeFileSync(`${suite}/latin1/issue.md`, Buffer.from([0x63, 0x61, 0x66, 0xe9]));
  writeFileSync(`${suite}/huge/gold.patch`, Buffer.alloc(MAX_ROW_BYTES + 1, 0x61));
  const { tasks, problems } = await loadTasks(suite, { onError: 'skip' });
  t.same(tasks.map((task) => [task.id, task.problemStatement]), [['bom', 'The issue']], 'a byte-order mark is dropped');
  t.same(problems.map((p) => `${path.basename(p.file)}: ${p.message}`), [
    'deep: task.json field x nests more than 64 levels deep; no real row does',
    "huge: gold.patch is larger than 64 MiB, the most a task file may be (a dataset row's bound)",
    'latin1: issue.md is not valid UTF-8',
  ]);
});
