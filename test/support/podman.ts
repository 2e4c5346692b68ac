/**
 * A Docker-compatible API for tests: $SWERL_DOCKER_SOCKET when set, else a private
 * `podman system service` (lib/env/sandbox/podman-service.ts), stopped at teardown.
 *
 * Missing podman is an error, not a skip: CI must run these tests. Test files skip only when
 * SWERL_SKIP_DOCKER=1 (see dockerSkipped).
 */
import { pingSocket } from '../../lib/env/sandbox/docker-socket.js';
import { startPodmanService as startService } from '../../lib/env/sandbox/podman-service.js';

interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

/** Whether the docker tests are switched off (SWERL_SKIP_DOCKER=1). */
export const dockerSkipped = process.env.SWERL_SKIP_DOCKER === '1';

/** Returns the socket path of a running Docker-compatible API service. */
export async function startPodmanService(t: Teardown): Promise<string> {
  const given = process.env.SWERL_DOCKER_SOCKET;
  if (given) {
    const why = await pingSocket(given);
    if (why !== null) throw new Error(`SWERL_DOCKER_SOCKET=${given} does not answer /_ping: ${why}`);
    return given;
  }
  try {
    const service = await startService();
    t.teardown(service.stop);
    return service.socketPath;
  } catch (error) {
    throw new Error(`${(error as Error).message} (or set SWERL_SKIP_DOCKER=1)`);
  }
}
