/**
 * Removing containers outside their sandbox's destroy(): those of live sandboxes when this
 * process exits, and those whose owner process is gone (by their swerl.* labels).
 */
import { spawnSync } from 'node:child_process';
import os from 'node:os';

import type Docker from 'dockerode';

import { SwerlError } from '../../errors.js';
import type { DockerConnection } from './docker-endpoint.js';
import { errorMessage } from './docker-errors.js';
import { ownerAlive } from './owner.js';

/** This machine, as containers' swerl.owner-host label names it: only here can /proc tell whether their owner lives. */
export const OWNER_HOST = os.hostname();

/** Containers of live sandboxes (id → how to reach their daemon): what the process-exit hook removes. */
export const pendingRemoval = new Map<string, DockerConnection>();
let exitHookInstalled = false;

/** Has `id` removed when this process exits, unless it is removed before. */
export function removeAtExit(id: string, connection: DockerConnection): void {
  pendingRemoval.set(id, connection);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // Besides each sandbox's own destroySync: a sandbox whose host was lost is no longer
    // tracked, and its container (should the host come back) is still to be removed.
    process.on('exit', removePendingSync);
  }
}

const REMOVE_SCRIPT = `
const fs = require('node:fs');
const items = JSON.parse(fs.readFileSync(0, 'utf8'));
let left = items.length;
const done = () => { if (--left === 0) process.exit(0); };
const read = (file) => { try { return file === undefined ? undefined : fs.readFileSync(file); } catch { return undefined; } };
for (const { id, connection } of items) {
  const path = '/containers/' + encodeURIComponent(id) + '?force=true&v=true';
  const target = connection.socketPath !== undefined ? { socketPath: connection.socketPath } : { host: connection.host, port: connection.port };
  const tls = connection.tls ? { ca: read(connection.tls.ca), cert: read(connection.tls.cert), key: read(connection.tls.key) } : undefined;
  const req = require(tls ? 'node:https' : 'node:http').request({ ...target, ...tls, method: 'DELETE', path, timeout: 20000, agent: false },
    (res) => { res.resume(); res.on('end', done); });
  req.on('timeout', () => req.destroy());
  req.on('error', done);
  req.end();
}
`;

/**
 * Removes every pending container synchronously. Node has no synchronous HTTP, so a child
 * Node process sends the DELETE requests (all at once, over each container's own connection:
 * unix socket, tcp or TLS) and this waits for it.
 */
export function removePendingSync(): void {
  const items = [...pendingRemoval].map(([id, connection]) => ({ id, connection }));
  pendingRemoval.clear();
  if (items.length === 0) return;
  spawnSync(process.execPath, ['-e', REMOVE_SCRIPT], {
    input: JSON.stringify(items),
    timeout: 30_000,
    stdio: ['pipe', 'ignore', 'ignore'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  });
}

/**
 * Whether a container's owner is gone. Only an owner on this machine can be checked (its
 * /proc); one made by a run on another machine sharing the daemon is that run's to reap.
 * Containers from before swerl.owner-host was written count as this machine's.
 */
function ownerGone(labels: Record<string, string>): boolean {
  const ownerHost = labels['swerl.owner-host'];
  if (ownerHost !== undefined && ownerHost !== OWNER_HOST) return false;
  return !ownerAlive(Number(labels['swerl.owner-pid']), labels['swerl.owner-start'] ?? '');
}

/**
 * Removes the sandbox containers (of one label, or all) whose owner is gone, or every one with
 * `all`; returns how many. `where` names the daemon in errors.
 */
export async function reapContainers(docker: Docker, options: { label?: string; all?: boolean }, where = 'the Docker host'): Promise<number> {
  const label = ['swerl.sandbox', ...(options.label !== undefined ? [`swerl.label=${options.label}`] : [])];
  let containers: Docker.ContainerInfo[];
  try {
    containers = await docker.listContainers({ all: true, filters: { label } });
  } catch (error) {
    throw Object.assign(new SwerlError('ERR_SWERL_SANDBOX', `could not list containers on ${where}: ${errorMessage(error)}`), { cause: error });
  }
  const doomed = containers.filter((c) => options.all || ownerGone(c.Labels));
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
