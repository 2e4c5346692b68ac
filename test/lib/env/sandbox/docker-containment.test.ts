import { readFileSync } from 'node:fs';

import Docker from 'dockerode';
import t from 'tap';

import { DockerSandboxBackend } from '../../../../lib/env/sandbox/docker.js';
import { dockerSkipped, startPodmanService } from '../../../support/podman.js';
import { containmentSuite } from './containment.js';

t.test('docker backend containment', { skip: dockerSkipped ? 'SWERL_SKIP_DOCKER=1' : false }, async (t) => {
  const socketPath = await startPodmanService(t);
  const docker = new Docker({ socketPath });

  /**
   * Processes in a container: its pids cgroup's count when this host can read it (podman's
   * top answers an empty list while the pids cgroup is full), else the API's top.
   */
  const processCount = async (id: string): Promise<number> => {
    try {
      const pid = (await docker.getContainer(id).inspect()).State.Pid;
      const lines = readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n');
      const v1 = lines.find((l) => l.split(':')[1] === 'pids');
      const dir = v1 ? `/sys/fs/cgroup/pids${v1.split(':')[2]}` : `/sys/fs/cgroup${lines.find((l) => l.startsWith('0::'))!.slice(3)}`;
      return Number(readFileSync(`${dir}/pids.current`, 'utf8'));
    } catch {
      try {
        const top = (await docker.getContainer(id).top()) as { Processes?: string[][] };
        return top.Processes?.length ?? 0;
      } catch {
        return 0; // removed meanwhile
      }
    }
  };

  containmentSuite(t, {
    name: 'docker',
    make: async (limits) => new DockerSandboxBackend({ socketPath, ...(limits ? { limits } : {}) }),
    childSpec: { backend: 'docker', options: { socketPath } },
    leftovers: async (label) => {
      const containers = await docker.listContainers({ all: true, filters: { label: [`swerl.label=${label}`] } });
      let processes = 0;
      for (const c of containers) if (c.State === 'running') processes += await processCount(c.Id);
      return { sandboxes: containers.length, processes };
    },
    // The memory cgroup always; a disk bound only where the storage driver has quotas (the
    // podman of these machines: overlay on ext4, none).
    wholeSandbox: { disk: false, memory: true },
  });
});
