/**
 * Whether a Docker Engine API (Docker, or Podman's Docker-compatible service) answers: GET
 * /_ping on a unix socket, or over tcp (TLS where the connection has it).
 */
import { statSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';

import { readTlsFiles, type DockerConnection } from './docker-endpoint.js';

/** How long a ping waits for its answer. */
export const PING_TIMEOUT_MS = 5_000;

/** GET /_ping on a unix socket: null when it answers OK, else why not. */
export function pingSocket(socketPath: string, timeoutMs = PING_TIMEOUT_MS): Promise<string | null> {
  return pingEndpoint({ socketPath }, timeoutMs);
}

/** GET /_ping: null when the daemon answers OK, else why not (the socket, the connection, TLS, HTTP). */
export function pingEndpoint(connection: DockerConnection, timeoutMs = PING_TIMEOUT_MS): Promise<string | null> {
  let options: https.RequestOptions;
  if ('socketPath' in connection) {
    try {
      if (!statSync(connection.socketPath).isSocket()) return Promise.resolve('not a socket');
    } catch {
      return Promise.resolve('no such socket');
    }
    options = { socketPath: connection.socketPath };
  } else {
    options = { host: connection.host, port: connection.port };
    if (connection.tls) {
      try {
        options = { ...options, ...readTlsFiles(connection.tls) };
      } catch (error) {
        return Promise.resolve((error as Error).message);
      }
    }
  }
  const client = 'tls' in connection && connection.tls ? https : http;
  return new Promise((resolve) => {
    const request = client.request({ ...options, path: '/_ping', method: 'GET', timeout: timeoutMs, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (d: string) => (body += d));
      response.on('end', () => resolve(response.statusCode === 200 ? null : `HTTP ${response.statusCode}: ${body.trim().slice(0, 200)}`));
      response.on('error', (e) => resolve(e.message));
    });
    request.on('timeout', () => request.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    request.on('error', (e: NodeJS.ErrnoException) => resolve(e.code && !e.message.includes(e.code) ? `${e.code}: ${e.message}` : e.message));
    request.end();
  });
}
