import { readFileSync } from 'node:fs';
import path from 'node:path';

import t, { type Test } from 'tap';

import { ROOT, runSwerl } from '../support/child-process.js';
import { dockerSkipped, startPodmanService } from '../support/podman.js';

const SWE_MINI = path.join(ROOT, 'tasks/swe-mini');

const swerl = runSwerl;

async function taskIds(): Promise<string[]> {
  const { loadTasks } = await import('../../lib/env/tasks/load.js');
  return (await loadTasks(SWE_MINI)).tasks.map((task) => task.id);
}

function checkTable(t: Test, stdout: string, ids: string[]) {
  for (const id of ids) t.match(stdout, new RegExp(`^${id}\\s+1 1\\s+0 0\\s+\\S+\\s+ok$`, 'm'), `${id}: gold 1 1, base 0 0`);
  t.match(stdout, new RegExp(`^${ids.length} valid, 0 invalid$`, 'm'));
}

// Every swe-mini task's gold patch scores 1 and its base 0 in the local sandbox:
// test/lib/agent/scripted-policy.test.ts plays all of them. Here the command itself, on a
// quarter of the set (every fourth task, both languages, two runs each).
t.test('swerl tasks validate: swe-mini tasks of both languages in the local sandbox', async (t) => {
  const all = await taskIds();
  const ids = all.filter((_id, i) => i % 4 === 0);
  t.ok(ids.some((id) => id.startsWith('js-')) && ids.some((id) => id.startsWith('py-')), `both languages among ${ids.join(', ')}`);
  const json = path.join(t.testdir(), 'out', 'validation.json');
  const r = await swerl(['tasks', 'validate', SWE_MINI, '--only', ids.join(','), '--json', json]);
  t.equal(r.code, 0, r.stderr);
  checkTable(t, r.stdout, ids);
  const saved = JSON.parse(readFileSync(json, 'utf8')) as { backend: string; results: { id: string; ok: boolean }[] };
  t.equal(saved.backend, 'local');
  t.same(saved.results.map((x) => x.ok), ids.map(() => true));
});

// Every swe-mini task is valid in the local sandbox (above); here the docker sandbox grades
// tasks of both languages the same way (all 25 took CI 107 s).
t.test('swerl tasks validate: swe-mini tasks of both languages in the docker sandbox', { skip: dockerSkipped ? 'SWERL_SKIP_DOCKER=1' : false }, async (t) => {
  const socketPath = await startPodmanService(t);
  const ids = ['js-color-hex', 'js-cron-next', 'py-lru-recency', 'py-money-negative'];
  const r = await swerl(['tasks', 'validate', SWE_MINI, '--sandbox', 'docker', '--only', ids.join(',')], { DOCKER_HOST: `unix://${socketPath}` });
  t.equal(r.code, 0, r.stderr);
  checkTable(t, r.stdout, ids);
  t.match(r.stdout, /in the docker sandbox/);
});

t.test('a broken task fails validation and the exit code says so', async (t) => {
  const source = path.join(SWE_MINI, 'py-lru-recency');
  const dir = t.testdir({
    'py-lru-recency': {
      'task.json': readFileSync(path.join(source, 'task.json'), 'utf8'),
      'issue.md': 'x',
      'gold.patch': 'diff --git a/nothing b/nothing\nnew file mode 100644\n--- /dev/null\n+++ b/nothing\n@@ -0,0 +1 @@\n+x\n',
    },
  });
  // the repository and hidden tests of the real task, a gold patch that fixes nothing
  const { cpSync } = await import('node:fs');
  cpSync(path.join(source, 'repo'), path.join(dir, 'py-lru-recency', 'repo'), { recursive: true });
  cpSync(path.join(source, 'tests'), path.join(dir, 'py-lru-recency', 'tests'), { recursive: true });
  const r = await swerl(['tasks', 'validate', dir, '--runs', '1']);
  t.equal(r.code, 1);
  t.match(r.stdout, /^py-lru-recency\s+0\s+0\s+\S+\s+FAIL: gold scored 0: \d+ required test\(s\) not passing/m);
  t.match(r.stdout, /^0 valid, 1 invalid$/m);
});

t.test('swerl sandbox reap removes what dead runs left', async (t) => {
  const root = t.testdir({
    'swerl-0123456789ab': {
      'meta.json': JSON.stringify({ id: 'swerl-0123456789ab', label: 'swerl', ownerPid: 999999999, ownerStart: '1', uid: -1, createdAt: '2026-01-01T00:00:00Z' }),
      work: { 'file.txt': 'left behind' },
    },
  });
  const r = await swerl(['sandbox', 'reap'], { SWERL_SANDBOX_ROOT: root });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /removed 1 sandbox\(es\)/);
  const { existsSync } = await import('node:fs');
  t.notOk(existsSync(path.join(root, 'swerl-0123456789ab')), 'the folder is gone');
});

t.test('usage errors', async (t) => {
  const none = await swerl(['tasks', 'validate']);
  t.equal(none.code, 2);
  t.match(none.stderr, /missing required argument 'path'/);
  const runs = await swerl(['tasks', 'validate', SWE_MINI, '--runs', 'two']);
  t.equal(runs.code, 2);
  t.match(runs.stderr, /--runs is "two"; give a positive integer/);
  const backend = await swerl(['tasks', 'validate', SWE_MINI, '--sandbox', 'vm']);
  t.equal(backend.code, 2);
  t.match(backend.stderr, /argument 'vm' is invalid\. Allowed choices are local, docker/);
  const unknown = await swerl(['fly']);
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /unknown command 'fly'/);
  const help = await swerl(['tasks', '--help']);
  t.equal(help.code, 0);
  t.match(help.stdout, /validate \[options\] <path>/);
});
