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
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';

import type Docker from 'dockerode';

import { SwerlError, invalidArg } from '../../errors.js';
import { ensureBaseImageOn, hostLayoutEntries, type BaseImageLayout } from './docker-base-image.js';
import { errorMessage, statusOf } from './docker-errors.js';
import { pullIfMissing } from './docker-image.js';
import { reapContainers } from './docker-reaper.js';
import { DockerSandbox } from './docker-sandbox.js';
import { connectDocker } from './docker-socket.js';
import { baseEnvironment } from './local.js';
import { OWN_START } from './owner.js';
import { parseDockerOptions, type DockerSandboxOptions, type ResolvedDockerOptions } from './options.js';
import { LABEL_PATTERN, shellQuote, type Sandbox, type SandboxBackend, type SandboxSpec } from './sandbox.js';

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

export class DockerSandboxBackend implements SandboxBackend {
  readonly name = 'docker' as const;
  readonly options: Readonly<ResolvedDockerOptions>;
  /** The socket in use, once connected. */
  socketPath: string | null = null;
  /** Whether the storage driver bounds a container's writable layer (known after the first create). */
  storageQuota: boolean | undefined = undefined;
  private connecting: Promise<Docker> | null = null;
  private started: Promise<void> | null = null;
  private baseReady: Promise<void> | null = null;
  private readonly images = new Map<string, Promise<void>>();
  private readonly layout: BaseImageLayout;

  constructor(options: DockerSandboxOptions = {}) {
    this.options = parseDockerOptions(options, 'sandbox');
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
    await ensureBaseImageOn(await this.client(), this.options.baseImage, this.layout);
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
    return reapContainers(await this.client(), options);
  }

  /** Once per backend: connect, and reap what dead runs left. */
  private async firstStart(): Promise<void> {
    await this.client();
    await this.reap();
  }

  private async connect(): Promise<Docker> {
    const { docker, socketPath } = await connectDocker(this.options.socketPath);
    this.socketPath = socketPath;
    return docker;
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
