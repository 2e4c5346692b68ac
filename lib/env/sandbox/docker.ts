/**
 * The Docker sandbox: one container per sandbox, driven through a Docker Engine API (Docker, or
 * Podman's Docker-compatible service) with dockerode. Commands run through the exec API.
 *
 * Two kinds of container:
 * - From `spec.image` (SWE-bench / R2E-Gym images): the repository is already at `workdir`.
 *   The image's root stays writable (its container layer, gone with the container).
 * - From `spec.repoDir`: the swerl base image, a nearly empty root built here through the API
 *   (ensureBaseImage), with the host's toolchain folders (/usr, /etc, and /bin, /lib… where
 *   they are folders rather than links) bound read-only. Its root is read-only too: the work
 *   tree (a container volume at `workdir`, the repository copied in) and a tmpfs /tmp are the
 *   only writable places, and nothing written reaches the host.
 *
 * Every container: no network (NetworkMode none), memory (no swap), pids (maxProcesses) and
 * optionally CPU limits in its cgroup; rlimits for file size, CPU seconds per process, and
 * nofile/nproc (1024: runc must be told them explicitly where the host cannot raise rlimits,
 * e.g. under Podman in a container); a short capability list and no-new-privileges.
 *
 * PID 1 is a shell that sleeps forever and, on SIGUSR1, SIGKILLs every other process in the
 * container (a shell builtin: it works even when a fork bomb has used every pid). A timeout or
 * an output flood kills the exec's whole tree: when it is the sandbox's only command, by that
 * signal (nothing can escape it); when others run beside it, by a second exec that stops and
 * kills the processes carrying the exec's marker variable, falling back to the signal.
 *
 * Containers carry labels swerl.label, swerl.sandbox (the id, also the container's name),
 * swerl.owner-pid, swerl.owner-start (the owner's start time, field 22 of /proc/PID/stat) and
 * swerl.created; reap() removes those whose owner is gone. The owner check reads this host's
 * /proc: the daemon is reached over a unix socket, so it runs on this host.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Readable, type Duplex } from 'node:stream';

import Docker from 'dockerode';

import { SwerlError, invalidArg } from '../../errors.js';
import { optionsParser } from '../../schema.js';
import { track } from './cleanup.js';
import { hostLayout } from './host-layout.js';
import { baseEnvironment } from './local.js';
import { OWN_START, ownerAlive } from './owner.js';
import { OutputCollector } from './output.js';
import {
  LABEL_PATTERN,
  LIMITS_SCHEMA,
  readFileThroughExec,
  shellQuote,
  writeFileThroughExec,
  type ExecOptions,
  type ExecResult,
  type Sandbox,
  type SandboxBackend,
  type SandboxLimits,
  type SandboxSpec,
} from './sandbox.js';

export interface DockerSandboxOptions {
  /**
   * The API's unix socket. Default: the path of $DOCKER_HOST (unix:// only); without it,
   * /var/run/docker.sock, then Podman's default socket.
   */
  socketPath?: string;
  /** Default run label. Default: "swerl". */
  label?: string;
  limits?: Partial<SandboxLimits>;
  /** Bind the host's /usr, /etc (and /bin, /lib… where folders) read-only into base-image sandboxes. Default: true. */
  hostBinds?: boolean;
  /** Extra host paths bound read-only at the same path, into every sandbox. */
  readOnlyBinds?: string[];
  /** The swerl base image's name (built by ensureBaseImage). Default: localhost/swerl-base:1. */
  baseImage?: string;
  /** CPUs each sandbox may use (cgroup quota). Default: no limit. */
  cpus?: number;
}

interface ResolvedOptions {
  socketPath?: string;
  label: string;
  limits: SandboxLimits;
  hostBinds: boolean;
  readOnlyBinds: string[];
  baseImage: string;
  cpus?: number;
}

const parseOptions = optionsParser<ResolvedOptions>({
  type: 'object',
  additionalProperties: false,
  properties: {
    socketPath: { type: 'string', pattern: '^/' },
    label: { type: 'string', pattern: LABEL_PATTERN.source, default: 'swerl' },
    limits: { ...LIMITS_SCHEMA, default: {} },
    hostBinds: { type: 'boolean', default: true },
    readOnlyBinds: { type: 'array', items: { type: 'string', pattern: '^/[^:]*$' }, default: [] },
    baseImage: { type: 'string', pattern: '^[a-zA-Z0-9][a-zA-Z0-9._/:@-]*$', default: 'localhost/swerl-base:1' },
    cpus: { type: 'number', exclusiveMinimum: 0 },
  },
});

/**
 * What PID 1 runs: sleep forever; on SIGUSR1 kill every other process (a builtin: no fork
 * needed). Without a `sleep` in the image it exits at once rather than spin. After a kill it
 * forks a new sleep while a fork bomb may still hold every pid of the sandbox: dash exits at
 * the first failed fork (taking the container down), bash retries for about half a minute, so
 * bash runs the loop wherever the image has it.
 */
const KEEPALIVE_LOOP = "trap 'kill -9 -1' USR1; while :; do sleep 86400 & wait $!; done";
const KEEPALIVE = `command -v sleep >/dev/null || exit 127; command -v bash >/dev/null && exec bash -c ${shellQuote(KEEPALIVE_LOOP)}; ${KEEPALIVE_LOOP}`;
/** The capabilities a sandbox keeps (root inside may own and chmod its files, switch users, signal). */
const CAPABILITIES = ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'SETGID', 'SETUID', 'NET_BIND_SERVICE', 'SYS_CHROOT'];
/** How long a stopped command's stream may take to end before the next step (sweep, then cut). */
const STOP_GRACE_MS = 5_000;

// ---------------------------------------------------------------------------------------------
// Tar archives and single-layer images

export interface TarEntry {
  /** Path inside the archive, relative ("usr/bin", "a/b.txt"); folders may end with "/". */
  name: string;
  type?: 'file' | 'dir' | 'symlink';
  data?: Uint8Array;
  mode?: number;
  linkname?: string;
}

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

function tarHeader(entry: TarEntry, size: number): Buffer {
  const header = Buffer.alloc(512);
  let name = entry.name;
  let prefix = '';
  if (Buffer.byteLength(name) > 100) {
    const cut = name.lastIndexOf('/', name.length - 2);
    prefix = name.slice(0, cut);
    name = name.slice(cut + 1);
    if (cut < 0 || Buffer.byteLength(name) > 100 || Buffer.byteLength(prefix) > 155) throw new SwerlError('ERR_SWERL_SANDBOX', `tar entry name too long: ${entry.name}`);
  }
  const type = entry.type ?? 'file';
  header.write(name, 0, 100, 'utf8');
  header.write(octal(entry.mode ?? (type === 'file' ? 0o644 : type === 'dir' ? 0o755 : 0o777), 8), 100);
  header.write(octal(0, 8), 108); // uid
  header.write(octal(0, 8), 116); // gid
  header.write(octal(size, 12), 124);
  header.write(octal(0, 12), 136); // mtime: the epoch, so that the same entries give the same bytes
  header.write(' '.repeat(8), 148); // checksum, counted as spaces
  header.write(type === 'file' ? '0' : type === 'dir' ? '5' : '2', 156);
  if (entry.linkname !== undefined) header.write(entry.linkname, 157, 100, 'utf8');
  header.write('ustar\0', 257);
  header.write('00', 263);
  header.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(octal(sum, 7) + ' ', 148);
  return header;
}

/** A ustar archive of the entries, owned by root, dated at the epoch: deterministic bytes. */
export function tarArchive(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const data = entry.type === undefined || entry.type === 'file' ? Buffer.from(entry.data ?? new Uint8Array()) : Buffer.alloc(0);
    parts.push(tarHeader(entry, data.length), data);
    if (data.length % 512) parts.push(Buffer.alloc(512 - (data.length % 512)));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

export interface ImageConfig {
  Env?: string[];
  Cmd?: string[];
  WorkingDir?: string;
  Labels?: Record<string, string>;
}

/**
 * A `docker save`-format archive of a one-layer image holding `entries`, tagged `name`. Its
 * config is dated at the epoch, so the same entries always give the same image id: two
 * processes loading it at once load the same image. The config's labels get
 * swerl.layer=<the layer's digest>, to tell whether a stored image has this content.
 */
export function imageArchive(name: string, entries: readonly TarEntry[], config: ImageConfig = {}): { archive: Buffer; layerDigest: string } {
  const layer = tarArchive(entries);
  const layerDigest = sha256(layer);
  const epoch = '1970-01-01T00:00:00Z';
  const arch = process.arch === 'x64' ? 'amd64' : process.arch === 'ia32' ? '386' : process.arch;
  const configJson = Buffer.from(
    JSON.stringify({
      architecture: arch,
      os: 'linux',
      created: epoch,
      config: { ...config, Labels: { ...config.Labels, 'swerl.layer': layerDigest } },
      rootfs: { type: 'layers', diff_ids: [`sha256:${layerDigest}`] },
      history: [{ created: epoch, created_by: 'swerl' }],
    }),
  );
  const configDigest = sha256(configJson);
  const manifest = Buffer.from(JSON.stringify([{ Config: `${configDigest}.json`, RepoTags: [name], Layers: [`${layerDigest}/layer.tar`] }]));
  const archive = tarArchive([
    { name: `${layerDigest}/`, type: 'dir' },
    { name: `${layerDigest}/layer.tar`, data: layer },
    { name: `${configDigest}.json`, data: configJson },
    { name: 'manifest.json', data: manifest },
  ]);
  return { archive, layerDigest };
}

/** Loads an archive from imageArchive (POST /images/load: the same on Docker and Podman). */
export async function loadImageArchive(docker: Docker, archive: Buffer): Promise<void> {
  let text: string;
  try {
    const response = await docker.loadImage(Readable.from([archive]));
    text = await new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      response.on('error', reject);
    });
  } catch (error) {
    throw new SwerlError('ERR_SWERL_SANDBOX', `could not load an image: ${errorMessage(error)}`);
  }
  for (const line of text.split(/\r?\n/)) {
    if (!line.trim()) continue;
    let message: { error?: string; errorDetail?: { message?: string } };
    try {
      message = JSON.parse(line) as typeof message;
    } catch {
      continue;
    }
    if (message.error || message.errorDetail) {
      throw new SwerlError('ERR_SWERL_SANDBOX', `could not load an image: ${message.error ?? message.errorDetail?.message}`);
    }
  }
}

/** The host toolchain (host-layout.ts) as the base image needs it: links as tar entries. */
function hostLayoutEntries(): { links: TarEntry[]; folders: string[] } {
  const { folders, links } = hostLayout();
  return { folders, links: links.map((link) => ({ name: link.path.slice(1), type: 'symlink', linkname: link.target })) };
}

function baseImageEntries(layout: { links: TarEntry[]; folders: string[] }): TarEntry[] {
  const dirs: TarEntry[] = ['dev', 'etc', 'home', 'mnt', 'opt', 'proc', 'root', 'run', 'srv', 'sys', 'testbed', 'usr', 'var']
    .concat(layout.folders.map((f) => f.slice(1)))
    .filter((name, i, all) => all.indexOf(name) === i)
    .sort()
    .map((name) => ({ name: `${name}/`, type: 'dir', mode: name === 'root' ? 0o700 : 0o755 }));
  dirs.push({ name: 'tmp/', type: 'dir', mode: 0o1777 }, { name: 'var/tmp/', type: 'dir', mode: 0o1777 });
  return [...dirs, ...layout.links];
}

// ---------------------------------------------------------------------------------------------
// Connection

function errorMessage(error: unknown): string {
  const e = error as { json?: { message?: string; cause?: string }; message?: string };
  return (e?.json?.message ?? e?.message ?? String(error)).trim();
}

function statusOf(error: unknown): number | undefined {
  return (error as { statusCode?: number })?.statusCode;
}

/** GET /_ping on a unix socket: null when it answers OK, else why not. */
export function pingSocket(socketPath: string, timeoutMs = 5_000): Promise<string | null> {
  try {
    if (!statSync(socketPath).isSocket()) return Promise.resolve('not a socket');
  } catch {
    return Promise.resolve('no such socket');
  }
  return new Promise((resolve) => {
    const request = http.request({ socketPath, path: '/_ping', method: 'GET', timeout: timeoutMs, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (d: string) => (body += d));
      response.on('end', () => resolve(response.statusCode === 200 ? null : `HTTP ${response.statusCode}: ${body.trim().slice(0, 200)}`));
      response.on('error', (e) => resolve(e.message));
    });
    request.on('timeout', () => request.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    request.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ? `${e.code}: ${e.message}` : e.message));
    request.end();
  });
}

function socketCandidates(explicit: string | undefined): string[] {
  if (explicit !== undefined) return [explicit];
  const host = process.env.DOCKER_HOST;
  if (host) {
    if (!host.startsWith('unix://')) {
      throw invalidArg('DOCKER_HOST', `is ${JSON.stringify(host)}: the docker sandbox speaks to a unix socket only`, 'set sandbox option socketPath, or DOCKER_HOST=unix:///path/to/socket');
    }
    return [host.slice('unix://'.length)];
  }
  const podman = process.getuid?.() === 0 ? '/run/podman/podman.sock' : `${process.env.XDG_RUNTIME_DIR ?? `/run/user/${process.getuid?.()}`}/podman/podman.sock`;
  return ['/var/run/docker.sock', podman];
}

// ---------------------------------------------------------------------------------------------
// Exit-time removal

/** Containers of live sandboxes (id → socket): what the process-exit hook removes. */
const pendingRemoval = new Map<string, string>();

const REMOVE_SCRIPT = `
const http = require('node:http');
const items = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
let left = items.length;
const done = () => { if (--left === 0) process.exit(0); };
for (const { id, socketPath } of items) {
  const req = http.request({ socketPath, method: 'DELETE', path: '/containers/' + encodeURIComponent(id) + '?force=true&v=true', timeout: 20000 },
    (res) => { res.resume(); res.on('end', done); });
  req.on('timeout', () => req.destroy());
  req.on('error', done);
  req.end();
}
`;

/**
 * Removes every pending container synchronously. Node has no synchronous HTTP, so a child
 * Node process sends the DELETE requests (all at once) and this waits for it.
 */
function removePendingSync(): void {
  const items = [...pendingRemoval].map(([id, socketPath]) => ({ id, socketPath }));
  pendingRemoval.clear();
  if (items.length === 0) return;
  spawnSync(process.execPath, ['-e', REMOVE_SCRIPT], {
    input: JSON.stringify(items),
    timeout: 30_000,
    stdio: ['pipe', 'ignore', 'ignore'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  });
}

// ---------------------------------------------------------------------------------------------
// The backend

export class DockerSandboxBackend implements SandboxBackend {
  readonly name = 'docker' as const;
  readonly options: Readonly<ResolvedOptions>;
  /** The socket in use, once connected. */
  socketPath: string | null = null;
  /** Whether the storage driver bounds a container's writable layer (known after the first create). */
  storageQuota: boolean | undefined = undefined;
  private connecting: Promise<Docker> | null = null;
  private started: Promise<void> | null = null;
  private baseReady: Promise<void> | null = null;
  private readonly images = new Map<string, Promise<void>>();
  private readonly layout: { links: TarEntry[]; folders: string[] };

  constructor(options: DockerSandboxOptions = {}) {
    this.options = parseOptions(options, 'sandbox');
    this.layout = hostLayoutEntries();
  }

  /** The dockerode client, connected (the first call probes the socket). */
  client(): Promise<Docker> {
    this.connecting ??= this.connect().catch((error: unknown) => {
      this.connecting = null;
      throw error;
    });
    return this.connecting;
  }

  /** Builds the base image through the API unless an image of that name has this content already. */
  async ensureBaseImage(): Promise<void> {
    const docker = await this.client();
    const { archive, layerDigest } = imageArchive(this.options.baseImage, baseImageEntries(this.layout), {
      Env: [`PATH=${baseEnvironment('').PATH}`],
      Cmd: ['sh'],
      Labels: { 'swerl.base': '1' },
    });
    const current = async () => {
      try {
        const info = await docker.getImage(this.options.baseImage).inspect();
        return info.Config?.Labels?.['swerl.layer'] === layerDigest;
      } catch (error) {
        if (statusOf(error) === 404) return false;
        throw new SwerlError('ERR_SWERL_SANDBOX', `could not inspect image ${this.options.baseImage}: ${errorMessage(error)}`);
      }
    };
    if (await current()) return;
    await loadImageArchive(docker, archive);
    if (!(await current())) throw new SwerlError('ERR_SWERL_SANDBOX', `loaded ${this.options.baseImage}, but the daemon does not show it with the expected content`);
  }

  /**
   * A task image missing from the Docker host is pulled through the API (once per backend and
   * image; a progress line on stderr); failing that, the error says how to get it.
   */
  private ensureImage(docker: Docker, image: string): Promise<void> {
    let ready = this.images.get(image);
    if (!ready) {
      ready = pullIfMissing(docker, image);
      this.images.set(image, ready);
      ready.catch(() => this.images.delete(image));
    }
    return ready;
  }

  async create(spec: SandboxSpec = {}): Promise<Sandbox> {
    const label = spec.label ?? this.options.label;
    if (!LABEL_PATTERN.test(label)) throw invalidArg('spec.label', `${JSON.stringify(label)} is not a valid label`, `match ${LABEL_PATTERN}`);
    const workdir = spec.workdir ?? '/testbed';
    if (!path.posix.isAbsolute(workdir) || workdir === '/') throw invalidArg('spec.workdir', 'must be an absolute path below /');
    if (spec.repoDir !== undefined && !existsSync(spec.repoDir)) throw invalidArg('spec.repoDir', `${spec.repoDir} does not exist`);
    await (this.started ??= this.firstStart().catch((error: unknown) => {
      this.started = null;
      throw error;
    }));
    const docker = await this.client();
    const fromBase = spec.image === undefined;
    if (fromBase) {
      await (this.baseReady ??= this.ensureBaseImage().catch((error: unknown) => {
        this.baseReady = null;
        throw error;
      }));
    }
    const image = spec.image ?? this.options.baseImage;
    const id = `${label}-${randomBytes(6).toString('hex')}`;
    const l = this.options.limits;
    const environment = baseEnvironment(id);
    if (!fromBase) {
      // The image's own PATH and HOME (its toolchain, e.g. conda) stay.
      delete (environment as Partial<typeof environment>).PATH;
      delete (environment as Partial<typeof environment>).HOME;
    }
    const binds = [...(fromBase && this.options.hostBinds ? this.layout.folders : []), ...this.options.readOnlyBinds];
    const hostConfig: Docker.HostConfig = {
      NetworkMode: 'none',
      Memory: l.memoryBytes,
      MemorySwap: l.memoryBytes,
      PidsLimit: l.maxProcesses,
      Ulimits: [
        { Name: 'nofile', Soft: 1024, Hard: 1024 },
        { Name: 'nproc', Soft: 1024, Hard: 1024 },
        { Name: 'fsize', Soft: l.maxFileBytes, Hard: l.maxFileBytes },
        { Name: 'cpu', Soft: l.cpuSeconds, Hard: l.cpuSeconds },
      ],
      CapDrop: ['ALL'],
      CapAdd: CAPABILITIES,
      SecurityOpt: ['no-new-privileges'],
      Binds: binds.map((b) => `${b}:${b}:ro`),
      ...(this.options.cpus !== undefined ? { NanoCpus: Math.round(this.options.cpus * 1e9) } : {}),
      ShmSize: l.shmBytes,
      ...(fromBase ? { ReadonlyRootfs: true, Tmpfs: { '/tmp': `rw,nosuid,nodev,mode=1777,size=${l.diskBytes}` } } : {}),
      // The container's writable layer, where the driver can bound it (overlay on xfs with
      // pquota, btrfs, zfs); elsewhere the create is retried without and the rlimits remain.
      ...(this.storageQuota !== false ? { StorageOpt: { size: String(l.diskBytes) } } : {}),
    };
    if (!fromBase) await this.ensureImage(docker, image);
    let container: Docker.Container;
    try {
      const create = (host: Docker.HostConfig) => docker.createContainer({
        name: id,
        Image: image,
        Entrypoint: ['sh', '-c', KEEPALIVE],
        WorkingDir: workdir,
        Env: Object.entries({ ...environment, ...spec.env }).map(([k, v]) => `${k}=${v}`),
        Labels: {
          'swerl.label': label,
          'swerl.sandbox': id,
          'swerl.owner-pid': String(process.pid),
          'swerl.owner-start': OWN_START,
          'swerl.created': new Date().toISOString(),
        },
        NetworkDisabled: true,
        ...(fromBase ? { Volumes: { [workdir]: {} } } : {}),
        HostConfig: host,
      });
      container = await create(hostConfig).catch(async (error: unknown) => {
        // Concurrent first creates may all have asked; each retries once the driver said no.
        if (this.storageQuota === true || !hostConfig.StorageOpt || !/storage|quota|size/i.test(errorMessage(error))) throw error;
        // The driver has no storage quota: remember, and create without one.
        this.storageQuota = false;
        const { StorageOpt: _unsupported, ...withoutQuota } = hostConfig;
        return create(withoutQuota);
      });
      this.storageQuota ??= true;
    } catch (error) {
      if (statusOf(error) === 404) {
        throw new SwerlError('ERR_SWERL_SANDBOX', `image ${image} is not on the Docker host (${errorMessage(error)}); pull or load it first`);
      }
      throw new SwerlError('ERR_SWERL_SANDBOX', `could not create a container from ${image}: ${errorMessage(error)}`);
    }
    const sandbox = new DockerSandbox(id, label, workdir, container, this.socketPath!, l);
    try {
      await container.start().catch((error: unknown) => {
        throw new SwerlError('ERR_SWERL_SANDBOX', `could not start container ${id} from ${image}: ${errorMessage(error)}`);
      });
      if (spec.repoDir !== undefined) {
        if (!fromBase) {
          const made = await sandbox.exec(`mkdir -p -- ${shellQuote(workdir)}`, { cwd: '/' });
          if (made.exitCode !== 0) throw new SwerlError('ERR_SWERL_SANDBOX', `cannot create ${workdir} in ${image}: ${made.output.trim()}`);
        }
        await copyIn(container, spec.repoDir, workdir);
      }
      return sandbox;
    } catch (error) {
      await sandbox.destroy().catch(() => undefined);
      throw error;
    }
  }

  async reap(options: { label?: string; all?: boolean } = {}): Promise<number> {
    const docker = await this.client();
    const label = ['swerl.sandbox', ...(options.label !== undefined ? [`swerl.label=${options.label}`] : [])];
    let containers: Docker.ContainerInfo[];
    try {
      containers = await docker.listContainers({ all: true, filters: { label } });
    } catch (error) {
      throw new SwerlError('ERR_SWERL_SANDBOX', `could not list containers: ${errorMessage(error)}`);
    }
    const doomed = containers.filter((c) => {
      if (options.all) return true;
      const pid = Number(c.Labels['swerl.owner-pid']);
      return !ownerAlive(pid, c.Labels['swerl.owner-start'] ?? '');
    });
    const removed = await Promise.all(
      doomed.map(async (c) => {
        try {
          await docker.getContainer(c.Id).remove({ force: true, v: true });
          pendingRemoval.delete(c.Id);
          return true;
        } catch {
          return false; // gone meanwhile, or being removed by another reaper
        }
      }),
    );
    return removed.filter(Boolean).length;
  }

  /** Once per backend: connect, and reap what dead runs left. */
  private async firstStart(): Promise<void> {
    await this.client();
    await this.reap();
  }

  private async connect(): Promise<Docker> {
    const tried: string[] = [];
    for (const socketPath of socketCandidates(this.options.socketPath)) {
      const why = await pingSocket(socketPath);
      if (why === null) {
        this.socketPath = socketPath;
        return new Docker({ socketPath });
      }
      tried.push(`${socketPath} (${why})`);
    }
    throw new SwerlError(
      'ERR_SWERL_SANDBOX',
      `no Docker Engine API answered; tried ${tried.join(', ')}. Start Docker, or Podman's ` +
        'Docker-compatible service: `podman system service --time=0 unix:///run/podman/podman.sock &`, ' +
        'then set DOCKER_HOST=unix:///run/podman/podman.sock or the sandbox option socketPath.',
    );
  }
}

async function pullIfMissing(docker: Docker, image: string): Promise<void> {
  try {
    await docker.getImage(image).inspect();
    return;
  } catch (error) {
    if (statusOf(error) !== 404) throw new SwerlError('ERR_SWERL_SANDBOX', `could not inspect image ${image}: ${errorMessage(error)}`);
  }
  const progress = (line: string) => process.stderr.write(`\rswerl: pulling ${image}: ${line}`.slice(0, 160).padEnd(80));
  try {
    const stream = await docker.pull(image);
    const layers = new Map<string, { current: number; total: number }>();
    await new Promise<void>((resolve, reject) => {
      docker.modem.followProgress(
        stream,
        (error: Error | null, output: { error?: string }[]) => {
          const failed = error?.message ?? output?.find((o) => o.error)?.error;
          if (failed) reject(new Error(failed));
          else resolve();
        },
        (event: { id?: string; status?: string; progressDetail?: { current?: number; total?: number } }) => {
          if (event.id && event.progressDetail?.total) layers.set(event.id, { current: event.progressDetail.current ?? 0, total: event.progressDetail.total });
          const done = [...layers.values()].reduce((a, l) => a + l.current, 0);
          const total = [...layers.values()].reduce((a, l) => a + l.total, 0);
          progress(total ? `${(done / 1e6).toFixed(0)} / ${(total / 1e6).toFixed(0)} MB` : (event.status ?? ''));
        },
      );
    });
    process.stderr.write(`\rswerl: pulled ${image}\n`);
  } catch (error) {
    process.stderr.write('\n');
    throw new SwerlError(
      'ERR_SWERL_SANDBOX',
      `image ${image} is not on the Docker host and pulling it failed (${errorMessage(error)}); ` +
        'pull it where the registry is reachable and load it here (docker save IMAGE | docker load), ' +
        "build it with SWE-bench's harness (python -m swebench.harness.prepare_images), " +
        'or run the rows on the local backend with a folder of clones (--repos DIR)',
    );
  }
}

/** Copies repoDir's contents into workdir (a tar stream, owned by root, through putArchive). */
async function copyIn(container: Docker.Container, repoDir: string, workdir: string): Promise<void> {
  const child = spawn('tar', ['-C', repoDir, '--owner=0', '--group=0', '--numeric-owner', '-cf', '-', '.'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? -1));
  });
  try {
    await container.putArchive(child.stdout, { path: workdir });
  } catch (error) {
    child.kill('SIGKILL');
    await exited.catch(() => undefined);
    throw new SwerlError('ERR_SWERL_SANDBOX', `could not copy ${repoDir} into the sandbox: ${errorMessage(error)}`);
  }
  let code: number;
  try {
    code = await exited;
  } catch (error) {
    throw new SwerlError('ERR_SWERL_SANDBOX', `could not run tar to copy ${repoDir}: ${errorMessage(error)}`);
  }
  if (code !== 0) throw new SwerlError('ERR_SWERL_SANDBOX', `tar of ${repoDir} failed: ${stderr.trim()}`);
}

/** Splits Docker's multiplexed exec stream (8-byte frame headers) into stdout and stderr. */
function demultiplex(stream: Duplex, onFrame: (kind: 'stdout' | 'stderr', data: Buffer) => void): void {
  let pending: Buffer = Buffer.alloc(0);
  stream.on('data', (chunk: Buffer) => {
    pending = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length >= 8) {
      const size = pending.readUInt32BE(4);
      if (pending.length < 8 + size) break;
      const kind = pending[0];
      const data = pending.subarray(8, 8 + size);
      pending = pending.subarray(8 + size);
      if (kind === 1) onFrame('stdout', data);
      else if (kind === 2) onFrame('stderr', data);
    }
  });
}

/** Stops and kills every process whose environment holds `marker` (VAR=value), until none is left. */
function killByMarkerScript(marker: string): string {
  return [
    `m=${shellQuote(marker)}`,
    'i=0',
    'while [ $i -lt 50 ]; do',
    '  pids=',
    '  for f in $(grep -lsxzF -e "$m" /proc/[0-9]*/environ); do p=${f#/proc/}; pids="$pids ${p%/environ}"; done',
    '  [ -z "$pids" ] && exit 0',
    '  kill -STOP $pids 2>/dev/null; kill -KILL $pids 2>/dev/null',
    '  i=$((i+1))',
    'done',
    'exit 1',
  ].join('\n');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface RunningExec {
  marker: string;
}

class DockerSandbox implements Sandbox {
  destroyed = false;
  private readonly running = new Set<RunningExec>();
  private readonly inflight = new Set<Promise<unknown>>();
  /** A container-wide kill in progress: new commands wait for it. */
  private sweeping: Promise<void> | null = null;
  private removing: Promise<void> | null = null;
  private readonly untrack: () => void;

  constructor(
    readonly id: string,
    readonly label: string,
    readonly workdir: string,
    private readonly container: Docker.Container,
    socketPath: string,
    private readonly limits: SandboxLimits,
  ) {
    pendingRemoval.set(container.id, socketPath);
    this.untrack = track(this);
  }

  exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    if (this.destroyed) return Promise.reject(new SwerlError('ERR_SWERL_SANDBOX', `sandbox ${this.id} was destroyed`));
    const state: RunningExec = { marker: `SWERL_EXEC=${randomBytes(8).toString('hex')}` };
    this.running.add(state);
    const result = this.run(command, options, state);
    this.inflight.add(result);
    const done = () => {
      this.running.delete(state);
      this.inflight.delete(result);
    };
    result.then(done, done);
    return result;
  }

  readFile(file: string): Promise<Buffer> {
    return readFileThroughExec(this, file, this.limits.maxFileBytes);
  }

  writeFile(file: string, data: string | Uint8Array): Promise<void> {
    return writeFileThroughExec(this, file, data);
  }

  destroy(): Promise<void> {
    this.destroyed = true;
    this.removing ??= this.remove().catch((error: unknown) => {
      this.removing = null; // a later destroy() (or the exit hook, or a reaper) tries again
      throw error;
    });
    return this.removing;
  }

  /** At process exit: removes this (and every other pending) container through a child process. */
  destroySync(): void {
    this.destroyed = true;
    if (pendingRemoval.has(this.container.id)) removePendingSync();
  }

  private async remove(): Promise<void> {
    try {
      await this.container.remove({ force: true, v: true });
    } catch (error) {
      if (statusOf(error) !== 404) throw new SwerlError('ERR_SWERL_SANDBOX', `could not remove container ${this.id}: ${errorMessage(error)}`);
    }
    pendingRemoval.delete(this.container.id);
    await Promise.allSettled([...this.inflight]);
    this.untrack();
  }

  private async run(command: string, options: ExecOptions, state: RunningExec): Promise<ExecResult> {
    if (this.sweeping) await this.sweeping;
    const started = performance.now();
    const timeoutMs = options.timeoutMs ?? this.limits.timeoutMs;
    const output = new OutputCollector(options.maxOutputBytes ?? this.limits.maxOutputBytes);
    const stdin = options.stdin !== undefined && options.stdin.length > 0 ? options.stdin : undefined;
    const env: Record<string, string> = { ...options.env, SWERL_SANDBOX: this.id };
    delete env[state.marker.slice(0, state.marker.indexOf('='))];
    let exec: Docker.Exec;
    let stream: Duplex;
    try {
      exec = await this.container.exec({
        Cmd: ['sh', '-c', command],
        AttachStdin: stdin !== undefined,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
        Env: [...Object.entries(env).map(([k, v]) => `${k}=${v}`), state.marker],
        WorkingDir: options.cwd ?? this.workdir,
      });
      stream = await exec.start({ hijack: true, stdin: stdin !== undefined });
    } catch (error) {
      if (this.destroyed) throw new SwerlError('ERR_SWERL_SANDBOX', `sandbox ${this.id} was destroyed`);
      const why = statusOf(error) === 409 ? ' (its container is not running: does the image have sh and sleep?)' : '';
      throw new SwerlError('ERR_SWERL_SANDBOX', `could not run a command in sandbox ${this.id}: ${errorMessage(error)}${why}`);
    }
    const ended = new Promise<void>((resolve) => {
      stream.once('end', resolve);
      stream.once('close', resolve);
      stream.once('error', () => resolve());
    });
    let timedOut = false;
    let stopping: Promise<void> | null = null;
    const stop = () => void (stopping ??= this.stop(state, stream, ended));
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, timeoutMs);
    demultiplex(stream, (kind, data) => {
      if (!output.push(kind, data)) stop();
    });
    if (stdin !== undefined) {
      stream.on('error', () => undefined); // the command may exit without reading its input
      stream.write(stdin);
      stream.end();
    }
    await ended;
    clearTimeout(timer);
    if (stopping) await stopping;
    const exitCode = timedOut ? -1 : await this.exitCodeOf(exec);
    return {
      exitCode,
      stdout: output.stdout(),
      stderr: output.stderr(),
      output: output.combined(),
      timedOut,
      outputLimited: output.limited,
      durationMs: performance.now() - started,
    };
  }

  /**
   * Kills one command's whole tree. Alone in the sandbox: PID 1 kills every other process.
   * Beside other commands: its marked processes are stopped and killed by a second exec;
   * whatever still holds its output open after that is swept container-wide too.
   */
  private async stop(state: RunningExec, stream: Duplex, ended: Promise<void>): Promise<void> {
    const within = (ms: number) => Promise.race([ended.then(() => true), sleep(ms).then(() => false)]);
    if (this.running.size > 1 && (await this.killMarked(state.marker)) && (await within(STOP_GRACE_MS))) return;
    let endSweep!: () => void;
    const sweep = new Promise<void>((resolve) => (endSweep = resolve));
    this.sweeping = sweep;
    try {
      await this.container.kill({ signal: 'SIGUSR1' }).catch(() => undefined);
      if (!(await within(STOP_GRACE_MS))) stream.destroy();
      await ended;
    } finally {
      endSweep();
      if (this.sweeping === sweep) this.sweeping = null;
    }
  }

  /** A second exec that kills the processes carrying `marker`; true when it finished cleanly. */
  private async killMarked(marker: string): Promise<boolean> {
    try {
      const exec = await this.container.exec({ Cmd: ['sh', '-c', killByMarkerScript(marker)], AttachStdout: true, AttachStderr: true, Tty: false, WorkingDir: '/' });
      const stream = await exec.start({ hijack: true, stdin: false });
      stream.resume();
      const ended = new Promise<boolean>((resolve) => {
        stream.once('end', () => resolve(true));
        stream.once('close', () => resolve(true));
        stream.once('error', () => resolve(false));
      });
      if (!(await Promise.race([ended, sleep(STOP_GRACE_MS).then(() => false)]))) {
        stream.destroy();
        return false;
      }
      return (await this.exitCodeOf(exec)) === 0;
    } catch {
      return false;
    }
  }

  private async exitCodeOf(exec: Docker.Exec): Promise<number> {
    for (let attempt = 0; attempt < 100; attempt++) {
      try {
        const info = await exec.inspect();
        if (!info.Running) return info.ExitCode ?? -1;
      } catch {
        return -1; // the container is gone
      }
      await sleep(20);
    }
    return -1;
  }

}
