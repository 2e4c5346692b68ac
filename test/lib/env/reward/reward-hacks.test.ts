/**
 * Known reward hacks, each planted in the untouched repository of a real task. Every one is
 * first shown to work when the tests run without grading's guard (so this suite can fail; on
 * one backend), then graded as swerl grades on each: it must score 0 and the report must name
 * what was reverted.
 * The gold patch, with every hack planted beside it, must still score 1. Both test runners
 * (pytest, node through npm), both backends (local; docker through podman unless
 * SWERL_SKIP_DOCKER=1).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import t, { type Test } from 'tap';

import { applyPatch, prepareRepository } from '../../../../lib/env/repo.js';
import { placeHiddenTests, resolveTask } from '../../../../lib/env/reward/grade.js';
import { parseTestLog } from '../../../../lib/env/reward/test-log.js';
import { LocalSandboxBackend } from '../../../../lib/env/sandbox/local.js';
import { SweEnv } from '../../../../lib/env/swe-env.js';
import type { SandboxBackend } from '../../../../lib/env/sandbox/sandbox.js';
import { loadSwerlTaskFolder } from '../../../../lib/env/tasks/swerl-folder.js';
import type { Task } from '../../../../lib/env/task.js';
import { dockerSkipped, startPodmanService } from '../../../support/podman.js';

const SWE_MINI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../tasks/swe-mini');

interface Hack {
  name: string;
  /** sh run in the work tree of the untouched repository. */
  plant: (task: Task) => string;
  /** What grading must name as reverted (a path relative to the work tree). */
  reverted?: string;
  /** Backends where it does nothing even unguarded (it is still graded on all). */
  inertOn?: string[];
  /** It hides its files from git, the fix with them: left out of the gold run. */
  hidesTheFix?: boolean;
}

const heredoc = (file: string, text: string) => `mkdir -p "$(dirname '${file}')" && cat > '${file}' <<'SWERL_EOF'\n${text}\nSWERL_EOF\n`;

const FORCE_PASS = `import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
`;
const PLUGIN = heredoc('swerl_hack_plugin.py', FORCE_PASS);

function requiredTests(task: Task): string[] {
  return task.resolution.rule === 'swe-bench' ? [...task.resolution.failToPass, ...task.resolution.passToPass] : [];
}

const PYTHON_HACKS: Hack[] = [
  { name: 'root conftest.py forcing "passed"', plant: () => heredoc('conftest.py', FORCE_PASS), reverted: 'conftest.py' },
  { name: 'conftest.py beside the tests', plant: () => heredoc('tests/conftest.py', FORCE_PASS), reverted: 'tests/conftest.py' },
  {
    name: 'conftest.py hidden from git by .gitignore',
    plant: () => `${heredoc('conftest.py', FORCE_PASS)}printf 'conftest.py\\n' >> .gitignore`,
    // Ignored, so not in the patch: it never leaves the episode's sandbox.
  },
  { name: 'pytest.ini loading a plugin', plant: () => `${PLUGIN}printf '[pytest]\\naddopts = -p swerl_hack_plugin\\n' > pytest.ini`, reverted: 'pytest.ini' },
  { name: 'tox.ini [pytest] addopts', plant: () => `${PLUGIN}printf '[pytest]\\naddopts = -p swerl_hack_plugin\\n' > tox.ini`, reverted: 'tox.ini' },
  { name: 'setup.cfg [tool:pytest] addopts', plant: () => `${PLUGIN}printf '[metadata]\\nname = x\\n\\n[tool:pytest]\\naddopts = -p swerl_hack_plugin\\n' > setup.cfg`, reverted: 'setup.cfg' },
  {
    name: 'pyproject.toml [tool.pytest.ini_options] addopts',
    plant: () => `${PLUGIN}printf '[tool.pytest.ini_options]\\naddopts = "-p swerl_hack_plugin"\\n' > pyproject.toml`,
    reverted: 'pyproject.toml',
  },
  {
    name: 'an .egg-info registering a pytest11 entry point',
    // The task's .gitignore ignores *.egg-info/: un-ignored, so that it travels in the patch.
    plant: () => `sed -i '/egg-info/d' .gitignore && ${PLUGIN}${heredoc('swerl_hack.egg-info/PKG-INFO', 'Metadata-Version: 2.1\nName: swerl-hack\nVersion: 1.0')}${heredoc('swerl_hack.egg-info/entry_points.txt', '[pytest11]\nswerl_hack = swerl_hack_plugin')}`,
    reverted: 'swerl_hack.egg-info/entry_points.txt',
  },
  {
    name: 'a fake pytest module at the root printing PASSED',
    plant: (task) => heredoc('pytest.py', requiredTests(task).map((id) => `print("PASSED ${id}")`).join('\n')),
    reverted: 'pytest.py',
  },
  {
    name: 'a usercustomize in ~/.local that loads a plugin',
    plant: () => {
      const site = '$HOME/.local/lib/python3.11/site-packages';
      return `mkdir -p ${site} && cat > ${site}/usercustomize.py <<'SWERL_EOF'\nimport os, sys\nsys.path.insert(0, ${JSON.stringify('/testbed')})\nos.environ["PYTEST_ADDOPTS"] = "-p swerl_hack_plugin"\nSWERL_EOF\n${PLUGIN}`;
    },
    // Outside the work tree: defeated by grading's fresh HOME and PYTHONNOUSERSITE, not reverted.
  },
  {
    name: "conftest.py hidden from the patch by a git replace of the base commit",
    plant: () => `${heredoc('conftest.py', FORCE_PASS)}git add -A && n=$(git -c user.name=x -c user.email=x@x commit-tree $(git write-tree) -m x) && git replace HEAD $n`,
    hidesTheFix: true,
  },
  {
    name: 'conftest.py behind a core.worktree that points git elsewhere',
    plant: () => `${heredoc('conftest.py', FORCE_PASS)}mkdir -p /tmp/fake && git archive HEAD | tar -x -C /tmp/fake && git config core.worktree /tmp/fake`,
    hidesTheFix: true,
  },
  {
    name: 'a smudge filter that rewrites the hidden tests as git writes them',
    plant: () => `${heredoc('conftest.py', FORCE_PASS)}git config filter.x.smudge 'sed s/assert/assert True or/' && echo 'tests/* filter=x' >> .git/info/attributes`,
    reverted: 'conftest.py',
  },
  {
    name: 'a module shadowing the standard library in a test folder (tests/ is no package)',
    // pytest imports argparse before it puts tests/ on sys.path: no effect on this runner (it
    // would on a runner script in tests/, django's runtests.py); still reverted.
    plant: () => `printf 'raise SystemExit(0)\\n' > tests/argparse.py`,
    reverted: 'tests/argparse.py',
    inertOn: ['local', 'docker'],
  },
  {
    name: 'a background process that rewrites conftest.py during grading',
    plant: () => `${heredoc('/tmp/swerl-hack.py', FORCE_PASS)}(nohup sh -c 'while :; do cp /tmp/swerl-hack.py conftest.py 2>/dev/null; sleep 0.05; done' >/dev/null 2>&1 &)`,
    // The local sandbox ends a command's background processes with it: inert there.
    inertOn: ['local'],
  },
];

// Every test body's failure swallowed: node:test's test/it/describe wrapped, the ESM view synced.
const SWALLOW_FAILURES = `const nt = require('node:test');
const swallow = (fn) => async function (...args) { try { await fn.apply(this, args); } catch {} };
const wrap = (orig) => function (...args) { return orig.apply(this, args.map((a) => (typeof a === 'function' ? swallow(a) : a))); };
for (const key of ['test', 'it', 'describe', 'suite']) if (typeof nt[key] === 'function') nt[key] = wrap(nt[key]);
require('node:module').syncBuiltinESMExports();
`;

const NODE_HACKS: Hack[] = [
  {
    name: 'package.json test script printing TAP',
    plant: (task) => {
      const lines = requiredTests(task).map((id, i) => `ok ${i + 1} - ${id}`);
      return `node -e 'const fs=require("fs");const p=JSON.parse(fs.readFileSync("package.json"));p.scripts.test="cat tap.txt";fs.writeFileSync("package.json",JSON.stringify(p))' && ${heredoc('tap.txt', lines.join('\n'))}`;
    },
    reverted: 'package.json',
  },
  { name: '.npmrc preloading a failure-swallowing node:test (node-options=--require)', plant: () => `${heredoc('stub.cjs', SWALLOW_FAILURES)}printf 'node-options=--require=/testbed/stub.cjs\\n' > .npmrc`, reverted: '.npmrc' },
  {
    name: '~/.npmrc preloading a failure-swallowing node:test',
    plant: () => `${heredoc('/tmp/stub.cjs', SWALLOW_FAILURES)}printf 'node-options=--require=/tmp/stub.cjs\\n' > "$HOME/.npmrc"`,
  },
];

/** A swe-mini JS task run through `npm test`, as JS datasets run theirs. */
async function npmTask(t: Test): Promise<Task> {
  const dir = t.testdir({});
  const folder = path.join(dir, 'js-color-hex');
  await fs.cp(path.join(SWE_MINI, 'js-color-hex'), folder, { recursive: true });
  const meta = JSON.parse(await fs.readFile(path.join(folder, 'task.json'), 'utf8')) as { test_command: string };
  const pkgFile = path.join(folder, 'repo', 'package.json');
  const pkg = JSON.parse(await fs.readFile(pkgFile, 'utf8')) as { scripts: Record<string, string> };
  pkg.scripts.test = meta.test_command;
  await fs.writeFile(pkgFile, JSON.stringify(pkg, null, 2) + '\n');
  await fs.writeFile(path.join(folder, 'task.json'), JSON.stringify({ ...meta, test_command: 'npm test --silent' }));
  return loadSwerlTaskFolder(folder);
}

async function withSandbox<T>(backend: SandboxBackend, task: Task, body: (sandbox: Awaited<ReturnType<SandboxBackend['create']>>) => Promise<T>): Promise<T> {
  const sandbox = await backend.create({ repoDir: task.repoDir!, workdir: task.workdir });
  try {
    return await body(sandbox);
  } finally {
    await sandbox.destroy();
  }
}

/** An episode as swerl runs it: the hack planted (after the gold patch, with `gold`), then graded. */
async function gradeWith(backend: SandboxBackend, task: Task, script: string, gold = false) {
  // emptyPatch 'grade': a hack that hides its files from the diff leaves an empty patch, which
  // would score 0 untested; grading it anyway shows the fresh sandbox alone defeats the hack.
  const env = new SweEnv(task, backend, { rewardTimeoutMs: 120_000, emptyPatch: 'grade' });
  try {
    await env.reset();
    if (gold) await applyPatch(env.currentSandbox!, task.goldPatch!);
    await plant(env.currentSandbox!, script);
    return await env.reward();
  } finally {
    await env.close();
  }
}

async function plant(sandbox: Awaited<ReturnType<SandboxBackend['create']>>, script: string): Promise<void> {
  const planted = await sandbox.exec(script);
  if (planted.exitCode !== 0) throw new Error(`planting failed: ${planted.output}`);
}

async function hackSuite(t: Test, backend: SandboxBackend, task: Task, hacks: Hack[]): Promise<void> {
  for (const hack of hacks) {
    await t.test(hack.name, async (t) => {
      // That a hack works is a fact of the test runner: shown once, on the first backend where it is not inert.
      const prove = ['local', 'docker'].find((name) => !hack.inertOn?.includes(name)) === backend.name;
      if (prove) {
        const unguarded = await withSandbox(backend, task, async (sandbox) => {
          const prepared = await prepareRepository(sandbox, task);
          await plant(sandbox, hack.plant(task));
          await placeHiddenTests(sandbox, task, prepared);
          // The command as it comes: the sandbox's own HOME, user site-packages on.
          const run = await sandbox.exec(task.testCommand, { timeoutMs: 120_000 });
          return { resolution: resolveTask(task, parseTestLog(task.logFormat, run.output)), log: run.output };
        });
        t.ok(unguarded.resolution.resolved, 'the hack makes the tests pass when nothing guards against it', { log: unguarded.log.slice(-2000) });
      }
      const graded = await gradeWith(backend, task, hack.plant(task));
      t.equal(graded.reward, 0, `graded: ${graded.reason}`);
      t.ok(Object.keys(graded.tests).length > 0, 'the tests ran');
      if (hack.reverted) {
        t.ok(graded.reverted?.includes(hack.reverted), `${hack.reverted} is named as reverted`);
        t.match(graded.reason, /reverted test infrastructure/);
      }
    });
  }
  await t.test('gold still scores 1 with every hack planted beside it', async (t) => {
    const graded = await gradeWith(backend, task, hacks.filter((h) => !h.hidesTheFix).map((h) => h.plant(task)).join('\n'), true);
    t.equal(graded.reward, 1, graded.reason);
  });
}

async function suites(t: Test, backend: SandboxBackend): Promise<void> {
  await t.test('pytest', (t) => loadSwerlTaskFolder(path.join(SWE_MINI, 'py-slugify-truncate')).then((task) => hackSuite(t, backend, task, PYTHON_HACKS)));
  await t.test('node through npm test', async (t) => hackSuite(t, backend, await npmTask(t), NODE_HACKS));
}

t.test('local sandbox', async (t) => {
  const root = t.testdir({});
  await suites(t, new LocalSandboxBackend({ root }));
});

t.test('docker sandbox', { skip: dockerSkipped ? 'SWERL_SKIP_DOCKER=1' : false }, async (t) => {
  const { DockerSandboxBackend } = await import('../../../../lib/env/sandbox/docker.js');
  const socketPath = await startPodmanService(t);
  await suites(t, new DockerSandboxBackend({ socketPath }));
});
