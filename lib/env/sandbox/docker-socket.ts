/**
 * Finding a Docker Engine API (Docker, or Podman's Docker-compatible service) on a unix
 * socket: the candidates, a ping of each, a dockerode client on the first that answers.
 */
import { statSync } from 'node:fs';
import http from 'node:http';

import Docker from 'dockerode';

import { SwerlError, invalidArg } from '../../errors.js';

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

/** A client on `explicit`, or else on the first default socket that answers; failing all, how to start one. */
export async function connectDocker(explicit: string | undefined): Promise<{ docker: Docker; socketPath: string }> {
  const tried: string[] = [];
  for (const socketPath of socketCandidates(explicit)) {
    const why = await pingSocket(socketPath);
    if (why === null) return { docker: new Docker({ socketPath }), socketPath };
    tried.push(`${socketPath} (${why})`);
  }
  throw new SwerlError(
    'ERR_SWERL_SANDBOX',
    `no Docker Engine API answered; tried ${tried.join(', ')}. Start Docker, or Podman's ` +
      'Docker-compatible service: `podman system service --time=0 unix:///run/podman/podman.sock &`, ' +
      'then set DOCKER_HOST=unix:///run/podman/podman.sock or the sandbox option socketPath.',
  );
}
