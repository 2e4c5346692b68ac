// @ts-check
/**
 * Starting one child process for the spawner (spawner.ts), in this process or in a helper
 * (spawner-helper.mjs): both go through here. Plain JavaScript, as the helper must be.
 */
import { spawn } from 'node:child_process';

/**
 * @typedef {object} ChildEvents
 * @property {(pid: number) => void} started it runs (its pid)
 * @property {(data: Buffer) => void} stdout
 * @property {(data: Buffer) => void} stderr
 * @property {(error: Error) => void} failed it could not be started (nothing else follows)
 * @property {(code: number | null, signal: NodeJS.Signals | null) => void} closed it exited and its output is delivered
 */

/**
 * Starts `request`'s program with its stdin written and closed; tells `on` what happens.
 * @param {import('./spawner.js').SpawnRequest} request
 * @param {ChildEvents} on
 */
export function startChild(request, on) {
  let child;
  try {
    child = spawn(request.program, request.args, {
      detached: request.detached,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: request.env,
      ...(request.uid !== undefined ? { uid: request.uid, gid: request.gid ?? request.uid } : {}),
    });
  } catch (error) {
    on.failed(/** @type {Error} */ (error));
    return;
  }
  let started = false;
  child.once('spawn', () => {
    started = true;
    on.started(/** @type {number} */ (child.pid));
  });
  child.stdout.on('data', on.stdout);
  child.stderr.on('data', on.stderr);
  child.stdin.on('error', () => undefined);
  child.stdin.end(request.stdin);
  child.once('error', (error) => {
    if (!started) on.failed(error);
  });
  child.once('close', (code, signal) => {
    if (started) on.closed(code, signal);
  });
}
