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
 * swerl.owner-pid, swerl.owner-start (the owner's start time, field 22 of /proc/PID/stat),
 * swerl.owner-host (this machine's hostname) and swerl.created; reap() removes, on every host
 * that answers, those whose owner is gone. The owner check reads /proc, so it judges only
 * containers made from this machine: a daemon shared with other machines keeps theirs.
 *
 * Many hosts (option `hosts`: unix sockets, tcp, TLS): each create goes to the reachable host
 * with the fewest live sandboxes (ties: list order) that is under its limit; when all are
 * full it waits, in call order, for a slot. A host that does not answer is marked down
 * (docker-host.ts) and the create tries the next; none answering is an ERR_SWERL_SANDBOX
 * naming each host and why.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';

import type Docker from 'dockerode';

import { SwerlError, invalidArg } from '../../errors.js';
import { guardCreate, type CreateGuard } from './cleanup.js';
import { ensureBaseImageOn, hostLayoutEntries, type BaseImageLayout } from './docker-base-image.js';
import { defaultEndpoints, parseEndpointUrl } from './docker-endpoint.js';
import { errorMessage, statusOf } from './docker-errors.js';
import { DockerHost, type HostLease } from './docker-host.js';
import { OWNER_HOST } from './docker-reaper.js';
import { DockerSandbox } from './docker-sandbox.js';
import { baseEnvironment } from './local.js';
import { OWN_START } from './owner.js';
import { parseDockerOptions, type DockerSandboxOptions, type ResolvedDockerOptions } from './options.js';
import { LABEL_PATTERN, shellQuote, type Sandbox, type SandboxBackend, type SandboxSpec } from './sandbox.js';
import { tarArchive } from './tar.js';

/**
 * What PID 1 runs: wait forever; on SIGUSR1 kill every other process (a builtin: no fork
 * needed). After that kill PID 1 must not need a fork either, for the dying bomb's processes
 * still fill the pids cgroup until they are reaped: bash waits in `read` on a pipe it holds
 * both ends of (no fork ever after its start), and reaps the orphans as their SIGCHLDs come.
 * The fork-per-wait loop is the fallback: dash exits at its first failed fork (the container
 * with it), and even bash gives up on `sleep &` when a SIGCHLD cuts short its retry's sleep
 * (a CI run lost a container so, once). Without a `sleep` in the image it exits at once rather
 * than spin.
 */
const KILL_TRAP = "trap 'kill -9 -1' USR1";
const SLEEP_LOOP = 'while :; do sleep 86400 & wait $!; done';
const KEEPALIVE_BASH = `${KILL_TRAP}; if { exec 3<> <(:); } 2>/dev/null; then while read -r -u 3 _ || [ $? -gt 128 ]; do :; done; fi; ${SLEEP_LOOP}`;
const KEEPALIVE = `command -v sleep >/dev/null || exit 127; command -v bash >/dev/null && exec bash -c ${shellQuote(KEEPALIVE_BASH)}; ${KILL_TRAP}; ${SLEEP_LOOP}`;
/**
 * A base-image sandbox runs every command as this unprivileged user with no capabilities at
 * all (none added, so none in the bounding set: Podman would give a non-root user the added
 * ones as ambient capabilities). Its work tree arrives owned by it (copyIn).
 */
export const SANDBOX_USER = { uid: 1000, gid: 1000 };
/**
 * An image row's sandbox runs as its image does (SWE-bench's and R2E-Gym's harnesses run as
 * root, their environments owned by root), keeping what root there needs: own and chmod its
 * files, switch users, signal.
 */
const IMAGE_CAPABILITIES = ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'SETGID', 'SETUID', 'NET_BIND_SERVICE', 'SYS_CHROOT'];

export class DockerSandboxBackend implements SandboxBackend {
  readonly name = 'docker' as const;
  readonly options: Readonly<ResolvedDockerOptions>;
  /** The Docker hosts, in the order given (one for socketPath, $DOCKER_HOST or the default sockets). */
  readonly hosts: readonly DockerHost[];
  private readonly layout: BaseImageLayout;
  /** Placements run one at a time, in call order: a create waiting for a slot keeps its turn. */
  private placing: Promise<unknown> = Promise.resolve();
  /** Placements waiting for a slot to free or a host to come back. */
  private waiting: (() => void)[] = [];

  constructor(options: DockerSandboxOptions = {}) {
    this.options = parseDockerOptions(options, 'sandbox');
    this.layout = hostLayoutEntries();
    const { hosts, maxSandboxesPerHost = Infinity, healthCheckMs } = this.options;
    const changed = () => this.wakeWaiting();
    this.hosts = hosts
      ? hosts.map((h, i) => new DockerHost([{ name: h.url, connection: parseEndpointUrl(h.url, `sandbox.hosts.${i}`, h.tls) }], h.maxSandboxes ?? maxSandboxesPerHost, healthCheckMs, changed, { field: `sandbox.hosts.${i}`, ...(h.seccompProfile !== undefined ? { seccompProfile: h.seccompProfile } : {}) }))
      : [new DockerHost(defaultEndpoints(this.options.socketPath), maxSandboxesPerHost, healthCheckMs, changed)];
  }

  /** The first host's dockerode client (the first call pings it). */
  client(): Promise<Docker> {
    return this.hosts[0]!.client();
  }

  /** Builds the base image through the API on every host, unless a host has an image of that name with this content already. */
  async ensureBaseImage(): Promise<void> {
    await Promise.all(this.hosts.map(async (host) => ensureBaseImageOn(await host.client(), this.options.baseImage, this.layout)));
  }

  async create(spec: SandboxSpec = {}): Promise<Sandbox> {
    const label = spec.label ?? this.options.label;
    if (!LABEL_PATTERN.test(label)) throw invalidArg('spec.label', `${JSON.stringify(label)} is not a valid label`, `match ${LABEL_PATTERN}`);
    const workdir = spec.workdir ?? '/testbed';
    if (!path.posix.isAbsolute(workdir) || workdir === '/') throw invalidArg('spec.workdir', 'must be an absolute path below /');
    if (spec.repoDir !== undefined && !existsSync(spec.repoDir)) throw invalidArg('spec.repoDir', `${spec.repoDir} does not exist`);
    if (spec.overlay !== undefined && spec.repoDir === undefined) throw invalidArg('spec.overlay', 'is laid over a repoDir\'s copy', 'give a repoDir too');
    const tried = new Set<DockerHost>();
    for (;;) {
      const placed = await this.place(tried);
      if (placed === null) throw this.noHostAnswered();
      const { host, lease } = placed;
      try {
        return await this.createOn(host, lease, spec, label, workdir);
      } catch (error) {
        lease.end();
        // A host that still answers failed for a reason of the sandbox's own (a missing image…): that is the error.
        if (await host.check()) throw error;
        tried.add(host);
      }
    }
  }

  /**
   * Removes, on every host that answers, the sandbox containers whose owner is gone (see
   * docker-reaper.ts); returns how many. Hosts that do not answer are skipped; none answering throws.
   */
  async reap(options: { label?: string; all?: boolean } = {}): Promise<number> {
    const results = await Promise.allSettled(this.hosts.map((host) => host.reap(options)));
    let removed = 0;
    let reached = 0;
    for (const [i, result] of results.entries()) {
      if (result.status === 'fulfilled') {
        removed += result.value;
        reached++;
      } else if (this.hosts[i]!.downBecause === null || this.hosts.length === 1) {
        throw result.reason;
      }
    }
    if (reached === 0) throw this.noHostAnswered();
    return removed;
  }

  /** The error when no host can take a sandbox: each host and why. */
  private noHostAnswered(): SwerlError {
    if (this.hosts.length === 1) {
      return new SwerlError(
        'ERR_SWERL_SANDBOX',
        `no Docker Engine API answered; tried ${this.hosts[0]!.downBecause ?? this.hosts[0]!.name}. Start Docker, or Podman's ` +
          'Docker-compatible service: `podman system service --time=0 unix:///run/podman/podman.sock &`, ' +
          'then set DOCKER_HOST=unix:///run/podman/podman.sock or the sandbox option socketPath.',
      );
    }
    const why = this.hosts.map((host) => host.downBecause ?? `${host.name} (failed)`).join(', ');
    return new SwerlError('ERR_SWERL_SANDBOX', `none of the ${this.hosts.length} Docker hosts answered; tried ${why}. Start their daemons, or fix sandbox.hosts`);
  }

  /** A host for one sandbox, its slot taken: in call order, after the creates before it. Null when no host (untried) answers. */
  private place(tried: ReadonlySet<DockerHost>): Promise<{ host: DockerHost; lease: HostLease } | null> {
    const turn = this.placing.then(() => this.pick(tried));
    this.placing = turn.catch(() => undefined);
    return turn;
  }

  private async pick(tried: ReadonlySet<DockerHost>): Promise<{ host: DockerHost; lease: HostLease } | null> {
    for (;;) {
      const candidates = this.hosts.filter((host) => !tried.has(host));
      const answering = await Promise.all(candidates.map((host) => host.available()));
      const reachable = candidates.filter((_, i) => answering[i]);
      if (reachable.length === 0) return null;
      let best: DockerHost | null = null;
      for (const host of reachable) if (host.hasRoom && (best === null || host.live < best.live)) best = host;
      if (best) return { host: best, lease: best.lease() };
      await this.slotFreed();
    }
  }

  /** Resolves when a slot frees or a host comes back, or after healthCheckMs while a host is down (it may answer again). */
  private slotFreed(): Promise<void> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        this.waiting = this.waiting.filter((w) => w !== done);
        resolve();
      };
      if (this.hosts.some((host) => host.downBecause !== null)) timer = setTimeout(done, this.options.healthCheckMs);
      this.waiting.push(done);
    });
  }

  private wakeWaiting(): void {
    for (const wake of [...this.waiting]) wake();
  }

  /** Makes the sandbox on `host`, whose slot `lease` holds. */
  private async createOn(host: DockerHost, lease: HostLease, spec: SandboxSpec, label: string, workdir: string): Promise<Sandbox> {
    // Tracked before the container exists: a signal while this create is in flight cancels it
    // at its next step and waits for it to remove what it made (a container the engine makes
    // after the signal path ran would otherwise outlive the process until the next reap). A
    // plain exit mid-create can do nothing synchronous here: the reaper takes that container.
    const guard = await guardCreate(() => undefined);
    try {
      return await this.createGuarded(guard, host, lease, spec, label, workdir);
    } finally {
      await guard.finish();
    }
  }

  private async createGuarded(guard: CreateGuard, host: DockerHost, lease: HostLease, spec: SandboxSpec, label: string, workdir: string): Promise<Sandbox> {
    await host.firstStart();
    guard.checkpoint();
    const docker = await host.client();
    const fromBase = spec.image === undefined;
    if (fromBase) await host.ensureBaseImage(this.options.baseImage, this.layout);
    guard.checkpoint();
    const image = spec.image ?? this.options.baseImage;
    const id = `${label}-${randomBytes(6).toString('hex')}`;
    const l = this.options.limits;
    const environment = baseEnvironment(id);
    if (!fromBase) {
      // The image's own PATH and HOME (its toolchain, e.g. conda) stay.
      delete (environment as Partial<typeof environment>).PATH;
      delete (environment as Partial<typeof environment>).HOME;
    }
    const seccomp = await host.seccompOption();
    guard.checkpoint();
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
      ...(fromBase ? {} : { CapAdd: IMAGE_CAPABILITIES }),
      SecurityOpt: ['no-new-privileges', seccomp],
      Binds: binds.map((b) => `${b}:${b}:ro`),
      ...(this.options.cpus !== undefined ? { NanoCpus: Math.round(this.options.cpus * 1e9) } : {}),
      ShmSize: l.shmBytes,
      ...(fromBase ? { ReadonlyRootfs: true, Tmpfs: { '/tmp': `rw,nosuid,nodev,mode=1777,size=${l.diskBytes}` } } : {}),
      // The container's writable layer, where the driver can bound it (overlay on xfs with
      // pquota, btrfs, zfs); elsewhere the create is retried without and the rlimits remain.
      ...(host.storageQuota !== false ? { StorageOpt: { size: String(l.diskBytes) } } : {}),
    };
    if (!fromBase) await host.ensureImage(image);
    guard.checkpoint();
    let container: Docker.Container;
    try {
      const create = (hostConfigOf: Docker.HostConfig) => docker.createContainer({
        name: id,
        Image: image,
        Entrypoint: ['sh', '-c', KEEPALIVE],
        ...(fromBase ? { User: `${SANDBOX_USER.uid}:${SANDBOX_USER.gid}` } : {}),
        WorkingDir: workdir,
        Env: Object.entries({ ...environment, ...spec.env }).map(([k, v]) => `${k}=${v}`),
        Labels: {
          'swerl.label': label,
          'swerl.sandbox': id,
          'swerl.owner-pid': String(process.pid),
          'swerl.owner-start': OWN_START,
          'swerl.owner-host': OWNER_HOST,
          'swerl.created': new Date().toISOString(),
        },
        NetworkDisabled: true,
        ...(fromBase ? { Volumes: { [workdir]: {} } } : {}),
        HostConfig: hostConfigOf,
      });
      container = await create(hostConfig).catch(async (error: unknown) => {
        // Concurrent first creates may all have asked; each retries once the driver said no.
        if (host.storageQuota === true || !hostConfig.StorageOpt || !/storage|quota|size/i.test(errorMessage(error))) throw error;
        // The driver has no storage quota: remember, and create without one.
        host.storageQuota = false;
        const { StorageOpt: _unsupported, ...withoutQuota } = hostConfig;
        return create(withoutQuota);
      });
      host.storageQuota ??= true;
    } catch (error) {
      if (statusOf(error) === 404) {
        throw new SwerlError('ERR_SWERL_SANDBOX', `image ${image} is not on the Docker host ${host.name} (${errorMessage(error)}); pull or load it first`);
      }
      throw new SwerlError('ERR_SWERL_SANDBOX', `could not create a container from ${image} on ${host.name}: ${errorMessage(error)}`);
    }
    const sandbox = new DockerSandbox(id, label, workdir, container, lease, l);
    try {
      guard.checkpoint();
      await container.start().catch((error: unknown) => {
        throw new SwerlError('ERR_SWERL_SANDBOX', `could not start container ${id} from ${image} on ${host.name}: ${errorMessage(error)}`);
      });
      guard.checkpoint();
      if (!fromBase && spec.repoDir !== undefined) {
        const made = await sandbox.exec(`mkdir -p -- ${shellQuote(workdir)}`, { cwd: '/' });
        guard.checkpoint();
        if (made.exitCode !== 0) throw new SwerlError('ERR_SWERL_SANDBOX', `cannot create ${workdir} in ${image}: ${made.output.trim()}`);
      }
      // A base sandbox's work tree (its folder too: the archive's "./") is its user's; an
      // image's stays as the image has it.
      const owner = fromBase ? SANDBOX_USER : { uid: 0, gid: 0 };
      if (fromBase || spec.repoDir !== undefined) await copyIn(container, spec.repoDir ?? null, workdir, owner);
      guard.checkpoint();
      if (spec.overlay) {
        await container.putArchive(tarArchive(spec.overlay.map((entry) => ({ ...entry, ...owner }))), { path: workdir }).catch((error: unknown) => {
          throw new SwerlError('ERR_SWERL_SANDBOX', `could not lay the overlay over ${workdir}: ${errorMessage(error)}`);
        });
        guard.checkpoint();
      }
      return sandbox;
    } catch (error) {
      await sandbox.destroy().catch(() => undefined);
      throw error;
    }
  }
}

/**
 * Copies repoDir's contents into workdir (a tar stream through putArchive), every entry owned by
 * `owner`, the folder itself too (the archive's "./" entry); no repoDir: the folder alone.
 */
async function copyIn(container: Docker.Container, repoDir: string | null, workdir: string, owner: { uid: number; gid: number }): Promise<void> {
  if (repoDir === null) {
    await container.putArchive(tarArchive([{ name: './', type: 'dir', ...owner }]), { path: workdir }).catch((error: unknown) => {
      throw new SwerlError('ERR_SWERL_SANDBOX', `could not make ${workdir} in the sandbox: ${errorMessage(error)}`);
    });
    return;
  }
  const child = spawn('tar', ['-C', repoDir, `--owner=${owner.uid}`, `--group=${owner.gid}`, '--numeric-owner', '-cf', '-', '.'], { stdio: ['ignore', 'pipe', 'pipe'] });
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
