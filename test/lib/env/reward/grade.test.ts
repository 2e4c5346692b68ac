/**
 * Grading keeps the candidate's source changes: the hidden tests replace exactly the files
 * they touch. Regression: tests inside the package (pkg/tests/test_x.py, as most Python projects
 * lay them out) used to reset the whole top-level folder, wiping the fix under pkg/.
 */
import { writeFile } from 'node:fs/promises';

import t, { type Test } from 'tap';

import { SweEnv } from '../../../../lib/env/swe-env.js';
import { applyPatch, prepareRepository } from '../../../../lib/env/repo.js';
import { gradePatch, placeHiddenTests, runTests } from '../../../../lib/env/reward/grade.js';
import { LocalSandboxBackend } from '../../../../lib/env/sandbox/local.js';
import { loadSwerlTaskFolder } from '../../../../lib/env/tasks/swerl-folder.js';
import { countingBackend } from '../../../support/counting-backend.js';
import type { Task } from '../../../../lib/env/task.js';

const backend = new LocalSandboxBackend({ root: t.testdir({ root: {} }) + '/root' });

const HIDDEN = 'from pkg.core import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_add_zero():\n    assert add(0, 0) == 0\n';
const GOLD = ['diff --git a/pkg/core.py b/pkg/core.py', '--- a/pkg/core.py', '+++ b/pkg/core.py', '@@ -1,2 +1,2 @@', ' def add(a, b):', '-    return a - b', '+    return a + b', ''].join('\n');
const TEST_PATCH = [
  'diff --git a/pkg/tests/test_core.py b/pkg/tests/test_core.py',
  '--- a/pkg/tests/test_core.py',
  '+++ b/pkg/tests/test_core.py',
  '@@ -1,5 +1,9 @@',
  ' from pkg.core import add',
  ' ',
  ' ',
  ' def test_add_zero():',
  '     assert add(0, 0) == 0',
  '+',
  '+',
  '+def test_add():',
  '+    assert add(2, 3) == 5',
  '',
].join('\n');

async function folderTask(t: Test): Promise<Task> {
  const dir = t.testdir({
    'pkg-add': {
      'task.json': JSON.stringify({
        id: 'pkg-add',
        language: 'python',
        difficulty: 'easy',
        test_command: 'python3 -m pytest -rA -p no:cacheprovider pkg/tests/test_core.py',
        log_format: 'pytest',
        fail_to_pass: ['pkg/tests/test_core.py::test_add'],
        pass_to_pass: ['pkg/tests/test_core.py::test_add_zero'],
      }),
      'issue.md': 'add() subtracts.\n',
      repo: {
        pkg: {
          '__init__.py': '',
          'core.py': 'def add(a, b):\n    return a - b\n',
          tests: { '__init__.py': '', 'test_core.py': 'from pkg.core import add\n\n\ndef test_add_zero():\n    assert add(0, 0) == 0\n' },
        },
      },
      tests: { pkg: { tests: { 'test_core.py': HIDDEN } } },
      'gold.patch': GOLD,
    },
  });
  return loadSwerlTaskFolder(`${dir}/pkg-add`);
}

async function grade(task: Task, patch: string | null, extra?: string) {
  const env = new SweEnv(task, backend);
  try {
    await env.reset();
    if (patch) await applyPatch(env.currentSandbox!, patch);
    if (extra) await env.currentSandbox!.exec(extra);
    return await env.reward();
  } finally {
    await env.close();
  }
}

t.test('a task folder whose tests live inside the package', async (t) => {
  const task = await folderTask(t);
  const gold = await grade(task, GOLD);
  t.equal(gold.reward, 1, `gold keeps its fix under pkg/: ${gold.reason}`);
  t.equal((await grade(task, null)).reward, 0, 'untouched: 0');
  const edited = await grade(task, GOLD, "printf 'def test_add():\\n    pass\\n' > pkg/tests/test_core.py && printf 'x = 1\\n' > pkg/tests/helper.py");
  t.equal(edited.reward, 1, 'an edited test file is replaced; a new helper beside it stays');
  t.match(edited.patch, /pkg\/tests\/helper\.py/);
});

t.test('a row-style test patch over tests inside the package', async (t) => {
  const folder = await folderTask(t);
  const task: Task = { ...folder, hiddenTests: { kind: 'patch', patch: TEST_PATCH, paths: ['pkg/tests/test_core.py'] } };
  t.equal((await grade(task, GOLD)).reward, 1, 'gold: 1');
  t.equal((await grade(task, null)).reward, 0, 'untouched: 0');
  const rigged = await grade(task, GOLD, "printf 'def test_add():\\n    pass\\n' > pkg/tests/test_core.py");
  t.equal(rigged.reward, 1, "the candidate's copy of the test file is restored before the patch applies");
});

t.test("grading takes three sandbox commands: apply and list the changes, put the tests in and run them, read the guard's record", async (t) => {
  const task = await folderTask(t);
  const { backend: counting, commands } = countingBackend(backend);
  const result = await gradePatch(counting, task, GOLD, { timeoutMs: 60_000 });
  t.equal(result.reward, 1, result.reason);
  t.equal(commands.length, 3, commands.map((c) => c.split('\n')[0]).join(' | '));
  t.notOk(commands.some((c) => /git init/.test(c)), 'the base commit came with the sandbox');

  commands.length = 0;
  const broken = await gradePatch(counting, task, GOLD.replace('return a - b', 'return a * b'), { timeoutMs: 60_000 });
  t.equal(broken.reward, 0);
  t.match(broken.reason, /^the patch does not apply to a fresh copy of the repository: .*patch (does not apply|failed)/s, broken.reason);
  t.equal(commands.length, 1, 'a patch that does not apply ends grading at the first command');
});

t.test("runTests' before lines: run first, in the same command; their failure is told apart from the tests' own exit status", async (t) => {
  const task = await folderTask(t);
  const sandbox = await backend.create({ repoDir: task.repoDir!, workdir: task.workdir });
  try {
    const prepared = await prepareRepository(sandbox, task);
    await placeHiddenTests(sandbox, task, prepared);
    const placed = await runTests(sandbox, task, { timeoutMs: 60_000, before: ['echo placed > pkg/tests/marker.txt || exit 1'] });
    t.equal(placed.notPlaced, undefined);
    t.equal(placed.statuses.get('pkg/tests/test_core.py::test_add_zero'), 'PASSED', 'the tests ran after it');
    t.equal((await sandbox.readFile('pkg/tests/marker.txt')).toString(), 'placed\n');
    const failed = await runTests(sandbox, task, { timeoutMs: 60_000, before: ['echo cannot place >&2', 'exit 1'] });
    t.match(failed.notPlaced, /cannot place/, 'a failing line: no test ran');
    t.equal(failed.statuses.size, 0);
    // A test command that exits 96 itself is the tests' failure, not the placement's.
    const own = await runTests(sandbox, task, { timeoutMs: 60_000, before: ['true'], command: 'echo tests ran; exit 96' });
    t.equal(own.notPlaced, undefined);
    t.equal(own.run.exitCode, 96);
  } finally {
    await sandbox.destroy();
  }
});

t.test('a candidate that makes the tests folder a file: the hidden tests cannot go in, 0 with the reason', async (t) => {
  const result = await grade(await folderTask(t), null, 'rm -rf pkg/tests && echo x > pkg/tests');
  t.equal(result.reward, 0);
  t.match(result.reason, /^could not put the hidden tests in place: /, result.reason);
});

t.test("prepareRepository's then: its output after the patch applies, in the same command; its failure left to the caller", async (t) => {
  const task = await folderTask(t);
  const sandbox = await backend.create({ repoDir: task.repoDir!, workdir: task.workdir });
  try {
    const listed = await prepareRepository(sandbox, task, { patch: GOLD, then: 'git diff --name-only HEAD' });
    t.match(listed.baseCommit, /^[0-9a-f]{40}$/);
    t.equal(listed.thenOutput?.toString(), 'pkg/core.py\n', 'what the patch changed, against HEAD (the base)');
  } finally {
    await sandbox.destroy();
  }
  const again = await backend.create({ repoDir: task.repoDir!, workdir: task.workdir });
  try {
    const failed = await prepareRepository(again, task, { patch: GOLD, then: 'echo partial; exit 3' });
    t.equal(failed.thenOutput, undefined, 'a failing then gives no output');
    t.equal(failed.patchError, undefined, 'the patch itself applied');
    t.equal((await again.readFile('pkg/core.py')).toString().includes('a + b'), true);
  } finally {
    await again.destroy();
  }
});

t.test('hidden test files arrive byte for byte: the heredoc delimiter, bytes that are not UTF-8', async (t) => {
  const folder = await folderTask(t);
  const odd = Buffer.concat([Buffer.from(`${HIDDEN}\n# SWERL_EOF\nSWERL_EOF\n'''\n"$x" \`y\` \\\n`), Buffer.from([0xff, 0xfe, 0x00, 0x0a])]);
  if (folder.hiddenTests.kind !== 'files') throw new Error('a folder task has hidden test files');
  await writeFile(`${folder.hiddenTests.dir}/pkg/tests/data.bin`, odd);
  const task: Task = { ...folder, hiddenTests: { ...folder.hiddenTests, paths: ['pkg/tests/test_core.py', 'pkg/tests/data.bin'] } };
  const sandbox = await backend.create({ repoDir: task.repoDir!, workdir: task.workdir });
  try {
    const prepared = await prepareRepository(sandbox, task);
    await placeHiddenTests(sandbox, task, prepared);
    t.same(await sandbox.readFile('pkg/tests/data.bin'), odd, 'the data file, exact');
  } finally {
    await sandbox.destroy();
  }
});
