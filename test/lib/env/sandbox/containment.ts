/**
 * The containment checks every sandbox backend must pass (issue 3): no network, no write
 * outside the work tree, runaway commands contained and killed, and nothing of a run left
 * after close(), after SIGINT of its process, or — once the reaper has run — after SIGKILL.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import type { Test } from 'tap';

import type { SandboxBackend, SandboxLimits } from '../../../../lib/env/sandbox/sandbox.js';
import { SweEnv } from '../../../../lib/env/swe-env.js';
import { loadSwerlTaskFolder } from '../../../../lib/env/tasks/swerl-folder.js';
import { spawnTs, waitForExit, waitForLine } from '../../../support/child-process.js';

export interface BackendUnderTest {
  name: string;
  /** A fresh backend object (a new "start" of swerl, as far as reaping goes). */
  make(limits?: Partial<SandboxLimits>): Promise<SandboxBackend>;
  /** How to build the same backend in a child process (createSandboxBackend arguments, and what every create there adds to its spec). */
  childSpec: { backend: string; options: Record<string, unknown>; spec?: Record<string, unknown> };
  /** Sandboxes and processes (or containers) of `label` still present, seen from outside. */
  leftovers(label: string): Promise<{ sandboxes: number; processes: number }>;
  /** Which whole-sandbox bounds this machine gives the backend (the rest are per process). */
  wholeSandbox: { disk: boolean; memory: boolean };
}

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CHILD = path.join(HERE, '../../../support/sandbox-child.ts');
const SWE_MINI = path.join(HERE, '../../../../tasks/swe-mini');
let labels = 0;
const freshLabel = (name: string) => `t-${name}-${process.pid}-${++labels}`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function eventually(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check()) return true;
    await sleep(100);
  }
  return check();
}

export function containmentSuite(t: Test, under: BackendUnderTest): void {
  const repo = writeRepo(mkdtempSync(path.join(os.tmpdir(), 'swerl-containment-')), { 'app.py': 'print("hello")\n', 'sub/data.txt': 'x\n' });
  t.teardown(() => rmSync(repo, { recursive: true, force: true }));

  t.test('no network: a loopback server the host reaches is unreachable inside', async (t) => {
    const server = http.createServer((_req, res) => res.end('host-only'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.teardown(() => server.close());
    const port = (server.address() as AddressInfo).port;
    const fromHost = await fetch(`http://127.0.0.1:${port}/`).then((r) => r.text());
    t.equal(fromHost, 'host-only', 'the server answers the host');
    const backend = await under.make();
    const sandbox = await backend.create({ repoDir: repo, label: freshLabel('net') });
    t.teardown(() => sandbox.destroy());
    const probe = await sandbox.exec(
      `python3 -c "import socket; s = socket.create_connection(('127.0.0.1', ${port}), timeout=3); s.sendall(b'GET / HTTP/1.0\\r\\n\\r\\n'); print(s.recv(100))"`,
    );
    t.not(probe.exitCode, 0, 'connecting to the host server fails');
    t.notMatch(probe.output, 'host-only');
    const external = await sandbox.exec(`python3 -c "import socket; socket.create_connection(('1.1.1.1', 80), timeout=3)"`);
    t.not(external.exitCode, 0, 'no route out');
    const interfaces = await sandbox.exec('cat /proc/net/dev');
    t.notMatch(interfaces.output, /eth\d|ens\d|enp\d|wlan\d/, 'no interface but loopback');
  });

  t.test('no write outside the work tree reaches the host', async (t) => {
    const hostDir = writeRepo(mkdtempSync(path.join(os.tmpdir(), 'swerl-host-')), { 'secret.txt': 'host secret\n' });
    t.teardown(() => rmSync(hostDir, { recursive: true, force: true }));
    const backend = await under.make();
    const sandbox = await backend.create({ repoDir: repo, label: freshLabel('fs') });
    t.teardown(() => sandbox.destroy());
    for (const target of ['/usr/swerl-probe', '/etc/swerl-probe', '/swerl-probe', '/bin/swerl-probe', `${hostDir}/written`]) {
      const r = await sandbox.exec(`echo x > ${target}`);
      t.not(r.exitCode, 0, `writing ${target} fails`);
    }
    const read = await sandbox.exec(`cat ${hostDir}/secret.txt`);
    t.not(read.exitCode, 0, 'a host folder outside the sandbox is not visible');
    const inside = await sandbox.exec('echo edited > app.py && mkdir -p new/dir && echo y > new/dir/f && cat app.py new/dir/f');
    t.equal(inside.exitCode, 0, 'the work tree is writable');
    t.equal(inside.output, 'edited\ny\n');
    t.equal((await sandbox.readFile('app.py')).toString(), 'edited\n');
  });

  t.test('hidden tests are unreadable before grading', async (t) => {
    const task = await loadSwerlTaskFolder(path.join(SWE_MINI, 'py-lru-recency'));
    // A line that only the hidden tests have: the name of a FAIL_TO_PASS test.
    const [file, secret] = (task.resolution as { failToPass: string[] }).failToPass[0]!.split('::') as [string, string];
    const env = new SweEnv(task, await under.make(), { label: freshLabel('hidden') });
    t.teardown(() => env.close());
    await env.reset();
    // The pattern is written so that the command line itself does not contain the secret.
    const pattern = `${secret.slice(0, -1)}[${secret.slice(-1)}]`;
    const grep = `grep -rl --devices=skip --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev --exclude-dir=usr '${pattern}' / 2>/dev/null; echo searched`;
    const look = await env.step(`<function=execute_bash><parameter=cmd>${grep}</parameter></function>`);
    t.equal(look.observation.split('\n').slice(2, -2).join('\n'), 'searched', 'no file in the sandbox holds the hidden tests');
    const sandbox = env.currentSandbox!;
    await sandbox.writeFile('probe.txt', secret);
    t.match((await sandbox.exec(grep)).output, `${sandbox.workdir}/probe.txt\n`, 'the same search finds a file that holds it');
    const graded = await env.reward();
    t.ok(graded.tests[`${file}::${secret}`], 'grading ran the hidden test');
    t.ok(sandbox.destroyed, "in a fresh sandbox: the episode's is gone, the hidden tests never entered it");
  });

  t.test('an infinite loop is killed at the timeout', async (t) => {
    const backend = await under.make();
    const sandbox = await backend.create({ repoDir: repo, label: freshLabel('loop') });
    t.teardown(() => sandbox.destroy());
    const r = await sandbox.exec('while :; do :; done', { timeoutMs: 1000 });
    t.ok(r.timedOut, 'timed out');
    t.equal(r.exitCode, -1);
    // The loop never ends by itself: returning at all, timed out, is the kill (a hang would be the
    // test's own timeout). The time is the machine's, so it is shown, not bounded.
    t.comment(`returned after ${r.durationMs.toFixed(0)} ms`);
    t.equal((await sandbox.exec('echo alive')).output, 'alive\n', 'the sandbox still works');
  });

  t.test('a sleeping child is killed with its parent at the timeout', async (t) => {
    const label = freshLabel('child');
    const backend = await under.make();
    const sandbox = await backend.create({ repoDir: repo, label });
    t.teardown(() => sandbox.destroy());
    const r = await sandbox.exec('(sleep 600 &) ; setsid sleep 601 & sleep 602', { timeoutMs: 1000 });
    t.ok(r.timedOut);
    const ps = await sandbox.exec('ps -eo args 2>/dev/null || ls /proc');
    t.notMatch(ps.output, /sleep 60[012]/, 'no sleep survives inside the sandbox');
  });

  t.test('a 1 GB output is cut at the cap and the command stopped', async (t) => {
    const backend = await under.make();
    const sandbox = await backend.create({ repoDir: repo, label: freshLabel('flood') });
    t.teardown(() => sandbox.destroy());
    // An endless output: the cap, not the timeout, must be what stops it.
    const r = await sandbox.exec('cat /dev/zero; echo finished', { maxOutputBytes: 1 << 20, timeoutMs: 120_000 });
    t.ok(r.outputLimited, 'outputLimited');
    t.equal(r.stdout.length, 1 << 20, 'exactly the cap is kept');
    t.notMatch(r.output, 'finished', 'the command did not run on');
    t.equal(r.timedOut, false, `stopped by the cap, not the timeout (${r.durationMs.toFixed(0)} ms)`);
  });

  t.test('a fork bomb is bounded by the process limit and killed', async (t) => {
    const label = freshLabel('bomb');
    const maxProcesses = 64;
    const backend = await under.make({ maxProcesses });
    const sandbox = await backend.create({ repoDir: repo, label });
    t.teardown(() => sandbox.destroy());
    let peak = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, (await under.leftovers(label)).processes);
        await sleep(100);
      }
    })();
    // bash retries failed forks, so this bomb stays at the limit until it is killed (a dash
    // bomb gives up at the first failed fork and dies out by itself).
    const r = await sandbox.exec("bash -c 'b() { while :; do b & done; }; b' 2>/dev/null", { timeoutMs: 3000, maxOutputBytes: 1 << 16 });
    sampling = false;
    await sampler;
    t.ok(r.timedOut, 'the bomb ran until the timeout killed it');
    t.comment(`returned after ${r.durationMs.toFixed(0)} ms`);
    t.ok(peak <= maxProcesses + 8, `at most about ${maxProcesses} processes at once (peak seen ${peak})`);
    t.ok(peak >= maxProcesses / 2, `the bomb did fill the sandbox (peak seen ${peak}): the count above measures something`);
    const after = await sandbox.exec('echo alive', { timeoutMs: 30_000 });
    t.equal(after.output, 'alive\n', 'the sandbox still works after the bomb');
    await sandbox.destroy();
    t.ok(await eventually(async () => (await under.leftovers(label)).processes === 0), 'no process of the bomb outlives destroy()');
  });

  t.test('the work tree and /tmp are bounded together by diskBytes', { skip: !under.wholeSandbox.disk && `${under.name} has no disk bound on this machine` }, async (t) => {
    const diskBytes = 64 * 1024 ** 2;
    const backend = await under.make({ diskBytes, maxFileBytes: 1024 ** 3 });
    const sandbox = await backend.create({ repoDir: repo, label: freshLabel('disk') });
    t.teardown(() => sandbox.destroy());
    const r = await sandbox.exec('for i in 1 2 3; do head -c 40000000 /dev/zero > /tmp/f$i; head -c 40000000 /dev/zero > big$i; done 2>&1; du -cb /tmp big* | tail -1', { timeoutMs: 30_000 });
    t.match(r.output, /No space left on device/, 'writing 240 MB hits ENOSPC');
    const written = Number(/(\d+)\s+total/.exec(r.output)?.[1]);
    t.ok(written <= diskBytes, `${written} bytes landed, within the ${diskBytes}-byte bound`);
    t.equal((await sandbox.exec('rm -f /tmp/f* big* && echo ok > small && cat small')).output, 'ok\n', 'freeing space lets the sandbox write again');
  });

  t.test('/dev is read-only but for a bounded /dev/shm', async (t) => {
    const shmBytes = 8 * 1024 ** 2;
    const backend = await under.make({ shmBytes });
    const sandbox = await backend.create({ repoDir: repo, label: freshLabel('dev') });
    t.teardown(() => sandbox.destroy());
    // Local: read-only. Docker: its own /dev, a 64 MiB tmpfs. Either way not the host's RAM.
    const fill = await sandbox.exec('head -c 100000000 /dev/zero > /dev/fill 2>&1; stat -c %s /dev/fill 2>/dev/null || echo 0; echo written > /dev/null && echo null-ok');
    const filled = Number(fill.output.trim().split('\n').at(-2));
    t.ok(/Read-only file system|Permission denied/.test(fill.output) || filled <= 64 * 1024 ** 2, `/dev took ${filled} of 100 MB`);
    t.match(fill.output, /null-ok/, '/dev/null still takes writes');
    const shm = await sandbox.exec('head -c 100000000 /dev/zero > /dev/shm/fill 2>&1; stat -c %s /dev/shm/fill');
    const size = Number(shm.output.trim().split('\n').at(-1));
    t.ok(size <= shmBytes, `/dev/shm took ${size} of 100 MB (bound ${shmBytes})`);
  });

  t.test('memory is bounded for the sandbox as a whole, not per process', { skip: !under.wholeSandbox.memory && `${under.name} bounds memory per process only on this machine` }, async (t) => {
    const memoryBytes = 256 * 1024 ** 2;
    const backend = await under.make({ memoryBytes });
    const sandbox = await backend.create({ repoDir: repo, label: freshLabel('mem') });
    t.teardown(() => sandbox.destroy());
    // Four processes of 100 MB resident each: each fits the per-process bound, all four do not.
    const hold = `python3 -c "import time; b = b'x' * (100 * 2**20); time.sleep(3); print('held')"`;
    const r = await sandbox.exec(`for i in 1 2 3 4; do ${hold} & done; wait`, { timeoutMs: 60_000 });
    const held = (r.output.match(/held/g) ?? []).length;
    t.ok(held < 4, `${held} of 4 processes kept 100 MB against a 256 MB sandbox`);
    t.ok(held >= 1, 'one process of 100 MB fits');
  });

  t.test('nested user namespaces are refused', async (t) => {
    const backend = await under.make();
    const sandbox = await backend.create({ repoDir: repo, label: freshLabel('userns') });
    t.teardown(() => sandbox.destroy());
    const r = await sandbox.exec('unshare -U -r id -u 2>&1; echo "exit $?"');
    t.notMatch(r.output, /^0$/m, 'no root inside a new user namespace');
    t.match(r.output, /exit [1-9]/);
    const plain = await sandbox.exec('unshare -U id -u 2>&1; echo "exit $?"');
    t.match(plain.output, /exit [1-9]/, `no new user namespace at all, even unmapped (${plain.output.trim()})`);
  });

  t.test('commands run as an unprivileged user with no capabilities, owning the work tree', async (t) => {
    const backend = await under.make();
    const sandbox = await backend.create({ repoDir: repo, label: freshLabel('user') });
    t.teardown(() => sandbox.destroy());
    const r = await sandbox.exec('id -u; grep -E "^Cap(Eff|Prm|Amb):" /proc/self/status; stat -c %u . app.py; touch new-file && echo made');
    const [uid, ...rest] = r.output.trim().split('\n');
    t.not(uid, '0', `not root (uid ${uid})`);
    t.same(rest.filter((l) => l.startsWith('Cap')).map((l) => l.split(/\s+/)[1]), ['0000000000000000', '0000000000000000', '0000000000000000'], 'effective, permitted and ambient capabilities are empty');
    t.same(rest.filter((l) => /^\d+$/.test(l)), [uid, uid], 'the work tree and its files are its own');
    t.match(r.output, /^made$/m, 'it writes there');
    const sudo = await sandbox.exec('chown 0 app.py 2>&1; echo "exit $?"');
    t.match(sudo.output, /exit [1-9]/, 'it cannot give a file to root');
  });

  t.test('nothing survives destroy()', async (t) => {
    const label = freshLabel('close');
    const backend = await under.make();
    const sandbox = await backend.create({ repoDir: repo, label });
    const running = sandbox.exec('sleep 1000 & sleep 1000', { timeoutMs: 600_000 });
    await sleep(300);
    t.ok((await under.leftovers(label)).sandboxes >= 1, 'the sandbox exists while in use');
    await sandbox.destroy();
    const r = await running;
    t.not(r.exitCode, 0, 'the running command was stopped');
    t.same(await under.leftovers(label), { sandboxes: 0, processes: 0 }, 'no sandbox or process left');
    await sandbox.destroy(); // idempotent
    await t.rejects(sandbox.exec('true'), { code: 'ERR_SWERL_SANDBOX' }, 'a destroyed sandbox refuses commands');
  });

  t.test('SIGINT of the owning process removes its sandboxes', async (t) => {
    const label = freshLabel('sigint');
    const child = spawnTs(CHILD, { SWERL_CHILD_SANDBOX: JSON.stringify({ ...under.childSpec, label }) });
    t.teardown(() => child.kill('SIGKILL'));
    await waitForLine(child, /^ready (\S+)$/m);
    t.ok((await under.leftovers(label)).sandboxes >= 1, 'the child holds a sandbox');
    child.kill('SIGINT');
    const exit = await waitForExit(child);
    t.equal(exit.signal, 'SIGINT', 'the child still ends by SIGINT');
    t.same(await under.leftovers(label), { sandboxes: 0, processes: 0 }, 'nothing of the run survives');
  });

  t.test('SIGTERM mid-create in a process that keeps a handler of its own: the create is refused and nothing it made is left', async (t) => {
    const label = freshLabel('midcreate');
    const child = spawnTs(CHILD, { SWERL_CHILD_SANDBOX: JSON.stringify({ ...under.childSpec, label, mode: 'signal-mid-create', repo }) });
    t.teardown(() => child.kill('SIGKILL'));
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const exit = await waitForExit(child);
    t.same(exit, { code: 0, signal: null }, `the process lived on to its end (stderr: ${err.slice(-500)})`);
    const report = JSON.parse(out.trim()) as { outcome: { made: boolean; code?: string; message?: string }; afterWorks: boolean };
    t.match(report.outcome, { made: false, code: 'ERR_SWERL_SANDBOX', message: /SIGTERM/ }, 'the create in flight is refused, naming the signal');
    t.ok(report.afterWorks, 'a create after the signal makes a working sandbox');
    t.same(await under.leftovers(label), { sandboxes: 0, processes: 0 }, 'nothing it made is left, made or half-made');
  });

  t.test('three processes creating, destroying and reaping at once leave each other alone', async (t) => {
    const labels = [0, 1, 2].map(() => freshLabel('churn'));
    const children = labels.map((label) => spawnTs(CHILD, { SWERL_CHILD_SANDBOX: JSON.stringify({ ...under.childSpec, label, mode: 'churn', repo, seconds: 8 }) }));
    t.teardown(() => children.forEach((child) => child.kill('SIGKILL')));
    const reports = await Promise.all(children.map(async (child) => {
      let out = '';
      let err = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      const exit = await waitForExit(child);
      return { exit, err, report: out.trim() ? (JSON.parse(out.trim()) as { rounds: number; failures: string[] }) : null };
    }));
    for (const [i, { exit, err, report }] of reports.entries()) {
      t.same(exit, { code: 0, signal: null }, `process ${i} ran to its end (stderr: ${err.slice(-500)})`);
      t.ok(report && report.rounds > 0, `process ${i} made, destroyed and reaped (${report?.rounds} rounds)`);
      t.same(report?.failures, [], `process ${i}: no failure (its sandboxes usable through the others' reaps, its own reaps clean)`);
    }
    for (const label of labels) t.same(await under.leftovers(label), { sandboxes: 0, processes: 0 }, `nothing of ${label} is left`);
  });

  t.test('after SIGKILL of the owner, the reaper at the next start removes what is left', async (t) => {
    const label = freshLabel('sigkill');
    const child = spawnTs(CHILD, { SWERL_CHILD_SANDBOX: JSON.stringify({ ...under.childSpec, label }) });
    t.teardown(() => child.kill('SIGKILL'));
    await waitForLine(child, /^ready (\S+)$/m);
    child.kill('SIGKILL');
    await waitForExit(child);
    t.ok((await under.leftovers(label)).sandboxes >= 1, 'SIGKILL left the sandbox behind');
    const next = await under.make();
    const sandbox = await next.create({ repoDir: repo, label: freshLabel('next') }); // the next start reaps
    t.teardown(() => sandbox.destroy());
    t.same(await under.leftovers(label), { sandboxes: 0, processes: 0 }, 'the reaper removed it');
  });
}

/** A repository folder for sandbox tests, written fresh. */
export function writeRepo(dir: string, files: Record<string, string>): string {
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), content);
  }
  return dir;
}
