/**
 * Where a Docker Engine API listens: DOCKER_HOST-style URLs (unix:///path, tcp://host:port,
 * TLS over tcp with CA, client certificate and key files), what $DOCKER_HOST and the docker
 * CLI's DOCKER_TLS_VERIFY / DOCKER_CERT_PATH say, and the default sockets. Plain data and
 * no client: the options' parser uses it, and dockerode loads only with the docker backend.
 */
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { SwerlError, invalidArg } from '../../errors.js';

/** TLS file paths (PEM), read when a connection is made. */
export interface TlsFiles {
  ca?: string;
  cert?: string;
  key?: string;
}

/**
 * How to reach a daemon, as plain data: the process-exit removal hands it to a child process.
 * `tls` present means https (with the system's CAs where it names no `ca`).
 */
export type DockerConnection = { socketPath: string } | { host: string; port: number; tls?: TlsFiles };

export interface DockerEndpoint {
  /** How messages name it: the URL or socket path as given. */
  name: string;
  connection: DockerConnection;
}

const DOCKER_PORT = 2375;
const DOCKER_TLS_PORT = 2376;

/** A unix:// or tcp:// URL as a connection; anything else is refused naming `field`. */
export function parseEndpointUrl(url: string, field: string, tls?: TlsFiles): DockerConnection {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
  if (scheme === 'unix') {
    const socketPath = url.slice('unix://'.length);
    if (!socketPath.startsWith('/')) throw invalidArg(field, `is ${JSON.stringify(url)}: a unix socket needs an absolute path`, 'write unix:///path/to/docker.sock (three slashes)');
    if (tls) throw invalidArg(field, `is a unix socket (${url}): tls applies to tcp:// hosts only`, 'drop tls, or use tcp://host:port');
    return { socketPath };
  }
  if (scheme === 'tcp') {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw invalidArg(field, `is ${JSON.stringify(url)}: not a valid URL`, 'write tcp://host:port');
    }
    if (!parsed.hostname) throw invalidArg(field, `is ${JSON.stringify(url)}: no host`, 'write tcp://host:port');
    if ((parsed.pathname !== '' && parsed.pathname !== '/') || parsed.search || parsed.username) {
      throw invalidArg(field, `is ${JSON.stringify(url)}: only a host and port are allowed`, 'write tcp://host:port');
    }
    const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
    const port = parsed.port ? Number(parsed.port) : tls ? DOCKER_TLS_PORT : DOCKER_PORT;
    return { host, port, ...(tls ? { tls } : {}) };
  }
  if (scheme === 'ssh') {
    throw invalidArg(field, `is ${JSON.stringify(url)}: ssh:// is not supported`, 'forward the remote socket (ssh -nNT -L /tmp/remote-docker.sock:/var/run/docker.sock HOST) and use unix:///tmp/remote-docker.sock');
  }
  throw invalidArg(field, `is ${JSON.stringify(url)}: not a Docker host URL`, 'use unix:///path/to/docker.sock or tcp://host:port (with tls for TLS)');
}

/** The URL a connection is named by in messages. */
export function endpointUrl(connection: DockerConnection): string {
  if ('socketPath' in connection) return `unix://${connection.socketPath}`;
  return `tcp://${connection.host.includes(':') ? `[${connection.host}]` : connection.host}:${connection.port}`;
}

/**
 * $DOCKER_HOST the docker CLI's way: with DOCKER_TLS_VERIFY set, TLS verified against
 * ca.pem in DOCKER_CERT_PATH (default ~/.docker), with cert.pem and key.pem as the client's
 * certificate where they exist.
 */
function environmentEndpoint(value: string): DockerEndpoint {
  let tls: TlsFiles | undefined;
  if (process.env.DOCKER_TLS_VERIFY && value.startsWith('tcp://')) {
    const dir = process.env.DOCKER_CERT_PATH || path.join(os.homedir(), '.docker');
    const [cert, key] = [path.join(dir, 'cert.pem'), path.join(dir, 'key.pem')];
    tls = { ca: path.join(dir, 'ca.pem'), ...(existsSync(cert) && existsSync(key) ? { cert, key } : {}) };
  }
  return { name: value, connection: parseEndpointUrl(value, 'DOCKER_HOST', tls) };
}

/** One host's candidates, first answering wins: `socketPath`, else $DOCKER_HOST, else the default sockets. */
export function defaultEndpoints(socketPath: string | undefined): DockerEndpoint[] {
  if (socketPath !== undefined) return [{ name: socketPath, connection: { socketPath } }];
  const fromEnvironment = process.env.DOCKER_HOST;
  if (fromEnvironment) return [environmentEndpoint(fromEnvironment)];
  const podman = process.getuid?.() === 0 ? '/run/podman/podman.sock' : `${process.env.XDG_RUNTIME_DIR ?? `/run/user/${process.getuid?.()}`}/podman/podman.sock`;
  return ['/var/run/docker.sock', podman].map((p) => ({ name: p, connection: { socketPath: p } }));
}

/** The TLS files' contents; a file that cannot be read throws, naming it. */
export function readTlsFiles(tls: TlsFiles): { ca?: Buffer; cert?: Buffer; key?: Buffer } {
  const out: { ca?: Buffer; cert?: Buffer; key?: Buffer } = {};
  for (const part of ['ca', 'cert', 'key'] as const) {
    const file = tls[part];
    if (file === undefined) continue;
    try {
      out[part] = readFileSync(file);
    } catch (error) {
      const e = error as NodeJS.ErrnoException;
      throw new SwerlError('ERR_SWERL_INVALID_ARG', `cannot read tls.${part} ${file} (${e.code ?? e.message})`);
    }
  }
  return out;
}
