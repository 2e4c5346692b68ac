/**
 * A Docker-compatible API without a Docker daemon: `podman system service` on a socket in a
 * private temporary folder, for the docker backend's tests and benchmark (and anyone without
 * a daemon). With setpriv, the service dies with this process even when stop() never runs.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { SwerlError } from '../../errors.js';
import { pingSocket } from './docker-socket.js';

export interface PodmanService {
  socketPath: string;
  stop(): Promise<void>;
}

export async function startPodmanService(startTimeoutMs = 30_000): Promise<PodmanService> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'swerl-podman-'));
  const socketPath = path.join(dir, 'podman.sock');
  const args = ['system', 'service', '--time=0', `unix://${socketPath}`];
  const setpriv = spawnSync('setpriv', ['--help'], { encoding: 'utf8' });
  const withDeathSignal = !setpriv.error && setpriv.stdout.includes('--pdeathsig');
  const [command, commandArgs] = withDeathSignal ? ['setpriv', ['--pdeathsig', 'SIGTERM', '--', 'podman', ...args]] : ['podman', args];
  const child = spawn(command, commandArgs, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  let exited: string | null = null;
  const closed = new Promise<void>((resolve) => {
    child.on('error', (error) => {
      exited = `could not run podman (${error.message}); install it (apt-get install podman)`;
      resolve();
    });
    child.on('close', (code, signal) => {
      const hint = code === 127 ? '; install podman (apt-get install podman)' : '';
      exited ??= `podman system service exited (${signal ?? code}): ${stderr.trim()}${hint}`;
      resolve();
    });
  });
  const stop = async () => {
    if (exited === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await closed;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + startTimeoutMs;
  let why: string | null = 'not started';
  while (Date.now() < deadline) {
    if (exited !== null) break;
    why = await pingSocket(socketPath, 2_000);
    if (why === null) return { socketPath, stop };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stop();
  throw new SwerlError(
    'ERR_SWERL_SANDBOX',
    exited ?? `podman system service on ${socketPath} did not answer in ${startTimeoutMs} ms (${why}): ${stderr.trim()}`,
  );
}
