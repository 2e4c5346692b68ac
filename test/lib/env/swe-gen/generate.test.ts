import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import { BUG_KINDS } from '../../../../lib/env/swe-gen/bugs.js';
import { SWE_GEN_VERSION, generateSweGenTask, type GeneratedTask } from '../../../../lib/env/swe-gen/generate.js';
import type { SweGenTaskOptions } from '../../../../lib/env/swe-gen/options.js';
import type { Split } from '../../../../lib/env/swe-gen/splits.js';

const generate = (seed: number, options: Partial<SweGenTaskOptions> = {}, split: Split = 'train') => generateSweGenTask(split, seed, options);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
const source = (task: GeneratedTask) => task.files[`repo/${task.metadata.file}`]!;
const taskJson = (task: GeneratedTask) => JSON.parse(task.files['task.json']!) as { id: string; difficulty: string; test_command: string; fail_to_pass: string[]; pass_to_pass: string[] };
/** The fixed file: the buggy one with each bug's before replaced by its after. */
const fixedSource = (task: GeneratedTask) => task.metadata.bugs.reduce((text, b) => text.replace(b.before, b.after), source(task));

const DEFAULT_TASKS = range(0, 300).map((seed) => generate(seed));
const TWO_BUG_TASKS = range(0, 100).map((seed) => generate(seed, { bugs: 2 }));

t.test('the same seed and options give the same bytes; options and splits change them', async (t) => {
  for (const seed of range(0, 20)) {
    t.same(generate(seed).files, DEFAULT_TASKS[seed]!.files, `train seed ${seed}`);
    t.same(generate(seed, { bugs: 2 }).files, TWO_BUG_TASKS[seed]!.files, `train seed ${seed}, two bugs`);
  }
  t.not(generate(7, {}, 'heldout').files['task.json'], DEFAULT_TASKS[7]!.files['task.json'], 'held-out seed 7 is another task');
  t.not(source(generate(7, { languages: ['python'], kinds: ['comparison'] })), '', 'options are taken');
});

t.test('a seed names the same task from one version to the next', async (t) => {
  // Whoever changes what a seed gives bumps SWE_GEN_VERSION and records the new digest here:
  // suites on disk and published results name tasks by seed.
  const digest = createHash('sha256');
  for (const seed of range(0, 10)) digest.update(JSON.stringify(DEFAULT_TASKS[seed]!.files));
  for (const seed of range(0, 5)) digest.update(JSON.stringify(generate(seed, { bugs: 2 }, 'heldout').files));
  // Version 4: JavaScript tasks run their test file directly (node --test-reporter=tap FILE).
  t.equal(SWE_GEN_VERSION, 4);
  t.equal(digest.digest('hex'), '71f951c0e3119eabd9e438c7ea823e7de37f725f2b8404bd97a23156654179ac', 'version 4');
  // and tasks/README.md shows what seeds 4 and 9 give
  const readme = readFileSync(new URL('../../../../tasks/README.md', import.meta.url), 'utf8');
  for (const seed of [4, 9]) t.ok(readme.includes(DEFAULT_TASKS[seed]!.files['issue.md']!), `the README's issue of train seed ${seed}`);
  const { before, after } = DEFAULT_TASKS[4]!.metadata;
  t.ok(readme.includes(`"before": ${JSON.stringify(before)},\n  "after": ${JSON.stringify(after)},`), "the README's swe_gen of train seed 4");
});

t.test('different seeds give different programs, names, files and examples', async (t) => {
  const sources = new Set(DEFAULT_TASKS.map(source));
  t.equal(sources.size, DEFAULT_TASKS.length, 'no two of 300 seeds give the same file');
  const functions = new Set(DEFAULT_TASKS.map((task) => task.metadata.function));
  t.ok(functions.size >= 40, `${functions.size} names of buggy functions`);
  const files = new Set(DEFAULT_TASKS.map((task) => task.metadata.file));
  t.ok(files.size >= 20, `${files.size} file names`);
  const issues = new Set(DEFAULT_TASKS.map((task) => task.files['issue.md']));
  t.equal(issues.size, DEFAULT_TASKS.length, 'every issue is its own');
});

t.test('every bug kind and both languages appear, with the defaults and with two bugs', async (t) => {
  for (const [name, tasks] of [['one bug', DEFAULT_TASKS], ['two bugs', TWO_BUG_TASKS]] as const) {
    const seen = new Set(tasks.flatMap((task) => task.metadata.bugs.map((b) => `${task.metadata.language} ${b.kind}`)));
    t.same([...seen].sort(), ['javascript', 'python'].flatMap((l) => BUG_KINDS.map((k) => `${l} ${k}`)).sort(), `${name}: every language x kind`);
  }
  for (const first of [0, 10, 290]) {
    const pairs = DEFAULT_TASKS.slice(first, first + 10).map((task) => `${task.metadata.language} ${task.metadata.kind}`);
    t.equal(new Set(pairs).size, 10, `seeds ${first}-${first + 9} hold each language x kind once`);
  }
  t.ok(TWO_BUG_TASKS.every((task) => task.metadata.bugs.length === 2 && task.metadata.bugs[0]!.function !== task.metadata.bugs[1]!.function), 'two bugs: two functions');
});

t.test('the defaults fit a tiny model: 2-4 functions in 15-40 lines, a one-line fix, a short issue', async (t) => {
  const lengths: number[] = [];
  for (const task of DEFAULT_TASKS) {
    const text = source(task);
    const lines = text.split('\n').length - 1;
    if (!(lines >= 15 && lines <= 40)) t.fail(`${task.id}: ${lines} lines`);
    const functions = (text.match(/^(def|export function) /gm) ?? []).length;
    if (!(functions >= 2 && functions <= 4)) t.fail(`${task.id}: ${functions} functions`);
    const bug = task.metadata;
    const fixLines = bug.kind === 'missing-case' ? bug.after.split('\n').length - 1 : bug.after.split('\n').length;
    if (fixLines !== 1) t.fail(`${task.id}: a fix of ${fixLines} lines`);
    lengths.push(task.files['issue.md']!.length);
  }
  lengths.sort((a, b) => a - b);
  const median = lengths[lengths.length >> 1]!;
  t.ok(median >= 200 && median <= 400, `issue median ${median} characters`);
  t.ok(lengths[0]! >= 150 && lengths[lengths.length - 1]! <= 450, `issues of ${lengths[0]} to ${lengths[lengths.length - 1]} characters`);
});

t.test('the issue shows the failing call but never the buggy line or its fix', async (t) => {
  for (const task of [...DEFAULT_TASKS, ...TWO_BUG_TASKS]) {
    const issue = task.files['issue.md']!;
    for (const bug of task.metadata.bugs) {
      for (const line of [...bug.before.split('\n'), ...bug.after.split('\n')]) {
        if (issue.includes(line.trim())) t.fail(`${task.id}: the issue holds ${JSON.stringify(line.trim())}`);
      }
      if (!issue.includes(`\`${bug.function}(`)) t.fail(`${task.id}: the issue shows no call of ${bug.function}`);
    }
    if (!issue.includes(task.metadata.file)) t.fail(`${task.id}: the issue does not name ${task.metadata.file}`);
  }
  t.pass('400 issues read');
});

t.test('before and after: each before a unique whole line at its line number; replacing them gives the fix', async (t) => {
  for (const task of [...DEFAULT_TASKS, ...TWO_BUG_TASKS]) {
    const text = source(task);
    const lines = text.split('\n');
    for (const bug of task.metadata.bugs) {
      if (text.split(bug.before).length !== 2) t.fail(`${task.id}: before occurs ${text.split(bug.before).length - 1} times`);
      if (lines[bug.line - 1] !== bug.before) t.fail(`${task.id}: line ${bug.line} is not before`);
      if (bug.kind === 'missing-case' ? !bug.after.endsWith(`\n${bug.before}`) : bug.after.includes('\n')) t.fail(`${task.id}: after has the wrong shape`);
    }
    t.same(task.metadata.bugs[0], Object.fromEntries(Object.keys(task.metadata.bugs[0]!).map((k) => [k, task.metadata[k as keyof typeof task.metadata]])), `${task.id}: the flat fields are the first bug`);
  }
});

t.test('task.json: ids name split and seed; tests; visible tests are the hidden ones without the issue tests', async (t) => {
  const held = generate(42, {}, 'heldout');
  t.match(taskJson(held).id, /^gen-(py|js)-heldout-000042$/);
  t.equal(held.metadata.split, 'heldout');
  t.equal(held.metadata.seed, 42);
  for (const task of [...DEFAULT_TASKS.slice(0, 50), ...TWO_BUG_TASKS.slice(0, 20)]) {
    const json = taskJson(task);
    const { language, seed, file, bugs } = task.metadata;
    t.equal(json.id, `gen-${language === 'python' ? 'py' : 'js'}-train-${String(seed).padStart(6, '0')}`);
    t.equal(json.difficulty, bugs.length === 1 ? 'easy' : 'medium');
    t.equal(json.fail_to_pass.length, bugs.length, 'one issue test per bug');
    t.ok(json.pass_to_pass.length >= 1, 'and ordinary tests');
    const module = file.replace(/\.(py|js)$/, '');
    const testPath = language === 'python' ? `tests/test_${module}.py` : `test/${module}.test.js`;
    t.ok(json.test_command.endsWith(` ${testPath}`));
    const hidden = task.files[`tests/${testPath}`]!;
    const visible = task.files[`repo/${testPath}`]!;
    const name = (id: string) => (language === 'python' ? id.split('::')[1]! : id);
    for (const id of json.fail_to_pass) {
      t.ok(hidden.includes(name(id)) && !visible.includes(name(id)), `${json.id}: ${id} is hidden only`);
    }
    for (const id of json.pass_to_pass) t.ok(visible.includes(name(id)), `${json.id}: ${id} is visible`);
    if (language === 'javascript') t.same(JSON.parse(task.files['repo/package.json']!), { name: module, type: 'module' });
  }
});

t.test('hidden tests check what the issue never shows: two more failing calls per bug, six ordinary checks', async (t) => {
  /** The calls of a test function's assertions (`name(...)` up to the comparison), in order. */
  const testCalls = (file: string, test: string, language: string): string[] => {
    const start = file.indexOf(language === 'python' ? `def ${test}():` : `test('${test}'`);
    const body = file.slice(start, file.indexOf(language === 'python' ? '\n\n' : '\n});', start));
    // Arguments are literals (numbers, lists, None/null), never calls: a call has no parentheses inside.
    return [...body.matchAll(/assert(?:\.deepEqual\()? ?(\w+\([^()]*\))/g)].map((m) => m[1]!);
  };
  for (const task of [...DEFAULT_TASKS.slice(0, 100), ...TWO_BUG_TASKS.slice(0, 30)]) {
    const json = taskJson(task);
    const { language, file } = task.metadata;
    const module = file.replace(/\.(py|js)$/, '');
    const testPath = language === 'python' ? `tests/test_${module}.py` : `test/${module}.test.js`;
    const hidden = task.files[`tests/${testPath}`]!;
    const visible = task.files[`repo/${testPath}`]!;
    const issue = task.files['issue.md']!;
    const name = (id: string) => (language === 'python' ? id.split('::')[1]! : id);
    for (const id of json.fail_to_pass) {
      const calls = testCalls(hidden, name(id), language);
      const unseen = calls.filter((c) => !issue.includes(`\`${c}\``));
      t.ok(calls.length >= 4 && unseen.length >= 2, `${json.id} ${id}: ${calls.length} failing calls, ${unseen.length} not in the issue`);
    }
    for (const id of json.pass_to_pass) {
      const all = testCalls(hidden, name(id), language);
      const shown = testCalls(visible, name(id), language);
      t.same(all.slice(0, shown.length), shown, `${json.id} ${id}: the visible checks come first`);
      t.ok(all.length <= 6, `${json.id} ${id}: ${all.length} hidden checks`);
    }
    const checks = json.pass_to_pass.map((id) => testCalls(hidden, name(id), language).length);
    t.ok(checks.some((n) => n >= 4), `${json.id}: ordinary tests with ${checks.join(', ')} checks`);
  }
});

t.test('the gold patch is what git diff prints, and git apply takes it', async (t) => {
  const dir = t.testdir();
  const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_SYSTEM: '/dev/null' } });
  const tasks = [...DEFAULT_TASKS.slice(0, 25), ...TWO_BUG_TASKS.slice(0, 10)];
  for (const [i, task] of tasks.entries()) {
    const repo = path.join(dir, `${i}`);
    mkdirSync(repo);
    const file = path.join(repo, task.metadata.file);
    writeFileSync(file, source(task));
    git(repo, 'init', '-q');
    git(repo, 'add', '.');
    git(repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'base');
    const patch = path.join(dir, `${i}.patch`);
    writeFileSync(patch, task.files['gold.patch']!);
    git(repo, 'apply', '--check', patch);
    git(repo, 'apply', patch);
    t.equal(readFileSync(file, 'utf8'), fixedSource(task), `${task.id}: the patch makes the fix`);
    t.equal(git(repo, 'diff'), task.files['gold.patch'], `${task.id}: byte for byte git diff's`);
  }
});

t.test('options are checked, and impossible ones refused by name', async (t) => {
  t.throws(() => generate(0, { kinds: ['typo' as never] }), { code: 'ERR_SWERL_INVALID_ARG', message: /options\.kinds\.0 must be one of "operator"/ });
  t.throws(() => generate(0, { functions: { min: 4, max: 2 } }), { message: /options\.functions has min 4 above max 2; give min <= max/ });
  t.throws(() => generate(0, { bugs: 2, functions: { min: 1, max: 3 } }), { message: /options\.functions\.min is 1 but bugs is 2/ });
  t.throws(() => generate(0, { languages: [] }), { message: /options\.languages must NOT have fewer than 1 items/ });
  t.throws(() => generate(0, { lines: { min: 1, max: 4 } }), { message: /^options allow no (python|javascript) task .* 1-4 lines\); allow more lines/ });
  t.throws(() => generateSweGenTask('train', -1), { message: /^seed is -1; a split's seeds are whole numbers from 0 to 2147483647/ });
  const small = generate(3, { functions: { min: 1, max: 1 }, lines: { min: 1, max: 40 }, kinds: ['missing-case'], languages: ['javascript'] });
  t.equal(small.metadata.kind, 'missing-case');
  t.equal(small.metadata.language, 'javascript');
  t.equal((source(small).match(/^export function /gm) ?? []).length, 1, 'one function');
  const big = generate(3, { functions: { min: 6, max: 6 }, lines: { min: 30, max: 90 } });
  t.equal((source(big).match(/^(def|export function) /gm) ?? []).length, 6, 'six functions');
});
