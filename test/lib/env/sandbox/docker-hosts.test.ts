/**
 * The docker backend over many hosts, with real daemons: private podman services, each with a
 * container store of its own (two over unix sockets, one over tcp), and a TLS endpoint that
 * requires a client certificate. Placement, per-host limits, a host that stops (its sandboxes
 * fail as infrastructure faults, the rollout engine plays them again on the other host), a host
 * that comes back, the reaper and the exit hook on every host.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import t from 'tap';

import { parseAgentLoopOptions } from '../../../../lib/agent/agent-loop.js';
import { isInfrastructureFault, runRollouts, type RolloutItem } from '../../../../lib/agent/rollout.js';
import { OraclePolicy } from '../../../../lib/agent/scripted-policy.js';
import { DockerSandboxBackend } from '../../../../lib/env/sandbox/docker.js';
import { parseSandboxOptions } from '../../../../lib/env/sandbox/options.js';
import type { Sandbox } from '../../../../lib/env/sandbox/sandbox.js';
import { freePortPair } from '../../../../lib/util/ports.js';
import { SweEnv } from '../../../../lib/env/swe-env.js';
import { loadSwerlTaskFolder } from '../../../../lib/env/tasks/swerl-folder.js';
import type { AgentPolicy } from '../../../../lib/types/policy.js';
import { clientOf, sandboxesOn, startPodmanHost, startTlsEndpoint } from '../../../support/docker-hosts.js';
import { dockerSkipped } from '../../../support/podman.js';

const DOCKER_TS = fileURLToPath(new URL('../../../../lib/env/sandbox/docker.ts', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const SWE_MINI = path.join(REPO_ROOT, 'tasks', 'swe-mini');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The error a promise rejects with (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('expected a rejection');
}

/** A port nothing listens on, below the ephemeral range: no outgoing connection takes it meanwhile. */
const closedPort = (): Promise<number> => freePortPair();

t.test('options: hosts, limits and health checks; bad ones refused naming the field', async (t) => {
  const make = (options: object) => () => new DockerSandboxBackend(options as never);
  t.throws(make({ hosts: ['unix:///a.sock'], socketPath: '/b.sock' }), {
    code: 'ERR_SWERL_INVALID_ARG',
    message: /^sandbox\.hosts cannot be given with socketPath; list the socket among the hosts \(unix:\/\/\/b\.sock\) and drop socketPath/,
  });
  t.throws(make({ hosts: [] }), { message: /^sandbox\.hosts is empty; list at least one host/ });
  t.throws(make({ hosts: [5] }), { message: /^sandbox\.hosts\.0 is 5; give a URL \(unix:\/\/\/path\/docker\.sock, tcp:\/\/host:port\) or \{ url, tls/ });
  t.throws(make({ hosts: ['unix:///a.sock', 'http://b:2375'] }), { message: /^sandbox\.hosts\.1 is "http:\/\/b:2375": not a Docker host URL; use unix:\/\/\/path/ });
  t.throws(make({ hosts: ['unix://relative.sock'] }), { message: /^sandbox\.hosts\.0 is "unix:\/\/relative\.sock": a unix socket needs an absolute path; write unix:\/\/\/path/ });
  t.throws(make({ hosts: ['tcp://h:1/v1.40'] }), { message: /^sandbox\.hosts\.0 is "tcp:\/\/h:1\/v1\.40": only a host and port are allowed/ });
  t.throws(make({ hosts: ['ssh://me@h'] }), { message: /^sandbox\.hosts\.0 is "ssh:\/\/me@h": ssh:\/\/ is not supported; forward the remote socket/ });
  t.throws(make({ hosts: ['tcp://h:1', 'tcp://h:1/'] }), { message: /^sandbox\.hosts\.1 is "tcp:\/\/h:1\/", the same host as sandbox\.hosts\.0; list each host once/ });
  t.throws(make({ hosts: [{ tls: {} }] }), { message: /^sandbox\.hosts\.0\.url is required/ });
  t.throws(make({ hosts: [{ url: 'unix:///a.sock', tls: { ca: '/ca.pem' } }] }), { message: /^sandbox\.hosts\.0\.url is a unix socket \(unix:\/\/\/a\.sock\): tls applies to tcp:\/\/ hosts only/ });
  t.throws(make({ hosts: [{ url: 'tcp://h:2376', tls: { cacert: '/ca.pem' } }] }), { message: /^sandbox\.hosts\.0\.tls\.cacert is not a known option \(did you mean cert\?\); known: ca, cert, key/ });
  t.throws(make({ hosts: [{ url: 'tcp://h:2376', maxSandboxes: 0 }] }), { message: /^sandbox\.hosts\.0\.maxSandboxes must be >= 1/ });
  t.throws(make({ maxSandboxesPerHost: 0 }), { message: /^sandbox\.maxSandboxesPerHost must be >= 1/ });
  t.throws(make({ healthCheckMs: 'soon' }), { message: /^sandbox\.healthCheckMs must be of type integer/ });
  t.throws(() => parseSandboxOptions('docker', { hosts: ['tcp://h'], maxSandboxesPerHost: 1.5 }, 'config.tasks.sandboxOptions'), {
    message: /^config\.tasks\.sandboxOptions\.maxSandboxesPerHost must be of type integer/,
  }, "a training config's sandboxOptions go through the same parser");

  const backend = new DockerSandboxBackend({ hosts: ['unix:///a.sock', { url: 'tcp://[::1]', tls: { ca: '/ca.pem' }, maxSandboxes: 3 }, 'tcp://h:1234'], maxSandboxesPerHost: 2 });
  t.same(backend.options.hosts, [{ url: 'unix:///a.sock' }, { url: 'tcp://[::1]', tls: { ca: '/ca.pem' }, maxSandboxes: 3 }, { url: 'tcp://h:1234' }], 'a URL string becomes { url }');
  t.equal(backend.options.healthCheckMs, 10_000, 'healthCheckMs: 10 s by default');
  t.same(backend.hosts.map((h) => [h.name, h.maxSandboxes]), [['unix:///a.sock', 2], ['tcp://[::1]', 3], ['tcp://h:1234', 2]], "maxSandboxesPerHost, unless the host's own maxSandboxes");
  t.same(parseSandboxOptions('docker', backend.options, 'again'), backend.options, 'parsing resolved options again changes nothing');
  t.equal(new DockerSandboxBackend({ socketPath: '/x.sock' }).hosts.length, 1, 'socketPath: one host, as before');
});

t.test('no host answers: the error names every host and why', async (t) => {
  const port = await closedPort();
  const backend = new DockerSandboxBackend({ hosts: ['unix:///nonexistent/a.sock', `tcp://127.0.0.1:${port}`] });
  const why = new RegExp(`^none of the 2 Docker hosts answered; tried unix:///nonexistent/a\\.sock \\(no such socket\\), tcp://127\\.0\\.0\\.1:${port} \\(connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\)`);
  await t.rejects(backend.create({}), { code: 'ERR_SWERL_SANDBOX', message: why });
  await t.rejects(backend.reap(), { code: 'ERR_SWERL_SANDBOX', message: why });
});

t.test('many hosts', { skip: dockerSkipped ? 'SWERL_SKIP_DOCKER=1' : process.env.SWERL_DOCKER_SOCKET ? 'needs private podman services' : false }, async (t) => {
  const [a, b, c] = await Promise.all([startPodmanHost(t), startPodmanHost(t), startPodmanHost(t, { tcpPort: 0 })]);
  const tlsHost = await startTlsEndpoint(t, b.socketPath!);
  const tlsFiles = { ca: tlsHost.ca, cert: tlsHost.cert, key: tlsHost.key };
  const label = `dhosts-${process.pid}`;
  const fixture = mkdtempSync(path.join(os.tmpdir(), 'swerl-docker-hosts-repo-'));
  t.teardown(() => rmSync(fixture, { recursive: true, force: true }));
  writeFileSync(path.join(fixture, 'README'), 'hello\n');
  const backends: DockerSandboxBackend[] = [];
  const backend = (options: ConstructorParameters<typeof DockerSandboxBackend>[0]) => {
    const made = new DockerSandboxBackend({ label, ...options });
    backends.push(made);
    return made;
  };
  t.teardown(async () => {
    for (const made of backends) await made.reap({ label, all: true }).catch(() => undefined);
  });
  const on = async (url: string, sandboxes: Sandbox[]) => {
    const here = new Set(await sandboxesOn(url, label));
    return sandboxes.filter((s) => here.has(s.id)).length;
  };

  t.test('two hosts, two stores; each sandbox goes to the host holding the fewest', async (t) => {
    const spread = backend({ hosts: [a.url, b.url] });
    const four = await Promise.all([1, 2, 3, 4].map(() => spread.create({})));
    t.equal(await on(a.url, four), 2, 'two on the first host (asked its daemon)');
    t.equal(await on(b.url, four), 2, 'two on the second');
    const everythingOnB = (await clientOf(b.url).listContainers({ all: true })).map((info) => info.Id);
    const aIds = (await clientOf(a.url).listContainers({ all: true })).map((info) => info.Id);
    t.equal(aIds.filter((id) => everythingOnB.includes(id)).length, 0, "neither daemon lists the other's containers");
    const info = await clientOf(a.url).getContainer((await sandboxesOn(a.url, label))[0]!).inspect();
    t.equal(info.Config.Labels['swerl.owner-host'], os.hostname(), 'containers name the machine that made them');

    const firstOnA = await sandboxesOn(a.url, label);
    await Promise.all(four.filter((s) => firstOnA.includes(s.id)).map((s) => s.destroy()));
    const two = [await spread.create({}), await spread.create({})];
    t.equal(await on(a.url, two), 2, 'with the first host emptied, the next two go there (fewest live)');
    t.same(spread.hosts.map((h) => h.live), [2, 2]);
    await Promise.all([...four, ...two].map((s) => s.destroy()));
    t.same(spread.hosts.map((h) => h.live), [0, 0], 'destroy frees the slots');
    t.same([await sandboxesOn(a.url, label), await sandboxesOn(b.url, label)], [[], []]);
  });

  t.test('per-host limits: a create waits for a slot, in call order', async (t) => {
    const limited = backend({ hosts: [{ url: a.url, maxSandboxes: 2 }, b.url], maxSandboxesPerHost: 1 });
    const first = await Promise.all([limited.create({}), limited.create({}), limited.create({})]);
    t.equal(await on(a.url, first), 2, 'the first host holds its own maxSandboxes (2)');
    t.equal(await on(b.url, first), 1, 'the second holds maxSandboxesPerHost (1)');
    const order: string[] = [];
    const fourth = limited.create({}).then((s) => (order.push('fourth'), s));
    const fifth = limited.create({}).then((s) => (order.push('fifth'), s));
    await sleep(800);
    t.same(order, [], 'both wait while every host is full');
    const onB = new Set(await sandboxesOn(b.url, label));
    await first.find((s) => onB.has(s.id))!.destroy();
    const got4 = await fourth;
    await sleep(300);
    t.same(order, ['fourth'], 'the first to ask gets the freed slot; the next still waits');
    t.ok((await sandboxesOn(b.url, label)).includes(got4.id), 'on the host that freed it');
    await first.find((s) => !onB.has(s.id))!.destroy();
    const got5 = await fifth;
    t.same(order, ['fourth', 'fifth']);
    t.ok((await sandboxesOn(a.url, label)).includes(got5.id));
    t.same(limited.hosts.map((h) => h.live), [2, 1]);
    await Promise.all([...first, got4, got5].map((s) => s.destroy()));
  });

  t.test('a tcp:// host', async (t) => {
    const overTcp = backend({ hosts: [c.url] });
    const sandbox = await overTcp.create({ repoDir: fixture });
    t.same(await sandboxesOn(c.url, label), [sandbox.id]);
    t.equal((await sandbox.exec('cat README && echo ok')).output, 'hello\nok\n', 'the repo copied in, a command run');
    await sandbox.writeFile('notes/a.txt', 'over tcp\n');
    t.equal((await sandbox.readFile('notes/a.txt')).toString(), 'over tcp\n', 'stdin and files');
    await sandbox.destroy();
    t.same(await sandboxesOn(c.url, label), []);
  });

  t.test('TLS: a client certificate signed by the CA gets in; none, or a server the CA did not sign, is refused', async (t) => {
    const overTls = backend({ hosts: [{ url: tlsHost.url, tls: tlsFiles }] });
    const sandbox = await overTls.create({ repoDir: fixture });
    t.same(await sandboxesOn(b.url, label), [sandbox.id], 'the sandbox is on the daemon behind the TLS endpoint');
    t.equal((await sandbox.exec('echo ok && ls')).output, 'ok\nREADME\n');
    await sandbox.destroy();
    t.same(await sandboxesOn(b.url, label), []);

    const url = tlsHost.url.replace(/\./g, '\\.');
    const noClientCert = new DockerSandboxBackend({ hosts: [{ url: tlsHost.url, tls: { ca: tlsHost.ca } }] });
    await t.rejects(noClientCert.create({}), { code: 'ERR_SWERL_SANDBOX', message: new RegExp(`^no Docker Engine API answered; tried ${url} \\(.*certificate required`) }, 'no client certificate');
    const wrongCa = new DockerSandboxBackend({ hosts: [{ url: tlsHost.url, tls: { ...tlsFiles, ca: tlsHost.otherCa } }] });
    await t.rejects(wrongCa.create({}), { code: 'ERR_SWERL_SANDBOX', message: new RegExp(`tried ${url} \\(.*(self-signed certificate in certificate chain|unable to verify)`) }, "a server certificate the CA did not sign");
    const missing = new DockerSandboxBackend({ hosts: [{ url: tlsHost.url, tls: { ...tlsFiles, cert: '/nonexistent/cert.pem' } }] });
    await t.rejects(missing.create({}), { code: 'ERR_SWERL_SANDBOX', message: new RegExp(`tried ${url} \\(cannot read tls\\.cert /nonexistent/cert\\.pem \\(ENOENT\\)\\)`) }, 'a TLS file that cannot be read');

    // The docker CLI's variables: DOCKER_TLS_VERIFY, and ca.pem, cert.pem, key.pem in DOCKER_CERT_PATH.
    const certs = t.testdir({});
    mkdirSync(certs, { recursive: true });
    copyFileSync(tlsHost.ca, path.join(certs, 'ca.pem'));
    copyFileSync(tlsHost.cert, path.join(certs, 'cert.pem'));
    copyFileSync(tlsHost.key, path.join(certs, 'key.pem'));
    const saved = { DOCKER_HOST: process.env.DOCKER_HOST, DOCKER_TLS_VERIFY: process.env.DOCKER_TLS_VERIFY, DOCKER_CERT_PATH: process.env.DOCKER_CERT_PATH };
    t.teardown(() => {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    });
    Object.assign(process.env, { DOCKER_HOST: tlsHost.url, DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: certs });
    const fromEnvironment = backend({});
    const viaEnv = await fromEnvironment.create({});
    t.equal((await viaEnv.exec('echo env')).output, 'env\n', '$DOCKER_HOST=tcp:// with DOCKER_TLS_VERIFY and DOCKER_CERT_PATH');
    await viaEnv.destroy();
  });

  /** A child process that creates `count` sandboxes over `options`, prints their ids, then hangs or exits without destroying them. */
  const sandboxChild = (options: object, count: number, mode: 'hang' | 'exit') => {
    const tsImport = process.execArgv.find((arg) => arg.includes('@tapjs/typescript')) ?? `--import=${pathToFileURL(path.join(REPO_ROOT, 'node_modules/@tapjs/typescript/dist/esm/import.mjs'))}`;
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TAP|_TAPJS|NODE_OPTIONS)/.test(k)));
    const code = `
      const { DockerSandboxBackend } = await import(${JSON.stringify(pathToFileURL(DOCKER_TS).href)});
      const backend = new DockerSandboxBackend(${JSON.stringify(options)});
      const made = await Promise.all(Array.from({ length: ${count} }, () => backend.create({})));
      process.stdout.write(made.map((s) => s.id).join(' ') + '\\n');
      if (${JSON.stringify(mode)} === 'exit') process.exit(0);
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, [tsImport, '--input-type=module', '-e', code], { cwd: REPO_ROOT, env: { ...env, TS_NODE_TRANSPILE_ONLY: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
    const ids = new Promise<string[]>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(out.trim().split(' '));
      });
      child.on('close', (code) => reject(new Error(`child exited (${code}) before creating its sandboxes: ${stderr}`)));
    });
    const within = <T>(what: string, promise: Promise<T>) =>
      Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`child (${mode}): no ${what} in 60 s; stderr: ${stderr}`)), 60_000).unref())]);
    return { child, ids: within('sandbox ids', ids), closed: within('exit', closed) };
  };

  t.test("reap on every host: each host's dead owners' containers go, another machine's stay", async (t) => {
    const childLabel = `${label}-child`;
    const hanging = sandboxChild({ hosts: [a.url, b.url], label: childLabel }, 2, 'hang');
    const ids = await hanging.ids;
    hanging.child.kill('SIGKILL');
    await hanging.closed;
    t.same([(await sandboxesOn(a.url, childLabel)).length, (await sandboxesOn(b.url, childLabel)).length], [1, 1], 'SIGKILL left one on each host');
    // A container made on the shared daemon by a run on another machine: its owner cannot be checked from here.
    const foreign = await clientOf(a.url).createContainer({
      name: `${childLabel}-foreign`,
      Image: 'localhost/swerl-base:1',
      Cmd: ['sh'],
      Labels: { 'swerl.label': childLabel, 'swerl.sandbox': `${childLabel}-foreign`, 'swerl.owner-pid': '1', 'swerl.owner-start': '0', 'swerl.owner-host': 'another-machine' },
    });
    const reaper = backend({ hosts: [a.url, b.url] });
    t.equal(await reaper.reap({ label: childLabel }), 2, "reap removes the dead owner's container on each host, and sums");
    t.same(await sandboxesOn(a.url, childLabel), [`${childLabel}-foreign`], "another machine's container is left alone");
    t.same(await sandboxesOn(b.url, childLabel), []);
    t.ok(ids.every((id) => id.startsWith(childLabel)));
    t.equal(await reaper.reap({ label: childLabel, all: true }), 1, 'all: every container of the label');
    await foreign.remove({ force: true }).catch(() => undefined);
  });

  t.test('the exit hook removes sandboxes on tcp and TLS hosts', async (t) => {
    const childLabel = `${label}-exit`;
    const exiting = sandboxChild({ hosts: [c.url, { url: tlsHost.url, tls: tlsFiles }], label: childLabel }, 2, 'exit');
    const ids = await exiting.ids;
    await exiting.closed;
    t.equal(ids.length, 2);
    t.same(await sandboxesOn(c.url, childLabel), [], 'nothing left on the tcp host');
    t.same(await sandboxesOn(b.url, childLabel), [], 'nothing left behind the TLS endpoint');
  });

  t.test('a host that stops: its sandboxes fail as infrastructure faults, new ones go to the other, and it is used again once it answers', async (t) => {
    const failover = backend({ hosts: [a.url, b.url], healthCheckMs: 300 });
    const [onA, onB, busyOnA] = [await failover.create({}), await failover.create({}), await failover.create({})];
    t.same(await sandboxesOn(a.url, label), [onA.id, busyOnA.id].sort(), 'placed a, b, a');
    const running = rejection(busyOnA.exec('sleep 30'));
    await sleep(300);
    await a.kill();
    const inFlight = await running;
    t.equal(inFlight.code, 'ERR_SWERL_SANDBOX', 'a command running when its host stops fails with ERR_SWERL_SANDBOX');
    const failed = await rejection(onA.exec('echo hi'));
    t.equal(failed.code, 'ERR_SWERL_SANDBOX');
    t.match(failed.message, new RegExp(`^sandbox ${onA.id} lost its Docker host ${a.url}: `));
    t.ok(isInfrastructureFault(failed), 'the rollout engine retries such an episode');
    await t.rejects(onA.readFile('README'), { code: 'ERR_SWERL_SANDBOX' }, 'files too');
    t.equal(failover.hosts[0]!.live, 0, "the lost sandboxes' slots are free");
    t.equal((await onB.exec('echo still')).output, 'still\n', 'the other host is untouched');
    const moved = [await failover.create({}), await failover.create({})];
    t.equal(await on(b.url, moved), 2, 'new sandboxes go to the host that answers');
    t.match(failover.hosts[0]!.downBecause, new RegExp(`^${a.url} \\(`), 'the stopped host is marked down');
    await onA.destroy();
    await busyOnA.destroy();
    t.pass("destroying a sandbox whose host is down does not throw (its container waits for the host)");

    await a.restart();
    await sleep(400); // past healthCheckMs
    const back = await failover.create({});
    const deadline = Date.now() + 10_000;
    while ((await sandboxesOn(a.url, label)).length > 1 && Date.now() < deadline) await sleep(100);
    t.same(await sandboxesOn(a.url, label), [back.id], "once it answers, the host is used again (fewest live), and the lost sandboxes' containers are removed");
    await Promise.all([onB, ...moved, back].map((s) => s.destroy()));
  });

  t.test('a rollout batch over two hosts, one stopped mid-way: every episode ends, those on it played again on the other', async (t) => {
    const tasks = await Promise.all(['py-lru-recency', 'py-money-negative'].map((id) => loadSwerlTaskFolder(path.join(SWE_MINI, id))));
    const rolloutLabel = `${label}-rollout`;
    const hosts = backend({ hosts: [a.url, b.url], label: rolloutLabel, healthCheckMs: 60_000 });
    const envs: SweEnv[][] = [];
    const items: RolloutItem[] = [];
    for (const [group, task] of tasks.entries()) {
      for (const sample of [0, 1]) {
        const index = items.length;
        envs.push([]);
        items.push({
          taskId: task.id,
          task,
          group,
          sample,
          makeEnv: () => {
            const env = new SweEnv(task, hosts, { maxSteps: 10 });
            envs[index]!.push(env);
            return env;
          },
        });
      }
    }
    // Every first attempt waits, its sandbox made, before its first turn; then host a stops.
    const oracle = new OraclePolicy();
    const firstHost = new Map<number, string>();
    const retriedOn = new Map<number, string>();
    let waiting = 0;
    let release!: () => void;
    const stopped = new Promise<void>((resolve) => (release = resolve));
    const hostOf = async (sandbox: Sandbox) => ((await sandboxesOn(b.url, rolloutLabel)).includes(sandbox.id) ? 'b' : 'a');
    const policy: AgentPolicy = {
      tokenizer: oracle.tokenizer,
      async generate(request, context) {
        if (context!.turn === 0) {
          const index = items.findIndex((item) => item.taskId === context!.taskId && item.sample === context!.sample);
          const attempt = envs[index]!.length;
          const where = await hostOf(envs[index]!.at(-1)!.currentSandbox!);
          if (attempt === 1) {
            firstHost.set(index, where);
            if (++waiting === items.length) {
              await a.kill();
              release();
            }
            await stopped;
          } else {
            retriedOn.set(index, where);
          }
        }
        return oracle.generate(request, context as Parameters<OraclePolicy['generate']>[1]);
      },
    };
    const agent = parseAgentLoopOptions({ maxTurns: 10, promptBudget: 1 << 16, responseBudget: 1 << 20, maxTokensPerTurn: 1 << 18, temperature: 0 }, 'agent');
    let retries = 0;
    const results = await runRollouts(items, policy, { concurrency: items.length, generationConcurrency: 0, retries: 2, agent }, { onProgress: (p) => (retries = p.retries) });

    const onA = [...firstHost].filter(([, host]) => host === 'a').map(([index]) => index).sort();
    t.equal(onA.length, 2, 'half the first attempts were on the host that stopped');
    t.same(results.map((r) => r.reward), [1, 1, 1, 1], 'every episode ended solved (the oracle)');
    t.same(results.map((r) => r.termination), ['submitted', 'submitted', 'submitted', 'submitted']);
    t.same(results.map((r) => r.attempts), items.map((_, i) => (onA.includes(i) ? 2 : 1)), 'those on the stopped host took a second attempt, the others one');
    t.same([...retriedOn.keys()].sort(), onA, 'exactly those were played again');
    t.ok([...retriedOn.values()].every((host) => host === 'b'), 'on the host that answers');
    t.equal(retries, 2);
    t.same(await sandboxesOn(b.url, rolloutLabel), [], 'no sandbox is left');
  });
});
