/**
 * The options of each sandbox backend: their types and schemas in one place, so a training
 * config's `tasks.sandboxOptions` is checked, for the backend it names, when the config is
 * loaded, and each backend resolves the same schema when it starts.
 */
import { invalidArg } from '../../errors.js';
import { optionsParser, type OptionsParser } from '../../schema.js';
import { LABEL_PATTERN, LIMITS_SCHEMA, type SandboxLimits } from './sandbox.js';

export const SANDBOX_BACKENDS = ['local', 'docker'] as const;
export type SandboxBackendName = (typeof SANDBOX_BACKENDS)[number];

/** The options both backends take. */
interface CommonOptions {
  /** Default run label (reapers select on it). Default: "swerl". */
  label?: string;
  limits?: Partial<SandboxLimits>;
  /** Extra host paths made visible, read-only, at the same path (e.g. a toolchain in /opt). */
  readOnlyBinds?: string[];
}

export interface LocalSandboxOptions extends CommonOptions {
  /**
   * Host folder holding sandbox state. Default: $SWERL_SANDBOX_ROOT or <tmpdir>/swerl-sandboxes-<uid>
   * (this user's own, made 0700). It must be writable and, unless running as root, this user's:
   * the backend refuses anything else when it is created (ERR_SWERL_SANDBOX).
   */
  root?: string;
}

export interface DockerSandboxOptions extends CommonOptions {
  /**
   * The API's unix socket. Default: the path of $DOCKER_HOST (unix:// only); without it,
   * /var/run/docker.sock, then Podman's default socket.
   */
  socketPath?: string;
  /** Bind the host's /usr, /etc (and /bin, /lib… where folders) read-only into base-image sandboxes. Default: true. */
  hostBinds?: boolean;
  /** The swerl base image's name (built by ensureBaseImage). Default: localhost/swerl-base:1. */
  baseImage?: string;
  /** CPUs each sandbox may use (cgroup quota). Default: no limit. */
  cpus?: number;
}

type Resolved<T> = Required<Omit<T, 'limits'>> & { limits: SandboxLimits };
export type ResolvedLocalOptions = Omit<Resolved<LocalSandboxOptions>, 'root'> & { root?: string };
export type ResolvedDockerOptions = Omit<Resolved<DockerSandboxOptions>, 'socketPath' | 'cpus'> & Pick<DockerSandboxOptions, 'socketPath' | 'cpus'>;

/** Docker binds are "host:container[:mode]": a path with a colon cannot be one. */
const commonProperties = (bindPattern: string) => ({
  label: { type: 'string', pattern: LABEL_PATTERN.source, default: 'swerl' },
  limits: { ...LIMITS_SCHEMA, default: {} },
  readOnlyBinds: { type: 'array', items: { type: 'string', pattern: bindPattern }, default: [] },
});

export const parseLocalOptions: OptionsParser<ResolvedLocalOptions> = optionsParser<ResolvedLocalOptions>({
  type: 'object',
  additionalProperties: false,
  properties: {
    root: { type: 'string', minLength: 1 },
    ...commonProperties('^/'),
  },
});

export const parseDockerOptions: OptionsParser<ResolvedDockerOptions> = optionsParser<ResolvedDockerOptions>({
  type: 'object',
  additionalProperties: false,
  properties: {
    socketPath: { type: 'string', pattern: '^/' },
    ...commonProperties('^/[^:]*$'),
    hostBinds: { type: 'boolean', default: true },
    baseImage: { type: 'string', pattern: '^[a-zA-Z0-9][a-zA-Z0-9._/:@-]*$', default: 'localhost/swerl-base:1' },
    cpus: { type: 'number', exclusiveMinimum: 0 },
  },
});

export function checkBackendName(name: string, field: string): SandboxBackendName {
  if (!(SANDBOX_BACKENDS as readonly string[]).includes(name)) throw invalidArg(field, `is ${JSON.stringify(name)}`, `use one of ${SANDBOX_BACKENDS.join(', ')}`);
  return name as SandboxBackendName;
}

/** A backend's options, checked and defaulted for the backend named. */
export function parseSandboxOptions(backend: SandboxBackendName, options: unknown, field: string): ResolvedLocalOptions | ResolvedDockerOptions {
  return backend === 'local' ? parseLocalOptions(options, field) : parseDockerOptions(options, field);
}
