/**
 * A Docker-compatible API without a Docker daemon: `podman system service` on a socket in a
 * private temporary folder (or on tcp://127.0.0.1:PORT), for the docker backend's tests and
 * benchmarks (and anyone without a daemon). With setpriv, the service dies with this process
 * even when stop() never runs.
 *
 * With `privateStore`, the service keeps its containers and images in a store of its own
 * (root, runroot and tmpdir in its folder, file locks rather than the shared-memory ones every
 * podman of the machine shares): a second, independent Docker host on the same machine. Its
 * containers and mounts outlive podman, so stop() removes them; the stores of runs that died
 * before their stop() are removed by the next private service to start.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { SwerlError } from '../../errors.js';
import type { DockerConnection } from './docker-endpoint.js';
import { pingEndpoint } from './docker-socket.js';
import { OWN_START, ownerAlive } from './owner.js';

export interface PodmanServiceOptions {
  /** Listen on tcp://127.0.0.1:PORT rather than a unix socket (0: a free port). */
  tcpPort?: number;
  /** A container store of the service's own: an independent host. */
  privateStore?: boolean;
  startTimeoutMs?: number;
}

export interface PodmanService {
  /** unix:///…/podman.sock or tcp://127.0.0.1:PORT. */
  url: string;
  /** The unix socket (absent for a tcp service). */
  socketPath?: string;
  /** SIGKILLs the service, as a host that crashes (its containers go on under conmon). */
  kill(): Promise<void>;
  /** Starts the service again, on the same address and store. */
  restart(): Promise<void>;
  /** Runs the podman CLI on the service's store. */
  podman(args: string[]): SpawnSyncReturns<string>;
  /** Stops the service; a private store's containers and the folder are removed. */
  stop(): Promise<void>;
}

/** A free tcp port on loopback (free now: taken again by the service right after). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const STORE_PREFIX = 'swerl-podman-';
/** In a private store's folder: its owner's pid and start time. */
const OWNER_FILE = 'owner';

/**
 * The machine's containers.conf (CONTAINERS_CONF replaces it) with file locks, passed on to
 * conmon (so that the cleanup it runs uses them too), and exec sessions kept 30 s after they
 * end rather than 5 minutes (each keeps two conmon processes until then).
 */
function privateConfig(dir: string): string {
  const file = path.join(dir, 'containers.conf');
  const system = ['/etc/containers/containers.conf', '/usr/share/containers/containers.conf'].map((f) => {
    try {
      return readFileSync(f, 'utf8');
    } catch {
      return null;
    }
  }).find((text) => text !== null) ?? '';
  const ours = [
    'lock_type = "file"',
    'exit_command_delay = 30',
    `conmon_env_vars = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "CONTAINERS_CONF=${file}"]`,
  ].join('\n');
  const kept = system.replace(/^\s*(lock_type|exit_command_delay|conmon_env_vars)\s*=.*$/gm, '');
  const conf = /^\[engine\]\s*$/m.test(kept) ? kept.replace(/^\[engine\]\s*$/m, `[engine]\n${ours}`) : `${kept}\n[engine]\n${ours}\n`;
  writeFileSync(file, conf);
  return file;
}

/** The podman CLI on the private store in `dir`. */
function storePodman(dir: string): (args: string[]) => SpawnSyncReturns<string> {
  const storeArgs = ['--root', path.join(dir, 'root'), '--runroot', path.join(dir, 'run'), '--tmpdir', path.join(dir, 'tmp')];
  const env = { ...process.env, CONTAINERS_CONF: path.join(dir, 'containers.conf') };
  return (args) => spawnSync('podman', [...storeArgs, ...args], { encoding: 'utf8', env, timeout: 120_000 });
}

/**
 * A private store's containers (they outlive the service, under conmon), then its mounts and
 * folder; the owner file goes last, so that a removal cut short is swept again.
 */
function removeStore(dir: string): void {
  privateConfig(dir); // a removal cut short may have taken it
  storePodman(dir)(['rm', '--all', '--force', '--volumes', '--time', '0']);
  // Conmon runs a podman cleanup for each container removed, which reads this config first and
  // would otherwise open (and mount) the store again while it is being deleted.
  rmSync(path.join(dir, 'containers.conf'), { force: true });
  for (let attempt = 0; ; attempt++) {
    unmountUnder(dir);
    let failure: unknown = null;
    try {
      for (const entry of readdirSync(dir)) if (entry !== OWNER_FILE) rmSync(path.join(dir, entry), { recursive: true, force: true });
    } catch (error) {
      failure = error;
    }
    const mounted = readFileSync('/proc/mounts', 'utf8').includes(` ${dir}/`);
    if (failure === null && !mounted) break;
    if (attempt === 20) throw failure ?? new SwerlError('ERR_SWERL_SANDBOX', `${dir} is still mounted`);
    spawnSync('sleep', ['0.1']);
  }
  rmSync(dir, { recursive: true, force: true });
}

/** Removes the private stores whose owner is gone (a run killed before its stop()). */
function sweepAbandonedStores(): void {
  for (const name of readdirSync(os.tmpdir())) {
    if (!name.startsWith(STORE_PREFIX)) continue;
    const dir = path.join(os.tmpdir(), name);
    let owner: string;
    try {
      owner = readFileSync(path.join(dir, OWNER_FILE), 'utf8');
    } catch {
      continue; // not a private store
    }
    const [pid, start] = owner.trim().split(' ');
    if (ownerAlive(Number(pid), start ?? '')) continue;
    try {
      removeStore(dir);
    } catch {
      // another run sweeping it at the same time, or still busy: the next start tries again
    }
  }
}

/** Unmounts whatever is mounted under `dir` (a private store's overlay home outlives podman), deepest first. */
function unmountUnder(dir: string): void {
  let mounts: string[];
  try {
    mounts = readFileSync('/proc/mounts', 'utf8').split('\n').map((line) => line.split(' ')[1] ?? '').filter((m) => m === dir || m.startsWith(`${dir}/`));
  } catch {
    return;
  }
  for (const mount of mounts.sort((a, b) => b.length - a.length)) spawnSync('umount', ['-l', mount]);
}

export function startPodmanService(options?: Omit<PodmanServiceOptions, 'tcpPort'>): Promise<PodmanService & { socketPath: string }>;
export function startPodmanService(options: PodmanServiceOptions): Promise<PodmanService>;
export async function startPodmanService(options: PodmanServiceOptions = {}): Promise<PodmanService> {
  const startTimeoutMs = options.startTimeoutMs ?? 30_000;
  if (options.privateStore) sweepAbandonedStores();
  const dir = mkdtempSync(path.join(os.tmpdir(), STORE_PREFIX));
  const socketPath = options.tcpPort === undefined ? path.join(dir, 'podman.sock') : undefined;
  const port = options.tcpPort === undefined ? 0 : options.tcpPort || (await freePort());
  const url = socketPath ? `unix://${socketPath}` : `tcp://127.0.0.1:${port}`;
  const connection: DockerConnection = socketPath ? { socketPath } : { host: '127.0.0.1', port };
  const storeArgs = options.privateStore ? ['--root', path.join(dir, 'root'), '--runroot', path.join(dir, 'run'), '--tmpdir', path.join(dir, 'tmp')] : [];
  if (options.privateStore) writeFileSync(path.join(dir, OWNER_FILE), `${process.pid} ${OWN_START}\n`);
  const env = options.privateStore ? { ...process.env, CONTAINERS_CONF: privateConfig(dir) } : process.env;
  const podman = options.privateStore ? storePodman(dir) : (args: string[]) => spawnSync('podman', args, { encoding: 'utf8', timeout: 120_000 });
  const setpriv = spawnSync('setpriv', ['--help'], { encoding: 'utf8' });
  const withDeathSignal = !setpriv.error && setpriv.stdout.includes('--pdeathsig');

  let child: ChildProcess | null = null;
  let exited: string | null = null;
  let closed: Promise<void> = Promise.resolve();
  const launch = async () => {
    if (socketPath) rmSync(socketPath, { force: true }); // a killed service leaves its socket
    const args = [...storeArgs, 'system', 'service', '--time=0', url];
    const [command, commandArgs] = withDeathSignal ? ['setpriv', ['--pdeathsig', 'SIGTERM', '--', 'podman', ...args]] : ['podman', args];
    // cwd: the service's own folder. conmon, which it starts for each exec, inherits it and
    // writes a file named `oom` there when the kernel OOM-kills the exec (found as a stray
    // `oom` in the repository after the sandbox memory tests).
    const started = spawn(command, commandArgs, { stdio: ['ignore', 'ignore', 'pipe'], env, cwd: dir });
    child = started;
    exited = null;
    let stderr = '';
    started.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    closed = new Promise<void>((resolve) => {
      started.on('error', (error) => {
        exited = `could not run podman (${error.message}); install it (apt-get install podman)`;
        resolve();
      });
      started.on('close', (code, signal) => {
        const hint = code === 127 ? '; install podman (apt-get install podman)' : '';
        exited ??= `podman system service exited (${signal ?? code}): ${stderr.trim()}${hint}`;
        resolve();
      });
    });
    const deadline = Date.now() + startTimeoutMs;
    let why: string | null = 'not started';
    while (Date.now() < deadline && exited === null) {
      why = await pingEndpoint(connection, 2_000);
      if (why === null) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await halt('SIGTERM');
    throw new SwerlError('ERR_SWERL_SANDBOX', exited ?? `podman system service on ${url} did not answer in ${startTimeoutMs} ms (${why}): ${stderr.trim()}`);
  };
  const halt = async (signal: NodeJS.Signals) => {
    if (child && exited === null) {
      child.kill(signal);
      const timer = setTimeout(() => child?.kill('SIGKILL'), 10_000);
      await closed;
      clearTimeout(timer);
    }
  };
  const stop = async () => {
    await halt('SIGTERM');
    if (options.privateStore) removeStore(dir);
    else rmSync(dir, { recursive: true, force: true });
  };
  try {
    await launch();
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, ...(socketPath ? { socketPath } : {}), kill: () => halt('SIGKILL'), restart: launch, podman, stop };
}
