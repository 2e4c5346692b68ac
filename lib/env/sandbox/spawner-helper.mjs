// @ts-check
/**
 * The helper process of spawner.ts: spawns what its parent asks for and streams back the pid,
 * the output and the exit. When the parent goes (its IPC channel closes), every process group
 * this helper started is killed and the helper exits.
 *
 * Plain JavaScript (type-checked through JSDoc), so that it starts in tens of milliseconds
 * wherever its parent runs from: a TypeScript loader in the helper cost seconds of CPU each.
 */
import { startChild } from './start-child.mjs';

/** @typedef {{ type: 'spawn'; id: number; request: import('./spawner.js').SpawnRequest }} Request */

/** @type {Set<number>} */
const groups = new Set();

/** @param {object} message */
function send(message) {
  // The parent may be gone (its exit closes the channel): what it would be told no longer matters.
  if (!process.connected) return;
  process.send?.(message, undefined, undefined, () => undefined);
}

process.on('message', (/** @type {Request} */ m) => {
  if (m?.type !== 'spawn') return;
  const { id, request } = m;
  /** @type {number | undefined} */
  let group;
  startChild(request, {
    started(pid) {
      if (request.detached) groups.add((group = pid));
      send({ type: 'pid', id, pid });
    },
    stdout: (data) => send({ type: 'out', id, data }),
    stderr: (data) => send({ type: 'err', id, data }),
    failed: (error) => send({ type: 'error', id, message: error.message }),
    closed(code, signal) {
      if (group !== undefined) groups.delete(group);
      send({ type: 'exit', id, code, signal });
    },
  });
});

// Ctrl-C and kill signals reach the whole process group, this helper with its parent: the parent
// decides (its own cleanup closes its sandboxes); its going closes the channel, which ends this.
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM', 'SIGHUP'])) process.on(signal, () => undefined);

process.on('disconnect', () => {
  for (const pid of groups) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  process.exit(0);
});
