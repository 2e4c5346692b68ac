/**
 * One Docker host of the docker backend: its client, its health, what it holds (the base
 * image, pulled images, live sandboxes) and what it knows of its storage driver.
 *
 * Health: a host is unknown until first pinged, then up or down. A host that is down is left
 * alone for healthCheckMs, then pinged again when a create looks for a host; once it answers
 * it is used again, and the containers of sandboxes that were lost with it are removed then.
 */
import Docker from 'dockerode';

import { SwerlError } from '../../errors.js';
import { ensureBaseImageOn, type BaseImageLayout } from './docker-base-image.js';
import { readTlsFiles, type DockerConnection, type DockerEndpoint } from './docker-endpoint.js';
import { statusOf } from './docker-errors.js';
import { pullIfMissing } from './docker-image.js';
import { pendingRemoval, reapContainers } from './docker-reaper.js';
import { pingEndpoint } from './docker-socket.js';
import { seccompSecurityOpt } from './seccomp.js';

/** A sandbox's hold on its host: one slot, given back exactly once. */
export interface HostLease {
  /** The host, as messages name it. */
  readonly name: string;
  readonly connection: DockerConnection;
  /** The sandbox is gone: its slot is free. */
  end(): void;
  /** The daemon stopped answering the sandbox: its slot is free, and the host is pinged (down unless it answers). */
  lost(): void;
  /** The container could not be removed (no answer): it is removed when the host answers again. */
  removeLater(containerId: string): void;
}

/**
 * A dockerode client on `connection`. Every option is given, so that dockerode's own reading
 * of $DOCKER_HOST (its defaults) cannot redirect it. TLS files are read here.
 */
export function dockerClient(connection: DockerConnection): Docker {
  const none = { socketPath: undefined, host: undefined, port: undefined, ca: undefined, cert: undefined, key: undefined, timeout: undefined };
  if ('socketPath' in connection) return new Docker({ ...none, socketPath: connection.socketPath, protocol: 'http' });
  const tls = connection.tls ? readTlsFiles(connection.tls) : undefined;
  return new Docker({ ...none, host: connection.host, port: connection.port, protocol: tls ? 'https' : 'http', ...tls });
}

type Health = { state: 'unknown' } | { state: 'up' } | { state: 'down'; since: number; why: string };

export class DockerHost {
  /** Sandboxes placed here and not yet gone. */
  live = 0;
  /** Whether the storage driver bounds a container's writable layer (known after the first create). */
  storageQuota: boolean | undefined = undefined;
  private health: Health = { state: 'unknown' };
  private endpoint: DockerEndpoint | null = null;
  private docker: Docker | null = null;
  private checking: Promise<boolean> | null = null;
  private started: Promise<void> | null = null;
  private baseReady: Promise<void> | null = null;
  private seccomp: Promise<string> | null = null;
  private readonly images = new Map<string, Promise<void>>();
  /** Containers of sandboxes lost with the host: removed when it answers again. */
  private readonly orphans = new Set<string>();

  /**
   * @param candidates where the host may listen: the first that answers is kept (one URL for a
   *   listed host; the default sockets for a backend given none)
   * @param onChange called when a slot frees or the host comes back (waiting creates look again)
   */
  constructor(
    private readonly candidates: readonly DockerEndpoint[],
    readonly maxSandboxes: number,
    private readonly healthCheckMs: number,
    private readonly onChange: () => void,
    /** The options field naming this host, and its seccompProfile (a remote Podman's profile file). */
    private readonly config: { field: string; seccompProfile?: string } = { field: 'sandbox' },
  ) {}

  /**
   * The SecurityOpt entry giving a sandbox swerl's seccomp profile, as this host's engine takes
   * it (seccomp.ts); the engine is asked once.
   */
  seccompOption(): Promise<string> {
    this.seccomp ??= (async () => {
      const version = await (await this.client()).version();
      const podman = (version.Components ?? []).some((c) => /podman/i.test(c.Name));
      const connection = this.endpoint!.connection;
      const local = 'socketPath' in connection || ['127.0.0.1', 'localhost', '::1'].includes(connection.host);
      return seccompSecurityOpt(podman ? 'podman' : 'docker', { name: this.name, local, ...(this.config.seccompProfile !== undefined ? { seccompProfile: this.config.seccompProfile } : {}) }, this.config.field);
    })().catch((error: unknown) => {
      this.seccomp = null;
      throw error;
    });
    return this.seccomp;
  }

  /** The host as messages name it. */
  get name(): string {
    return this.endpoint?.name ?? this.candidates.map((c) => c.name).join(' or ');
  }

  /** Why the host is down (each candidate tried and its answer), or null when it is not known to be. */
  get downBecause(): string | null {
    return this.health.state === 'down' ? this.health.why : null;
  }

  get hasRoom(): boolean {
    return this.live < this.maxSandboxes;
  }

  /** Whether the host can take work now: known up, or answering a ping when unknown or down for healthCheckMs. */
  async available(): Promise<boolean> {
    const health = this.health;
    if (health.state === 'up') return true;
    if (health.state === 'down' && Date.now() - health.since < this.healthCheckMs) return false;
    return this.check();
  }

  /** Pings the host (one ping at a time); true when it answered. */
  check(): Promise<boolean> {
    this.checking ??= this.ping().finally(() => (this.checking = null));
    return this.checking;
  }

  /** Marks the host down (it failed under a request): left alone for healthCheckMs. */
  markDown(why: string): void {
    this.health = { state: 'down', since: Date.now(), why: `${this.name} (${why})` };
  }

  /** The client, pinging the host first unless it is known up; a host that does not answer throws naming each candidate. */
  async client(): Promise<Docker> {
    if (this.health.state !== 'up' || !this.docker) await this.check();
    if (this.health.state === 'up' && this.docker) return this.docker;
    throw new SwerlError(
      'ERR_SWERL_SANDBOX',
      `no Docker Engine API answered; tried ${this.downBecause}. Start Docker, or Podman's ` +
        'Docker-compatible service: `podman system service --time=0 unix:///run/podman/podman.sock &`, ' +
        'then set DOCKER_HOST=unix:///run/podman/podman.sock or the sandbox option socketPath (or hosts).',
    );
  }

  /** Takes a slot for a sandbox about to be made here. */
  lease(): HostLease {
    this.live++;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      this.live--;
      this.onChange();
    };
    return {
      name: this.name,
      connection: this.endpoint!.connection,
      end,
      lost: () => {
        end();
        void this.check();
      },
      removeLater: (id) => this.orphans.add(id),
    };
  }

  /** Once per host, at its first sandbox: reap what dead runs left. */
  firstStart(): Promise<void> {
    this.started ??= this.reap({}).then(
      () => undefined,
      (error: unknown) => {
        this.started = null;
        throw error;
      },
    );
    return this.started;
  }

  async reap(options: { label?: string; all?: boolean }): Promise<number> {
    return reapContainers(await this.client(), options, this.name);
  }

  /** The base image, built once per host unless the host has it with this content already. */
  ensureBaseImage(baseImage: string, layout: BaseImageLayout): Promise<void> {
    this.baseReady ??= this.client()
      .then((docker) => ensureBaseImageOn(docker, baseImage, layout))
      .catch((error: unknown) => {
        this.baseReady = null;
        throw error;
      });
    return this.baseReady;
  }

  /** A task image, pulled through the API when missing (once per host and image). */
  ensureImage(image: string): Promise<void> {
    let ready = this.images.get(image);
    if (!ready) {
      ready = this.client().then((docker) => pullIfMissing(docker, image));
      this.images.set(image, ready);
      ready.catch(() => this.images.delete(image));
    }
    return ready;
  }

  private async ping(): Promise<boolean> {
    const tried: string[] = [];
    for (const endpoint of this.endpoint ? [this.endpoint] : this.candidates) {
      const why = await pingEndpoint(endpoint.connection);
      if (why === null) {
        try {
          this.docker ??= dockerClient(endpoint.connection);
        } catch (error) {
          tried.push(`${endpoint.name} (${(error as Error).message})`);
          continue;
        }
        this.endpoint = endpoint;
        const wasDown = this.health.state === 'down';
        this.health = { state: 'up' };
        if (wasDown) {
          this.removeOrphans();
          this.onChange();
        }
        return true;
      }
      tried.push(`${endpoint.name} (${why})`);
    }
    this.health = { state: 'down', since: Date.now(), why: tried.join(', ') };
    return false;
  }

  private removeOrphans(): void {
    for (const id of this.orphans) {
      this.docker!.getContainer(id)
        .remove({ force: true, v: true })
        .then(
          () => true,
          (error: unknown) => statusOf(error) === 404,
        )
        .then((gone) => {
          if (!gone) return;
          this.orphans.delete(id);
          pendingRemoval.delete(id);
        });
    }
  }
}
