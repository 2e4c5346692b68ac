/**
 * Removing containers outside their sandbox's destroy(): those of live sandboxes when this
 * process exits, and those whose owner process is gone (by their swerl.* labels).
 */
import { spawnSync } from 'node:child_process';

import type Docker from 'dockerode';

import { SwerlError } from '../../errors.js';
import { errorMessage } from './docker-errors.js';
import { ownerAlive } from './owner.js';

/** Containers of live sandboxes (id → socket): what the process-exit hook removes. */
export const pendingRemoval = new Map<string, string>();

const REMOVE_SCRIPT = `
const http = require('node:http');
const items = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
let left = items.length;
const done = () => { if (--left === 0) process.exit(0); };
for (const { id, socketPath } of items) {
  const req = http.request({ socketPath, method: 'DELETE', path: '/containers/' + encodeURIComponent(id) + '?force=true&v=true', timeout: 20000 },
    (res) => { res.resume(); res.on('end', done); });
  req.on('timeout', () => req.destroy());
  req.on('error', done);
  req.end();
}
`;

/**
 * Removes every pending container synchronously. Node has no synchronous HTTP, so a child
 * Node process sends the DELETE requests (all at once) and this waits for it.
 */
export function removePendingSync(): void {
  const items = [...pendingRemoval].map(([id, socketPath]) => ({ id, socketPath }));
  pendingRemoval.clear();
  if (items.length === 0) return;
  spawnSync(process.execPath, ['-e', REMOVE_SCRIPT], {
    input: JSON.stringify(items),
    timeout: 30_000,
    stdio: ['pipe', 'ignore', 'ignore'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  });
}

/** Removes the sandbox containers (of one label, or all) whose owner is gone, or every one with `all`; returns how many. */
export async function reapContainers(docker: Docker, options: { label?: string; all?: boolean }): Promise<number> {
  const label = ['swerl.sandbox', ...(options.label !== undefined ? [`swerl.label=${options.label}`] : [])];
  let containers: Docker.ContainerInfo[];
  try {
    containers = await docker.listContainers({ all: true, filters: { label } });
  } catch (error) {
    throw new SwerlError('ERR_SWERL_SANDBOX', `could not list containers: ${errorMessage(error)}`);
  }
  const doomed = containers.filter((c) => {
    if (options.all) return true;
    const pid = Number(c.Labels['swerl.owner-pid']);
    return !ownerAlive(pid, c.Labels['swerl.owner-start'] ?? '');
  });
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
