import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import t from 'tap';

import { DockerSandboxBackend } from '../../../../lib/env/sandbox/docker.js';
import { imageArchive, loadImageArchive } from '../../../../lib/env/sandbox/docker-image.js';
import type { TarEntry } from '../../../../lib/env/sandbox/tar.js';
import type { Sandbox } from '../../../../lib/env/sandbox/sandbox.js';
import { freePortPair } from '../../../../lib/util/ports.js';
import { dockerSkipped, startPodmanService } from '../../../support/podman.js';

const DOCKER_TS = fileURLToPath(new URL('../../../../lib/env/sandbox/docker.ts', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

t.test('options', async (t) => {
  t.throws(() => new DockerSandboxBackend({ limits: { maxProcesses: 1 } }), { code: 'ERR_SWERL_INVALID_ARG', message: /^sandbox\.limits\.maxProcesses / });
  t.throws(() => new DockerSandboxBackend({ limits: { memoryBytes: 'lots' as unknown as number } }), { message: /^sandbox\.limits\.memoryBytes must be of type integer/ });
  t.throws(() => new DockerSandboxBackend({ cpu: 2 } as never), { message: /^sandbox\.cpu is not a known option \(did you mean cpus\?\); known: socketPath, label/ });
  t.throws(() => new DockerSandboxBackend({ label: 'Has Spaces' }), { message: /^sandbox\.label / });
  t.throws(() => new DockerSandboxBackend({ socketPath: 'relative.sock' }), { message: /^sandbox\.socketPath / });
  const defaults = new DockerSandboxBackend({ socketPath: '/nonexistent/docker.sock' });
  t.equal(defaults.options.label, 'swerl');
  t.equal(defaults.options.hostBinds, true);
  t.equal(defaults.options.baseImage, 'localhost/swerl-base:1');
  t.equal(defaults.options.limits.maxProcesses, 256, 'limits are defaulted');
});

t.test('no daemon: the error names the socket and how to start one', async (t) => {
  const backend = new DockerSandboxBackend({ socketPath: '/nonexistent/docker.sock' });
  await t.rejects(backend.create({}), { code: 'ERR_SWERL_SANDBOX', message: /\/nonexistent\/docker\.sock \(no such socket\).*podman system service/s });
  await t.rejects(backend.reap(), { code: 'ERR_SWERL_SANDBOX' });
  const saved = process.env.DOCKER_HOST;
  t.teardown(() => {
    if (saved === undefined) delete process.env.DOCKER_HOST;
    else process.env.DOCKER_HOST = saved;
  });
  process.env.DOCKER_HOST = 'unix:///nonexistent/from-env.sock';
  await t.rejects(new DockerSandboxBackend().create({}), { code: 'ERR_SWERL_SANDBOX', message: /tried unix:\/\/\/nonexistent\/from-env\.sock \(no such socket\)\. / }, '$DOCKER_HOST is used');
  // Below the ephemeral range: no outgoing connection takes it meanwhile.
  const port = await freePortPair();
  process.env.DOCKER_HOST = `tcp://127.0.0.1:${port}`;
  await t.rejects(new DockerSandboxBackend().create({}), { code: 'ERR_SWERL_SANDBOX', message: new RegExp(`tried tcp://127\\.0\\.0\\.1:${port} \\(connect ECONNREFUSED`) }, 'a tcp:// $DOCKER_HOST is used');
  process.env.DOCKER_HOST = 'ssh://user@host';
  t.throws(() => new DockerSandboxBackend(), { code: 'ERR_SWERL_INVALID_ARG', message: /^DOCKER_HOST is "ssh:\/\/user@host": ssh:\/\/ is not supported; forward the remote socket/ });
});

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The HTTP status an API call failed with (0 when it did not fail). */
async function statusOf(call: Promise<unknown>): Promise<number> {
  try {
    await call;
    return 0;
  } catch (error) {
    return (error as { statusCode?: number }).statusCode ?? -1;
  }
}

t.test('docker sandbox', { skip: dockerSkipped ? 'SWERL_SKIP_DOCKER=1' : false }, async (t) => {
  const socketPath = await startPodmanService(t);
  const label = `dtest-${process.pid}`;
  const baseImage = `localhost/swerl-base-test:${process.pid}`;
  const backend = new DockerSandboxBackend({ socketPath, label, baseImage, limits: { maxProcesses: 64, timeoutMs: 30_000 }, cpus: 1.5 });
  const docker = await backend.client();
  // Test images are named by the test's pid: drop those of runs that died before their teardown.
  for (const image of await docker.listImages()) {
    for (const tag of image.RepoTags ?? []) {
      const pid = /^localhost\/swerl-(?:base-test|base-race|image-test):(\d+)$/.exec(tag)?.[1];
      if (pid !== undefined && !processAlive(Number(pid))) await docker.getImage(tag).remove().catch(() => undefined);
    }
  }
  const imagesMade = [baseImage];
  t.teardown(async () => {
    await backend.reap({ label, all: true }).catch(() => undefined);
    for (const image of imagesMade) await docker.getImage(image).remove({ force: true }).catch(() => undefined);
  });

  const fixture = mkdtempSync(path.join(os.tmpdir(), 'swerl-docker-repo-'));
  t.teardown(() => rmSync(fixture, { recursive: true, force: true }));
  mkdirSync(path.join(fixture, 'pkg'));
  writeFileSync(path.join(fixture, 'pkg', 'mod.py'), 'def answer():\n    return 42\n');
  writeFileSync(path.join(fixture, 'test_mod.py'), 'from pkg.mod import answer\n\ndef test_answer():\n    assert answer() == 42\n');
  writeFileSync(path.join(fixture, 'README'), 'hello\n');

  const containerOf = (sandbox: Sandbox) => docker.getContainer(sandbox.id);
  /**
   * The processes in a sandbox, seen from the host (the API's top, not an exec). Podman's top
   * answers 200 with an empty body while the pids cgroup is full: then it is asked again.
   */
  const processes = async (sandbox: Sandbox): Promise<string[]> => {
    for (let attempt = 0; ; attempt++) {
      const top = (await containerOf(sandbox).top()) as { Processes?: string[][] };
      if (top.Processes) return top.Processes.map((p) => p.join(' '));
      if (attempt === 50) throw new Error(`top gave no process list: ${JSON.stringify(top).slice(0, 200)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  /** Polls `processes` until `done` holds of them (killed processes may take a moment to be reaped). */
  const settled = async (sandbox: Sandbox, done: (list: string[]) => boolean): Promise<string[]> => {
    const deadline = Date.now() + 3_000;
    for (;;) {
      const list = await processes(sandbox);
      if (done(list) || Date.now() > deadline) return list;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const noneLeft = async (sandbox: Sandbox, pattern: RegExp) => !(await settled(sandbox, (list) => !list.some((p) => pattern.test(p)))).some((p) => pattern.test(p));
  /** The sandbox's pids cgroup folder on this host (v1 or v2), or null where it cannot be read. */
  const pidsCgroup = async (sandbox: Sandbox) => {
    const pid = (await containerOf(sandbox).inspect()).State.Pid;
    try {
      const lines = readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n');
      const v1 = lines.find((l) => l.split(':')[1] === 'pids');
      const dir = v1 ? `/sys/fs/cgroup/pids${v1.split(':')[2]}` : `/sys/fs/cgroup${lines.find((l) => l.startsWith('0::'))!.slice(3)}`;
      readFileSync(path.join(dir, 'pids.current'));
      return { read: (file: string) => readFileSync(path.join(dir, file), 'utf8').trim() };
    } catch {
      return null;
    }
  };

  t.test('the base image: built through the API, idempotent, safe when two race', async (t) => {
    const name = `localhost/swerl-base-race:${process.pid}`;
    imagesMade.push(name);
    const a = new DockerSandboxBackend({ socketPath, baseImage: name });
    const b = new DockerSandboxBackend({ socketPath, baseImage: name });
    await Promise.all([a.ensureBaseImage(), b.ensureBaseImage()]);
    const first = await docker.getImage(name).inspect();
    t.ok(first.Config.Labels?.['swerl.layer'], 'labelled with its layer digest');
    await a.ensureBaseImage();
    t.equal((await docker.getImage(name).inspect()).Id, first.Id, 'a second call keeps the same image');
  });

  const sandbox = await backend.create({ repoDir: fixture });
  t.teardown(() => sandbox.destroy());

  t.test('a sandbox from a repoDir', async (t) => {
    t.match(sandbox.id, new RegExp(`^${label}-[0-9a-f]{12}$`));
    t.equal(sandbox.label, label);
    t.equal(sandbox.workdir, '/testbed');
    const info = await containerOf(sandbox).inspect();
    t.equal(info.Config.Labels['swerl.label'], label);
    t.equal(info.Config.Labels['swerl.sandbox'], sandbox.id);
    t.equal(info.Config.Labels['swerl.owner-pid'], String(process.pid));
    t.match(info.Config.Labels['swerl.owner-start'], /^\d+$/);
    t.ok(!Number.isNaN(Date.parse(info.Config.Labels['swerl.created']!)), 'swerl.created is a date');
    t.equal(info.HostConfig.NetworkMode, 'none');
    t.equal(info.HostConfig.PidsLimit, 64);
    t.equal(info.HostConfig.ReadonlyRootfs, true);
    t.equal(info.HostConfig.NanoCpus, 1.5e9);
    const listing = await sandbox.exec('find . -type f | sort');
    t.equal(listing.stdout.toString(), './README\n./pkg/mod.py\n./test_mod.py\n', 'the repo is at the work tree');
    const pytest = await sandbox.exec('python3 -m pytest -q -p no:cacheprovider 2>&1 | tail -1');
    t.match(pytest.stdout.toString(), /1 passed/, 'pytest runs from the host toolchain');
    t.equal((await sandbox.exec('git --version && node -e "process.stdout.write(String(6*7))"')).exitCode, 0, 'git and node are there');
  });

  t.test('exec', async (t) => {
    const r = await sandbox.exec('echo out; echo err >&2; exit 3');
    t.equal(r.exitCode, 3);
    t.equal(r.stdout.toString(), 'out\n');
    t.equal(r.stderr.toString(), 'err\n');
    t.equal(r.output, 'out\nerr\n', 'combined, in order');
    t.equal(r.timedOut, false);
    t.equal(r.outputLimited, false);
    t.ok(r.durationMs > 0);
    t.equal((await sandbox.exec('kill -TERM $$')).exitCode, 143, 'killed by a signal: 128+N');
    t.equal((await sandbox.exec('pwd')).stdout.toString(), '/testbed\n', 'default cwd: the work tree');
    t.equal((await sandbox.exec('pwd', { cwd: '/testbed/pkg' })).stdout.toString(), '/testbed/pkg\n');
    const env = await sandbox.exec('echo "$FOO|$SWERL_SANDBOX|$HOME|$PATH"', { env: { FOO: 'bar baz' } });
    t.equal(env.stdout.toString(), `bar baz|${sandbox.id}|/tmp|/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n`);
    t.equal((await sandbox.exec('cat | tr a-z A-Z', { stdin: 'shout\n' })).stdout.toString(), 'SHOUT\n', 'stdin');
    const big = randomBytes(300_000);
    t.equal((await sandbox.exec('wc -c', { stdin: big })).stdout.toString().trim(), String(big.length), 'a large stdin');
    t.equal((await sandbox.exec('cat; echo end')).stdout.toString(), 'end\n', 'stdin is empty by default');
    t.equal((await sandbox.exec('nosuchcommand')).exitCode, 127);
  });

  t.test('files', async (t) => {
    await sandbox.writeFile('new/dir/a.txt', 'alpha\n');
    t.equal((await sandbox.readFile('/testbed/new/dir/a.txt')).toString(), 'alpha\n', 'relative write, absolute read');
    const binary = Buffer.from([0, 1, 2, 254, 255, 10, 13]);
    await sandbox.writeFile('/tmp/b.bin', binary);
    t.same(await sandbox.readFile('/tmp/b.bin'), binary, 'binary round trip');
    t.equal((await sandbox.readFile('README')).toString(), 'hello\n');
    await t.rejects(sandbox.readFile('missing.txt'), { code: 'ERR_SWERL_SANDBOX', message: /cannot read missing\.txt: .*No such file/ });
    await t.rejects(sandbox.writeFile('/usr/x.txt', 'x'), { code: 'ERR_SWERL_SANDBOX', message: /cannot write \/usr\/x\.txt: .*Read-only file system/ });
  });

  t.test('no network', async (t) => {
    const server = net.createServer((socket) => socket.end('hello'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const port = (server.address() as net.AddressInfo).port;
    const r = await sandbox.exec(
      `node -e "require('net').connect(${port}, '127.0.0.1').on('connect', () => { console.log('connected'); process.exit(0) }).on('error', (e) => { console.log(e.code); process.exit(3) })"`,
    );
    t.equal(r.exitCode, 3, "the host's listening port is not reachable");
    t.equal(r.stdout.toString().trim(), 'ECONNREFUSED');
    const interfaces = await sandbox.exec("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '");
    t.equal(interfaces.stdout.toString(), 'lo\n', 'loopback only');
    t.equal((await sandbox.exec('tail -n +2 /proc/net/route')).stdout.toString(), '', 'no routes');
  });

  t.test('nothing of the host is writable', async (t) => {
    const probe = `swerl-probe-${randomBytes(4).toString('hex')}`;
    for (const dir of ['/usr', '/etc', '/', '/usr/bin', '/var', '/root']) {
      const r = await sandbox.exec(`echo x > ${path.posix.join(dir, probe)}`);
      t.not(r.exitCode, 0, `a write to ${dir} fails`);
      t.match(r.stderr.toString(), /Read-only file system|Permission denied/);
      t.notOk(existsSync(path.join(dir, probe)), `nothing appears in the host's ${dir}`);
    }
    t.equal((await sandbox.exec(`echo x > /tmp/${probe} && echo x > /testbed/${probe}`)).exitCode, 0, '/tmp and the work tree are writable');
    t.notOk(existsSync(path.join('/tmp', probe)), "the sandbox's /tmp is not the host's");
    t.notOk(existsSync(path.join(fixture, probe)), 'the work tree is a copy');
  });

  t.test('a timeout kills the whole tree', async (t) => {
    const r = await sandbox.exec('sleep 30 & (sleep 31 &) ; sleep 32; echo never', { timeoutMs: 700 });
    t.equal(r.exitCode, -1);
    t.equal(r.timedOut, true);
    t.ok(r.durationMs < 30_000, `returned before the command's own 32 s (${Math.round(r.durationMs)} ms)`);
    t.ok(await noneLeft(sandbox, /sleep 3[012]/), 'no sleep of the command is left (seen from the host)');
    t.ok((await processes(sandbox)).some((p) => /trap 'kill -9 -1' USR1/.test(p)), 'the keep-alive is still there');
    t.equal((await sandbox.exec('echo alive')).stdout.toString(), 'alive\n', 'the sandbox goes on');
  });

  t.test('a timeout beside another command kills only its own tree', async (t) => {
    const [slow, killed] = await Promise.all([
      sandbox.exec('sleep 2; echo survived'),
      sandbox.exec('sleep 33 & sleep 34', { timeoutMs: 500 }),
    ]);
    t.equal(killed.timedOut, true);
    t.equal(slow.exitCode, 0);
    t.equal(slow.stdout.toString(), 'survived\n');
    t.ok(await noneLeft(sandbox, /sleep 3[34]/), 'nothing of the timed-out command is left');
  });

  t.test('output past maxOutputBytes kills the command', async (t) => {
    const r = await sandbox.exec('yes', { maxOutputBytes: 10_000 });
    t.equal(r.outputLimited, true);
    t.equal(r.stdout.length, 10_000);
    t.equal(r.timedOut, false);
    t.equal(r.exitCode, 137, 'killed');
    t.ok(await noneLeft(sandbox, /\byes\b/), 'yes is gone');
  });

  t.test('a fork bomb is bounded by the pids limit and killed by the timeout', async (t) => {
    // bash retries a failed fork and the loop goes on: the bomb stays at the limit until killed
    // (dash gives up on the first failed fork, and the bomb dies out by itself).
    const pids = await pidsCgroup(sandbox);
    const bombing = sandbox.exec("bash -c 'b() { while :; do b & done; }; b'", { timeoutMs: 3_000 });
    let peak = 0;
    if (pids) {
      t.equal(pids.read('pids.max'), '64', 'the pids cgroup holds maxProcesses');
      for (let i = 0; i < 8; i++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        peak = Math.max(peak, Number(pids.read('pids.current')));
      }
      t.ok(peak <= 64, `never more than maxProcesses (peak ${peak})`);
      t.ok(peak >= 48, `the bomb did reach the limit (peak ${peak})`);
    } else {
      t.comment('the pids cgroup is not readable from here: the peak is not checked');
    }
    const r = await bombing;
    t.equal(r.timedOut, true);
    // The bomb never ends by itself: returning at all, timed out, is the kill (a hang would be
    // the test's own timeout). The time is the machine's, so it is shown, not bounded.
    t.comment(`killed after ${Math.round(r.durationMs)} ms`);
    // PID 1 (bash here) waits in a builtin and forks nothing after its kill: the pids the bomb
    // held may still be in use then, and a fork that failed took the whole container down.
    const after = await settled(sandbox, (list) => list.length <= 1);
    t.equal(after.length, 1, `only PID 1 is left, no sleep forked after the kill (${after.join('; ')})`);
    t.equal((await sandbox.exec('echo alive')).stdout.toString(), 'alive\n');
  });

  t.test('a sandbox from an image with the repo in it', async (t) => {
    const name = `localhost/swerl-image-test:${process.pid}`;
    imagesMade.push(name);
    await loadImageArchive(docker, imageArchive(name, hostShellEntries({ 'testbed/hello.txt': 'from the image\n' }), { Env: ['PATH=/bin'] }).archive);
    const fromImage = await backend.create({ image: name });
    t.teardown(() => fromImage.destroy());
    t.equal((await fromImage.exec('cat hello.txt')).stdout.toString(), 'from the image\n');
    t.equal((await fromImage.exec('echo "$PATH"')).stdout.toString(), '/bin\n', "the image's PATH stays");
    const info = await containerOf(fromImage).inspect();
    t.equal(info.HostConfig.NetworkMode, 'none');
    t.notOk(info.HostConfig.ReadonlyRootfs, "the image's root stays writable (its own layer)");
    t.same(info.HostConfig.Binds ?? [], [], 'no host folder is bound');
    await t.rejects(backend.create({ image: 'localhost/swerl-no-such-image:0' }), { code: 'ERR_SWERL_SANDBOX', message: /not on the Docker host/ });
  });

  t.test('destroy removes the container and its volume', async (t) => {
    const doomed = await backend.create({ repoDir: fixture });
    const info = await containerOf(doomed).inspect();
    const volume = info.Mounts.find((m) => m.Destination === '/testbed')!.Name!;
    const running = doomed.exec('sleep 30');
    while (!(await processes(doomed)).some((p) => p.includes('sleep 30'))) await new Promise((resolve) => setTimeout(resolve, 50));
    await doomed.destroy();
    t.equal(doomed.destroyed, true);
    t.equal(await statusOf(containerOf(doomed).inspect()), 404, 'the container is gone');
    t.equal(await statusOf(docker.getVolume(volume).inspect()), 404, 'its work-tree volume is gone');
    t.not((await running).exitCode, 0, 'a running command ends');
    await doomed.destroy();
    t.pass('a second destroy is a no-op');
    await t.rejects(doomed.exec('true'), { code: 'ERR_SWERL_SANDBOX' });
  });

  t.test('reap and the exit hook', async (t) => {
    const tsImport = process.execArgv.find((a) => a.includes('@tapjs/typescript')) ?? `--import=${pathToFileURL(path.join(REPO_ROOT, 'node_modules/@tapjs/typescript/dist/esm/import.mjs'))}`;
    const childEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TAP|_TAPJS|NODE_OPTIONS)/.test(k)));
    const childLabel = `${label}-child`;
    const startChild = (mode: 'hang' | 'exit') => {
      const code = `
        const { DockerSandboxBackend } = await import(${JSON.stringify(pathToFileURL(DOCKER_TS).href)});
        const backend = new DockerSandboxBackend({ socketPath: ${JSON.stringify(socketPath)}, label: ${JSON.stringify(childLabel)}, baseImage: ${JSON.stringify(baseImage)} });
        const sandbox = await backend.create({});
        process.stdout.write(sandbox.id + '\\n');
        if (${JSON.stringify(mode)} === 'exit') process.exit(0);
        setInterval(() => {}, 1000);
      `;
      const child = spawn(process.execPath, [tsImport, '--input-type=module', '-e', code], { cwd: REPO_ROOT, env: { ...childEnv, TS_NODE_TRANSPILE_ONLY: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const id = new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('\n')) resolve(out.trim());
        });
        child.on('close', (c) => reject(new Error(`child exited (${c}) before creating a sandbox: ${stderr}`)));
      });
      const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
      // A stalled daemon or a child that ignores its signal fails here, not at tap's file timeout.
      const within = <T>(what: string, promise: Promise<T>) =>
        Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`child (${mode}): no ${what} in 60 s; stderr: ${stderr}`)), 60_000).unref())]);
      return { child, id: within('sandbox id', id), closed: within('exit', closed) };
    };

    const hanging = startChild('hang');
    const hangingId = await hanging.id;
    t.equal((await docker.getContainer(hangingId).inspect()).State.Running, true, 'the child made a sandbox');
    t.equal(await backend.reap({ label: childLabel }), 0, 'a live owner keeps its sandbox');
    hanging.child.kill('SIGKILL');
    await hanging.closed;
    t.equal((await docker.getContainer(hangingId).inspect()).State.Running, true, 'SIGKILL leaves the container behind');
    t.equal(await backend.reap({ label: 'some-other-label' }), 0, 'another label is not touched');
    t.equal(await backend.reap({ label: childLabel }), 1, 'reap removes it');
    t.equal(await statusOf(docker.getContainer(hangingId).inspect()), 404, 'the container is gone');

    const interrupted = startChild('hang');
    const interruptedId = await interrupted.id;
    interrupted.child.kill('SIGINT');
    await interrupted.closed;
    t.equal(await statusOf(docker.getContainer(interruptedId).inspect()), 404, 'SIGINT removes the container (cleanup hook)');

    const exiting = startChild('exit');
    const exitingId = await exiting.id;
    await exiting.closed;
    t.equal(await statusOf(docker.getContainer(exitingId).inspect()), 404, 'process.exit removes the container (destroySync)');
  });

  t.test('latency: create + exec(true) + destroy', async (t) => {
    const runs = 5;
    const started = performance.now();
    for (let i = 0; i < runs; i++) {
      const s = await backend.create({ repoDir: fixture });
      t.equal((await s.exec('true')).exitCode, 0);
      await s.destroy();
    }
    const each = (performance.now() - started) / runs;
    t.comment(`create + exec(true) + destroy: ${each.toFixed(0)} ms each (mean of ${runs})`);
    t.ok(each < 5_000);
  });
});

/** A tiny image root: the host's /bin/sh, cat and sleep with the libraries they load, plus `extra` files. */
function hostShellEntries(extra: Record<string, string>): TarEntry[] {
  const files = new Map<string, string>();
  for (const tool of ['sh', 'cat', 'sleep']) {
    const which = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
    files.set(`bin/${tool}`, realpathSync(which));
    const ldd = spawnSync('ldd', [which], { encoding: 'utf8' }).stdout;
    for (const m of ldd.matchAll(/(\/\S+) \(0x/g)) files.set(m[1]!.slice(1), realpathSync(m[1]!));
  }
  const dirs = new Set<string>(['testbed', 'tmp']);
  for (const name of [...files.keys(), ...Object.keys(extra)]) {
    for (let d = path.posix.dirname(name); d !== '.'; d = path.posix.dirname(d)) dirs.add(d);
  }
  return [
    ...[...dirs].sort().map((d): TarEntry => ({ name: `${d}/`, type: 'dir', mode: d === 'tmp' ? 0o1777 : 0o755 })),
    ...[...files].map(([name, source]): TarEntry => ({ name, data: readFileSync(source), mode: 0o755 })),
    ...Object.entries(extra).map(([name, text]): TarEntry => ({ name, data: Buffer.from(text) })),
  ];
}
