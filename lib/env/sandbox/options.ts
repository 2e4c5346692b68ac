/**
 * The options of each sandbox backend: their types and schemas in one place, so a training
 * config's `tasks.sandboxOptions` is checked, for the backend it names, when the config is
 * loaded, and each backend resolves the same schema when it starts.
 */
import { invalidArg } from '../../errors.js';
import { optionsParser, type Infer, type Input, type OptionsParser } from '../../schema.js';
import { parseEndpointUrl } from './docker-endpoint.js';
import { LABEL_PATTERN, LIMITS_SCHEMA } from './sandbox.js';

export const SANDBOX_BACKENDS = ['local', 'docker'] as const;
export type SandboxBackendName = (typeof SANDBOX_BACKENDS)[number];

/** The options both backends take. Docker binds are "host:container[:mode]": a path with a colon cannot be one. */
const commonProperties = <const P extends string>(bindPattern: P) =>
  ({
    /** Default run label (reapers select on it). */
    label: { type: 'string', pattern: LABEL_PATTERN.source, default: 'swerl' },
    limits: { ...LIMITS_SCHEMA, default: {} },
    /** Extra host paths made visible, read-only, at the same path (e.g. a toolchain in /opt). */
    readOnlyBinds: { type: 'array', items: { type: 'string', pattern: bindPattern }, default: [] },
  }) as const;

const LOCAL_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    /**
     * Host folder holding sandbox state. Default: $SWERL_SANDBOX_ROOT or <tmpdir>/swerl-sandboxes-<uid>
     * (this user's own, made 0700). It must be writable and, unless running as root, this user's:
     * the backend refuses anything else when it is created (ERR_SWERL_SANDBOX).
     */
    root: { type: 'string', minLength: 1 },
    /**
     * As root, what holds each sandbox's work tree and /tmp (diskBytes of them): 'image', an ext4
     * image on the host's disk, loop-mounted; 'tmpfs', a tmpfs: no image to make and mount (~30 ms
     * of CPU less a sandbox, two sandboxes an SWE episode), its files in memory, charged to the
     * sandbox's memory cgroup where the sandbox writes them. For small repositories (generated
     * tasks); a large repository's work tree in memory, once a sandbox, adds up.
     */
    disk: { enum: ['image', 'tmpfs'], default: 'image' },
    ...commonProperties('^/'),
  },
} as const;
export type LocalSandboxOptions = Input<typeof LOCAL_SCHEMA>;
export type ResolvedLocalOptions = Infer<typeof LOCAL_SCHEMA>;

/** One Docker host of several. */
const HOST_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    /** unix:///path/to/docker.sock or tcp://host:port (TLS when `tls` is given; port default 2375, 2376 with TLS). */
    url: { type: 'string', minLength: 1 },
    /** PEM files, read at each connection: the CA that signed the daemon's certificate (default: the system's), and the client's certificate and key. */
    tls: {
      type: 'object',
      additionalProperties: false,
      properties: { ca: { type: 'string', minLength: 1 }, cert: { type: 'string', minLength: 1 }, key: { type: 'string', minLength: 1 } },
    },
    /** Sandboxes this host may hold at once. Default: maxSandboxesPerHost. */
    maxSandboxes: { type: 'integer', minimum: 1 },
    /**
     * A Podman host on another machine: the path, on that machine, of the sandboxes' seccomp
     * profile (`swerl sandbox seccomp-profile` writes it). Podman's API takes the profile only as
     * a file; Docker takes it inline and a Podman on this machine gets a file written here.
     */
    seccompProfile: { type: 'string', pattern: '^/' },
  },
} as const;
export type DockerHostOptions = Infer<typeof HOST_SCHEMA>;

const DOCKER_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    /**
     * The API's unix socket, for one host. Default: $DOCKER_HOST (unix://, or tcp:// with the
     * docker CLI's DOCKER_TLS_VERIFY and DOCKER_CERT_PATH); without it, /var/run/docker.sock,
     * then Podman's default socket.
     */
    socketPath: { type: 'string', pattern: '^/' },
    ...commonProperties('^/[^:]*$'),
    /** Bind the host's /usr, /etc (and /bin, /lib… where folders) read-only into base-image sandboxes. */
    hostBinds: { type: 'boolean', default: true },
    /** The swerl base image's name (built by ensureBaseImage). */
    baseImage: { type: 'string', pattern: '^[a-zA-Z0-9][a-zA-Z0-9._/:@-]*$', default: 'localhost/swerl-base:1' },
    /** CPUs each sandbox may use (cgroup quota). Default: no limit. */
    cpus: { type: 'number', exclusiveMinimum: 0 },
    /**
     * Several hosts (instead of socketPath): each a URL or { url, tls, maxSandboxes }. Each
     * sandbox goes to the reachable host holding the fewest, under its limit.
     */
    hosts: { type: 'array', minItems: 1, items: { if: { type: 'string' }, then: { type: 'string', minLength: 1 }, else: HOST_SCHEMA } },
    /** Sandboxes each host may hold at once; a create waits for a free slot. Default: no limit. */
    maxSandboxesPerHost: { type: 'integer', minimum: 1 },
    /** How long a host that failed is left alone before it is pinged again, in ms. */
    healthCheckMs: { type: 'integer', minimum: 1, default: 10_000 },
  },
} as const;
export type DockerSandboxOptions = Input<typeof DOCKER_SCHEMA>;
/** Docker's options resolved: every host a { url, ... } object. */
export type ResolvedDockerOptions = Omit<Infer<typeof DOCKER_SCHEMA>, 'hosts'> & { hosts?: DockerHostOptions[] };

export const parseLocalOptions: OptionsParser<ResolvedLocalOptions> = optionsParser(LOCAL_SCHEMA);
const parseDockerSchema = optionsParser(DOCKER_SCHEMA);

/** The schema's checks, then the hosts': each URL understood, a URL string made { url }, none with socketPath. */
export const parseDockerOptions: OptionsParser<ResolvedDockerOptions> = (value, field) => {
  const given = (value as { hosts?: unknown } | undefined)?.hosts;
  if (Array.isArray(given)) {
    if (given.length === 0) throw invalidArg(`${field}.hosts`, 'is empty', 'list at least one host, or leave hosts out for socketPath or $DOCKER_HOST');
    const odd = given.findIndex((host) => typeof host !== 'string' && (typeof host !== 'object' || host === null || Array.isArray(host)));
    if (odd >= 0) throw invalidArg(`${field}.hosts.${odd}`, `is ${JSON.stringify(given[odd])}`, 'give a URL (unix:///path/docker.sock, tcp://host:port) or { url, tls?: { ca?, cert?, key? }, maxSandboxes? }');
  }
  const { hosts: listed, ...options } = parseDockerSchema(value, field);
  if (listed === undefined) return options;
  if (options.socketPath !== undefined) {
    throw invalidArg(`${field}.hosts`, 'cannot be given with socketPath', `list the socket among the hosts (unix://${options.socketPath}) and drop socketPath`);
  }
  const hosts = listed.map((host) => (typeof host === 'string' ? { url: host } : host));
  const seen = new Map<string, number>();
  hosts.forEach((host, i) => {
    const at = `${field}.hosts.${i}${typeof listed[i] === 'string' ? '' : '.url'}`;
    const connection = parseEndpointUrl(host.url, at, host.tls);
    const key = JSON.stringify('socketPath' in connection ? connection.socketPath : [connection.host, connection.port]);
    const first = seen.get(key);
    if (first !== undefined) throw invalidArg(at, `is ${JSON.stringify(host.url)}, the same host as ${field}.hosts.${first}`, 'list each host once');
    seen.set(key, i);
  });
  return { ...options, hosts };
};

export function checkBackendName(name: string, field: string): SandboxBackendName {
  if (!(SANDBOX_BACKENDS as readonly string[]).includes(name)) throw invalidArg(field, `is ${JSON.stringify(name)}`, `use one of ${SANDBOX_BACKENDS.join(', ')}`);
  return name as SandboxBackendName;
}

/** A backend's options, checked and defaulted for the backend named. */
export function parseSandboxOptions(backend: SandboxBackendName, options: unknown, field: string): ResolvedLocalOptions | ResolvedDockerOptions {
  return backend === 'local' ? parseLocalOptions(options, field) : parseDockerOptions(options, field);
}
