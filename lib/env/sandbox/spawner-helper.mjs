// @ts-check
/**
 * The helper process of spawner.ts: spawns what its parent asks for and streams back the pid,
 * the output and the exit. When the parent goes (its IPC channel closes), every process group
 * this helper started is killed and the helper exits.
 *
 * Plain JavaScript (type-checked through JSDoc), so that it starts in tens of milliseconds
 * wherever its parent runs from: a TypeScript loader in the helper cost seconds of CPU each.
 */
import { spawn } from 'node:child_process';

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
  let child;
  try {
    child = spawn(request.program, request.args, {
      detached: request.detached,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: request.env,
      ...(request.uid !== undefined ? { uid: request.uid, gid: request.gid ?? request.uid } : {}),
    });
  } catch (error) {
    send({ type: 'error', id, message: /** @type {Error} */ (error).message });
    return;
  }
  let started = false;
  child.once('spawn', () => {
    started = true;
    if (request.detached && child.pid !== undefined) groups.add(child.pid);
    send({ type: 'pid', id, pid: child.pid });
  });
  child.stdout.on('data', (data) => send({ type: 'out', id, data }));
  child.stderr.on('data', (data) => send({ type: 'err', id, data }));
  child.stdin.on('error', () => undefined);
  child.stdin.end(request.stdin);
  child.once('error', (error) => {
    if (!started) send({ type: 'error', id, message: error.message });
  });
  child.once('close', (code, signal) => {
    if (child.pid !== undefined) groups.delete(child.pid);
    if (started) send({ type: 'exit', id, code, signal });
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
