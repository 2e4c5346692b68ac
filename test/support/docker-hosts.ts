/**
 * Several real Docker hosts on one machine, for the docker backend's many-host tests and
 * benchmark: private podman services, each with its own container store (unix socket or
 * tcp), and a TLS endpoint (a Node TLS server that requires a client certificate, piping bytes
 * to a podman socket) with a CA, server and client certificates made by openssl.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';

import type Docker from 'dockerode';

import { parseEndpointUrl, type TlsFiles } from '../../lib/env/sandbox/docker-endpoint.js';
import { dockerClient } from '../../lib/env/sandbox/docker-host.js';
import { startPodmanService, type PodmanService, type PodmanServiceOptions } from '../../lib/env/sandbox/podman-service.js';

interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

/** A podman service with a store of its own (an independent host), stopped at teardown. */
export async function startPodmanHost(t: Teardown, options: Omit<PodmanServiceOptions, 'privateStore'> = {}): Promise<PodmanService> {
  try {
    const service = await startPodmanService({ ...options, privateStore: true });
    t.teardown(service.stop);
    return service;
  } catch (error) {
    throw new Error(`${(error as Error).message} (or set SWERL_SKIP_DOCKER=1)`);
  }
}

/** A dockerode client on a host URL (TLS files as the backend reads them). */
export function clientOf(url: string, tlsFiles?: TlsFiles): Docker {
  return dockerClient(parseEndpointUrl(url, 'url', tlsFiles));
}

/** The names of the swerl sandbox containers on a host, with `label`, as its daemon lists them. */
export async function sandboxesOn(url: string, label: string, tlsFiles?: TlsFiles): Promise<string[]> {
  const containers = await clientOf(url, tlsFiles).listContainers({ all: true, filters: { label: [`swerl.label=${label}`] } });
  return containers.map((c) => c.Labels['swerl.sandbox']!).sort();
}

export interface TlsEndpoint {
  url: string;
  /** The CA that signed the server's and the client's certificates. */
  ca: string;
  cert: string;
  key: string;
  /** A CA that signed nothing here: a client trusting only it refuses the server. */
  otherCa: string;
  close(): Promise<void>;
}

/**
 * TLS on tcp://127.0.0.1:PORT in front of a unix socket: the server's certificate is for
 * 127.0.0.1, and a client certificate signed by the same CA is required.
 */
export async function startTlsEndpoint(t: Teardown, socketPath: string): Promise<TlsEndpoint> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'swerl-tls-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const makeCa = (name: string) => {
    openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=${name}`, '-keyout', file(`${name}.key`), '-out', file(`${name}.pem`));
  };
  const signed = (name: string, extensions: string) => {
    writeFileSync(file(`${name}.ext`), extensions);
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${name}`, '-keyout', file(`${name}-key.pem`), '-out', file(`${name}.csr`));
    openssl('x509', '-req', '-in', file(`${name}.csr`), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-days', '2', '-extfile', file(`${name}.ext`), '-out', file(`${name}.pem`));
  };
  makeCa('ca');
  makeCa('other-ca');
  signed('server', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  signed('client', 'extendedKeyUsage=clientAuth\n');

  const sockets = new Set<net.Socket>();
  const server = tls.createServer(
    { key: readFileSync(file('server-key.pem')), cert: readFileSync(file('server.pem')), ca: readFileSync(file('ca.pem')), requestCert: true, rejectUnauthorized: true, allowHalfOpen: true },
    (client) => {
      const daemon = net.connect({ path: socketPath, allowHalfOpen: true });
      sockets.add(client).add(daemon);
      const drop = () => {
        client.destroy();
        daemon.destroy();
        sockets.delete(client);
        sockets.delete(daemon);
      };
      client.on('error', drop).on('close', drop);
      daemon.on('error', drop).on('close', drop);
      client.pipe(daemon);
      daemon.pipe(client);
    },
  );
  server.on('tlsClientError', () => undefined); // a refused client is the point of some tests
  // Every connection, handshake done or not: close() waits for them all to end.
  server.on('connection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  t.teardown(close);
  return {
    url: `tcp://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    ca: file('ca.pem'),
    cert: file('client.pem'),
    key: file('client-key.pem'),
    otherCa: file('other-ca.pem'),
    close,
  };
}
