// A swerl folder's base commit made once on the host and laid into each sandbox (base-commit.ts):
// the same tree as a commit made inside the sandbox, a clean work tree, no sandbox command
// before the agent's first, grading as before; a changed folder gets a new commit, a large one
// or one with a .git of its own keeps the old way.
import { cpSync, writeFileSync, truncateSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import { baseSnapshot } from '../../../lib/env/base-commit.js';
import { prepareRepository, taskSandboxSpec } from '../../../lib/env/repo.js';
import { gradePatch } from '../../../lib/env/reward/grade.js';
import { LocalSandboxBackend } from '../../../lib/env/sandbox/local.js';
import type { Sandbox } from '../../../lib/env/sandbox/sandbox.js';
import { SweEnv } from '../../../lib/env/swe-env.js';
import { writeSweGenSuite } from '../../../lib/env/swe-gen/index.js';
import type { Task } from '../../../lib/env/task.js';
import { countingBackend } from '../../support/counting-backend.js';

const dir = t.testdir({ root: {} });
const backend = new LocalSandboxBackend({ root: path.join(dir, 'root') });

const out = async (sandbox: Sandbox, command: string) => {
  const result = await sandbox.exec(command);
  if (result.exitCode !== 0) throw new Error(`${command}: ${result.output}`);
  return result.stdout.toString().trim();
};

const suite = await writeSweGenSuite(path.join(dir, 'suite'), { split: 'train', firstSeed: 31, count: 4 });

t.test('the overlay gives the tree a commit inside the sandbox gives, and a clean work tree', async (t) => {
  for (const task of suite.tasks) {
    const spec = await taskSandboxSpec(task);
    t.ok(spec.overlay && spec.baseCommit, `${task.id}: a snapshot`);
    const laid = await backend.create(spec);
    const made = await backend.create({ repoDir: task.repoDir!, workdir: task.workdir });
    try {
      const prepared = await prepareRepository(made, task);
      t.equal(await out(laid, 'git rev-parse HEAD'), spec.baseCommit, 'HEAD is the snapshot\'s commit');
      t.equal(await out(laid, 'git rev-parse HEAD^{tree}'), await out(made, `git rev-parse ${prepared.baseCommit}^{tree}`), 'the same tree as committing in the sandbox');
      t.equal(await out(laid, 'git status --porcelain --untracked-files=all'), '', 'nothing changed or untracked');
      t.equal(await out(laid, 'git ls-files | sort'), await out(made, 'git ls-files | sort'), 'the same files tracked');
      t.match(await out(laid, 'cat .gitignore'), /__pycache__|node_modules/, 'the task\'s .gitignore is in place');
      // The sandbox's user owns the work tree and its .git (as root, a uid of its own).
      t.equal(await out(laid, 'find . -not -user "$(id -u)" | head -3'), '', 'every file the sandbox user\'s');
      await out(laid, 'git -c user.name=a -c user.email=a@b commit -q --allow-empty -m next');  // its .git is writable
    } finally {
      await Promise.all([laid.destroy(), made.destroy()]);
    }
  }
});

t.test('an episode starts with no sandbox command; grading of the gold patch resolves, the base laid in, not made', async (t) => {
  const task = suite.tasks[0]!;
  const { backend: counted, commands } = countingBackend(backend);
  const env = new SweEnv(task, counted, { prompt: 'compact', maxSteps: 4, rewardTimeoutMs: 60_000 });
  try {
    await env.reset();
    t.same(commands, [], 'reset ran nothing in the sandbox');
  } finally {
    await env.close();
  }
  const graded = await gradePatch(counted, task, task.goldPatch!, { timeoutMs: 60_000 });
  t.equal(graded.reward, 1, graded.reason);
  t.notOk(commands.some((c) => /git init/.test(c)), 'no git init in any sandbox');
  const unfixed = await gradePatch(counted, task, '', { timeoutMs: 60_000 });
  t.equal(unfixed.reward, 0, 'no patch: the hidden tests fail on the laid-in base');
});

t.test('contents decide the commit: the same files elsewhere give the same one, a changed file another', async (t) => {
  const task = suite.tasks[1]!;
  const copy = path.join(t.testdir(), 'repo');
  cpSync(task.repoDir!, copy, { recursive: true, preserveTimestamps: true });
  const first = await baseSnapshot(task.repoDir!, task.gitignore);
  const elsewhere = await baseSnapshot(copy, task.gitignore);
  t.equal(elsewhere?.commit, first?.commit, 'the same commit from another folder');
  t.not((await baseSnapshot(copy, `${task.gitignore ?? ''}*.log\n`))?.commit, first?.commit, 'another .gitignore, another commit');
  writeFileSync(path.join(copy, 'added.txt'), 'new\n');
  const changed = await baseSnapshot(copy, task.gitignore);
  t.not(changed?.commit, first?.commit, 'a new file, a new commit');
  t.ok(changed?.overlay.some((e) => e.name === '.git/index'), 'the snapshot holds the index');
});

t.test('a repository too large to hold, or one with its own .git, is committed in its sandbox as before', async (t) => {
  const task = suite.tasks[2]!;
  const big = path.join(t.testdir(), 'repo');
  cpSync(task.repoDir!, big, { recursive: true });
  writeFileSync(path.join(big, 'blob.bin'), '');
  truncateSync(path.join(big, 'blob.bin'), 17 * 1024 ** 2);
  t.equal(await baseSnapshot(big, task.gitignore), null, 'over 16 MiB: no snapshot');
  const large: Task = { ...task, repoDir: big };
  const spec = await taskSandboxSpec(large);
  t.equal(spec.overlay, undefined);
  t.equal(spec.baseCommit, undefined);
  const sandbox = await backend.create(spec);
  try {
    const prepared = await prepareRepository(sandbox, large);
    t.match(prepared.baseCommit, /^[0-9a-f]{40}$/, 'the sandbox made its base commit');
    t.equal(await out(sandbox, 'git status --porcelain'), '');
  } finally {
    await sandbox.destroy();
  }

  // A repository of its own (a .git, here a gitdir file): its HEAD is the base, nothing laid over it.
  const own = path.join(t.testdir(), 'own');
  cpSync(task.repoDir!, own, { recursive: true });
  writeFileSync(path.join(own, '.git'), 'gitdir: /nonexistent\n');
  t.equal((await taskSandboxSpec({ ...task, repoDir: own })).overlay, undefined, 'a .git of its own: no overlay');
});

t.test('an overlay needs a repoDir', async (t) => {
  await t.rejects(backend.create({ overlay: [{ name: 'a', data: Buffer.from('x') }] }), { code: 'ERR_SWERL_INVALID_ARG', message: /spec\.overlay.*repoDir/ });
});
