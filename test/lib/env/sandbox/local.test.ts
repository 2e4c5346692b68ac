import { existsSync, readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import t, { type Test } from 'tap';

import { LocalSandboxBackend } from '../../../../lib/env/sandbox/local.js';
import { containmentSuite } from './containment.js';
import { localBounds, SCRATCH } from '../../../../lib/env/sandbox/local-bounds.js';

const fixtures = t.testdir({ root: {}, tmpfs: {} });
const root = fixtures + '/root';
/** Where sandbox disks are mounted and recorded (local-bounds.ts). */
const DISKS = path.join(os.tmpdir(), 'swerl-disks');

/** Host processes whose environment marks them as part of a sandbox of `label`. */
function sandboxProcesses(label: string): number {
  let count = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').includes(`\0SWERL_SANDBOX=${label}-`)) count++;
      else if (readFileSync(`/proc/${entry}/environ`, 'latin1').startsWith(`SWERL_SANDBOX=${label}-`)) count++;
    } catch {
      // exited, or not ours to read
    }
  }
  return count;
}

t.test('exec basics', async (t) => {
  const backend = new LocalSandboxBackend({ root });
  const repo = t.testdir({ 'a.txt': 'alpha\n', dir: { 'b.txt': 'beta\n' } });
  const sandbox = await backend.create({ repoDir: repo });
  t.teardown(() => sandbox.destroy());
  t.match(sandbox.id, /^swerl-[0-9a-f]{12}$/);
  t.equal(sandbox.workdir, '/testbed');

  const r = await sandbox.exec('pwd; cat a.txt; echo oops >&2; exit 3');
  t.equal(r.exitCode, 3);
  t.equal(r.stdout.toString(), '/testbed\nalpha\n');
  t.equal(r.stderr.toString(), 'oops\n');
  t.equal(r.output, '/testbed\nalpha\noops\n', 'combined in order');
  t.notOk(r.timedOut);

  t.equal((await sandbox.exec('pwd', { cwd: '/testbed/dir' })).output, '/testbed/dir\n', 'cwd');
  t.equal((await sandbox.exec('echo "$GREETING"', { env: { GREETING: 'hi there' } })).output, 'hi there\n', 'env');
  t.equal((await sandbox.exec('wc -c')).output.trim(), '0', 'stdin is empty by default');
  t.equal((await sandbox.exec('tr a-z A-Z', { stdin: 'shout' })).output, 'SHOUT', 'stdin');
  t.equal((await sandbox.exec('kill -9 $$')).exitCode, 137, 'killed by a signal: 128 + N');
  process.env.SWERL_TEST_HOST_ONLY = 'leak';
  const env = (await sandbox.exec('env | sort')).output;
  delete process.env.SWERL_TEST_HOST_ONLY;
  t.notMatch(env, /^(SWERL_TEST_HOST_ONLY|USER|SSH_|NODE_OPTIONS|npm_)/m, 'the host environment does not leak in');
  t.match(env, /^HOME=\/tmp$/m);

  await sandbox.writeFile('new/deep/file.txt', 'written\n');
  t.equal((await sandbox.readFile('/testbed/new/deep/file.txt')).toString(), 'written\n', 'write then read');
  const binary = Buffer.from([0, 255, 10, 13, 27, 128]);
  await sandbox.writeFile('bin.dat', binary);
  t.same(await sandbox.readFile('bin.dat'), binary, 'bytes survive a round trip');
  await t.rejects(sandbox.readFile('missing.txt'), { code: 'ERR_SWERL_SANDBOX', message: /cannot read missing\.txt/ });
  await t.rejects(sandbox.writeFile('/usr/nope', 'x'), { code: 'ERR_SWERL_SANDBOX', message: /cannot write \/usr\/nope/ });
  t.equal(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'alpha\n', 'the source folder is untouched');
});

t.test('the host uid is dropped to one of its own when running as root', { skip: process.getuid?.() !== 0 && 'not root' }, async (t) => {
  const backend = new LocalSandboxBackend({ root });
  const [a, b] = await Promise.all([backend.create(), backend.create()]);
  t.teardown(() => Promise.all([a!.destroy(), b!.destroy()]));
  const uidA = (await a!.exec('id -u')).output.trim();
  const uidB = (await b!.exec('id -u')).output.trim();
  t.not(uidA, '0');
  t.not(uidA, uidB, 'two sandboxes never share a uid (process limits are per uid)');
  t.not((await a!.exec('cat /etc/shadow')).exitCode, 0, 'root-only host files stay unreadable');
});

t.test('bad options and specs name the field', async (t) => {
  t.throws(() => new LocalSandboxBackend({ limits: { maxProcesses: 0 } }), { code: 'ERR_SWERL_INVALID_ARG', message: /sandbox\.limits\.maxProcesses/ });
  t.throws(() => new LocalSandboxBackend({ label: 'Bad Label' } as never), { message: /sandbox\.label/ });
  t.throws(() => new LocalSandboxBackend({ disk: 'ramdisk' } as never), { code: 'ERR_SWERL_INVALID_ARG', message: /sandbox\.disk/ });
  const backend = new LocalSandboxBackend({ root });
  await t.rejects(backend.create({ image: 'python:3.11' }), { message: /spec\.image is for the docker backend/ });
  await t.rejects(backend.create({ repoDir: '/no/such/dir' }), { message: /spec\.repoDir \/no\/such\/dir does not exist/ });
  await t.rejects(backend.create({ label: 'UPPER' }), { message: /spec\.label/ });
});

/**
 * What is left of `label`'s sandboxes of a backend on `root`: a sandbox's folder, its disk's
 * mountpoint and record (where it has a disk), and its uid claim (as root) each count.
 */
function leftoversUnder(root: string, label: string): { sandboxes: number; processes: number } {
  const named = [root, DISKS].flatMap((dir) => (existsSync(dir) ? readdirSync(dir) : [])).filter((d) => d.startsWith(`${label}-`));
  const claims = path.join(root, '.uids');
  const claimed = (existsSync(claims) ? readdirSync(claims) : []).filter((uid) => {
    try {
      return readFileSync(path.join(claims, uid), 'utf8').startsWith(`${label}-`);
    } catch {
      return false;
    }
  });
  return { sandboxes: named.length + claimed.length, processes: sandboxProcesses(label) };
}

containmentSuite(t, {
  name: 'local',
  make: async (limits) => new LocalSandboxBackend({ root, ...(limits ? { limits } : {}) }),
  childSpec: { backend: 'local', options: { root } },
  leftovers: async (label) => leftoversUnder(root, label),
  wholeSandbox: { disk: localBounds().disk !== 'none', memory: localBounds().memory !== 'rlimit' },
});

/** The disks' mounts under DISKS: mountpoint name to filesystem type. */
function mountedDisks(): Map<string, string> {
  const mounts = readFileSync('/proc/self/mounts', 'utf8').split('\n').map((line) => line.split(' '));
  return new Map(mounts.filter((m) => m[1]?.startsWith(`${DISKS}/`)).map((m) => [path.basename(m[1]!), m[2]!]));
}

const tmpfsRoot = fixtures + '/tmpfs';
// The same containment with each sandbox's disk a tmpfs (`disk: 'tmpfs'`), the child process's
// sandboxes with the persistent shell an agent's sandbox has: bounded by diskBytes, gone at
// destroy, reaped after a kill.
containmentSuite(t, {
  name: 'local on tmpfs disks',
  make: async (limits) => new LocalSandboxBackend({ root: tmpfsRoot, disk: 'tmpfs', ...(limits ? { limits } : {}) }),
  childSpec: { backend: 'local', options: { root: tmpfsRoot, disk: 'tmpfs' }, spec: { persistentShell: true } },
  leftovers: async (label) => leftoversUnder(tmpfsRoot, label),
  wholeSandbox: { disk: localBounds().disk !== 'none', memory: localBounds().memory !== 'rlimit' },
});

t.test("disk: 'tmpfs' mounts a tmpfs of diskBytes where the image would be; 'image' an ext4 image", { skip: localBounds().disk === 'none' && 'no disk bound on this machine (needs root and loop devices)' }, async (t) => {
  const repo = t.testdir({ 'app.py': 'print("hi")\n' });
  for (const disk of ['tmpfs', 'image'] as const) {
    const backend = new LocalSandboxBackend({ root: tmpfsRoot, disk, limits: { diskBytes: 32 * 1024 ** 2 } });
    const sandbox = await backend.create({ repoDir: repo, label: `t-kind-${process.pid}` });
    try {
      const mounted = mountedDisks();
      const kind = mounted.get(sandbox.id);
      t.equal(kind, disk === 'tmpfs' ? 'tmpfs' : 'ext4', `${disk}: the sandbox's disk is ${kind}`);
      const r = await sandbox.exec('cat app.py && ls -a && df -k . | tail -1');
      t.match(r.output, /print\("hi"\)/, `${disk}: the work tree was copied in`);
      t.notMatch(r.output, /lost\+found/, `${disk}: nothing else in the work tree`);
      const sizeKb = Number(r.output.trim().split('\n').at(-1)!.trim().split(/\s+/)[1]);
      t.ok(sizeKb > 16 * 1024 && sizeKb <= 32 * 1024, `${disk}: the disk holds ${sizeKb} KiB of at most 32 MiB`);
    } finally {
      await sandbox.destroy();
    }
    t.notOk(mountedDisks().has(sandbox.id), `${disk}: unmounted at destroy`);
  }
});

/**
 * Six times: a process making and destroying sandboxes four at a time (sandbox-creator-child.ts)
 * on a fresh root gets `signal` at a random moment; `after` sees each exit. Returns the root.
 */
async function signalMidCreate(t: Test, signal: NodeJS.Signals, after: (exit: { code: number | null; signal: NodeJS.Signals | null }, round: number, root: string) => void): Promise<string> {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const os = await import('node:os');
  const { spawnTs, waitForExit, waitForLine } = await import('../../../support/child-process.js');
  const root = mkdtempSync(path.join(os.tmpdir(), 'swerl-signalled-create-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const child = path.join(path.dirname(new URL(import.meta.url).pathname), '../../../support/sandbox-creator-child.ts');
  for (let round = 0; round < 6; round++) {
    const creator = spawnTs(child, { SWERL_CHILD_ROOT: root });
    await waitForLine(creator, /created/);
    // A random moment: four creates and destroys are in flight at any time.
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 150));
    creator.kill(signal);
    after(await waitForExit(creator), round, root);
  }
  return root;
}

t.test('kill -9 at any moment of a create: the next run reaps every folder and uid claim it left', async (t) => {
  const root = await signalMidCreate(t, 'SIGKILL', () => undefined);
  const left = readdirSync(root).filter((name) => name !== '.uids');
  t.ok(left.length > 0, `the kills left ${left.length} folder(s) (${left.filter((n) => n.startsWith('.new-')).length} mid-create)`);
  const removed = await new LocalSandboxBackend({ root }).reap();
  t.equal(removed, left.length, 'the reaper takes every one of them');
  t.same(readdirSync(root).filter((name) => name !== '.uids'), [], 'no folder left');
  t.same(readdirSync(path.join(root, '.uids')), [], 'no uid claim left');
  t.same(disksOf(root), [], 'no disk, mountpoint or record of theirs left');
});

/** The names in DISKS of the disks of sandboxes under `root`, by their records (first line: the sandbox folder). */
function disksOf(root: string): string[] {
  if (!existsSync(DISKS)) return [];
  return readdirSync(DISKS).filter((name) => {
    try {
      return name.endsWith('.dir') && readFileSync(path.join(DISKS, name), 'utf8').startsWith(`${root}/`);
    } catch {
      return false;
    }
  });
}

t.test('a reap removes what dead processes left of disks: records without a mountpoint, half-written records, disk probes', async (t) => {
  const { mkdirSync, writeFileSync } = await import('node:fs');
  const { spawnSync } = await import('node:child_process');
  const { OWNER_TAG } = await import('../../../../lib/env/sandbox/owner.js');
  // A process that has ended: its pid with a start time no live process has.
  const deadTag = `${spawnSync('sh', ['-c', 'echo $$'], { encoding: 'utf8' }).stdout.trim()}.0`;
  const id = `reap-test-${process.pid}-${Math.random().toString(16).slice(2, 10)}`;
  mkdirSync(DISKS, { recursive: true });
  t.teardown(() => {
    for (const name of readdirSync(DISKS).filter((n) => n.includes(id))) spawnSync('rm', ['-rf', path.join(DISKS, name)]);
  });
  // A destroy killed between its mountpoint's removal and its record's.
  writeFileSync(path.join(DISKS, `${id}-a.dir`), `${root}/${id}-a\n${deadTag.replace('.', '\n')}\n`);
  // A create killed between its record's draft and its rename: a mountpoint and a draft.
  mkdirSync(path.join(DISKS, `${id}-b`));
  writeFileSync(path.join(DISKS, `.draft-${deadTag}-${id}-b`), `${root}/${id}-b\n`);
  // A disk probe killed mid-probe, and one of this live process; a base commit's scratch folder the same (base-commit.ts).
  const probe = (tag: string) => path.join(os.tmpdir(), `swerl-disk-probe-${tag}-${id}`);
  const scratch = (tag: string) => path.join(os.tmpdir(), `${SCRATCH}${tag}-${id}`);
  for (const tag of [deadTag, OWNER_TAG]) {
    mkdirSync(probe(tag));
    writeFileSync(path.join(probe(tag), 'disk.img'), Buffer.alloc(4096));
    mkdirSync(path.join(scratch(tag), 'w', '.git'), { recursive: true });
  }
  t.teardown(() => {
    for (const tag of [deadTag, OWNER_TAG]) spawnSync('rm', ['-rf', probe(tag), scratch(tag)]);
  });
  const live = [path.join(DISKS, `${id}-live.dir`), path.join(DISKS, `.draft-${OWNER_TAG}-${id}-live`)];
  for (const file of live) writeFileSync(file, `${root}/${id}-live\n${OWNER_TAG.replace('.', '\n')}\n`);

  await new LocalSandboxBackend({ root }).reap();
  t.notOk(existsSync(path.join(DISKS, `${id}-a.dir`)), 'the record whose mountpoint had gone');
  t.notOk(existsSync(path.join(DISKS, `.draft-${deadTag}-${id}-b`)), 'the draft of a dead process');
  t.notOk(existsSync(path.join(DISKS, `${id}-b`)), 'and its empty mountpoint');
  t.notOk(existsSync(probe(deadTag)), "a dead process's disk probe");
  t.ok(existsSync(probe(OWNER_TAG)), "a live process's probe stays");
  t.notOk(existsSync(scratch(deadTag)), "a dead process's scratch folder");
  t.ok(existsSync(scratch(OWNER_TAG)), "a live process's scratch folder stays");
  t.ok(live.every((file) => existsSync(file)), "a live process's record and draft stay");
});

t.test('SIGTERM at any moment of a create: the process removes what it made before it ends, leaving the reaper nothing', async (t) => {
  const root = await signalMidCreate(t, 'SIGTERM', (exit, round, dir) => {
    // By the signal, or by the rejection of a create whose half-made folder the signal removed.
    t.ok(exit.signal === 'SIGTERM' || (exit.code ?? 0) !== 0, `round ${round}: the creator ended (${exit.signal ?? `code ${exit.code}`})`);
    t.same(readdirSync(dir).filter((name) => name !== '.uids'), [], `round ${round}: no sandbox folder left, made or half-made`);
  });
  t.same(readdirSync(path.join(root, '.uids')), [], 'no uid claim left');
});

