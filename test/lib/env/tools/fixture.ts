/**
 * A real sandbox holding a small fixture repository, for the tool tests: the local (bubblewrap)
 * backend, or with SWERL_TOOLS_BACKEND=docker the Docker backend (on $SWERL_DOCKER_SOCKET or a
 * private podman service), to check that the tools behave the same there.
 */
import { LocalSandboxBackend } from '../../../../lib/env/sandbox/local.js';
import type { LocalSandboxOptions } from '../../../../lib/env/sandbox/options.js';
import type { Sandbox, SandboxBackend } from '../../../../lib/env/sandbox/sandbox.js';

export const toolsBackend = process.env.SWERL_TOOLS_BACKEND === 'docker' ? 'docker' : 'local';

/** Files (text or bytes) and folders, as tap's t.testdir() takes them. */
export interface FixtureFiles {
  [entry: string]: string | Buffer | FixtureFiles;
}

export interface FixtureTest {
  testdir(fixture?: FixtureFiles): string;
  teardown(fn: () => void | Promise<void>): void;
}

/** `count` lines `line 1`, `line 2`, ..., each ending in a newline. */
export function numberedLines(count: number, word = 'line'): string {
  return Array.from({ length: count }, (_, i) => `${word} ${i + 1}\n`).join('');
}

/** The fixture repository most tests start from. */
export function fixtureRepo(): FixtureFiles {
  return {
    'README.md': '# Demo\nA small fixture repository.\n',
    'data.bin': Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x00, 0x01, 0x02, 0x0a, 0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0x0a]),
    '.env': 'SECRET=1\n',
    '.hidden': { 'h.py': 'hidden = "needle"\n' },
    src: {
      'app.py': numberedLines(12),
      'notes.txt': 'needle in a haystack\nno match here\nanother needle\n',
    },
    pkg: {
      '__init__.py': '',
      'util.py': 'def helper():\n    return "needle"\n',
      deep: { inner: { 'x.py': 'x = "needle"\n' } },
    },
  };
}

/**
 * A sandbox created from `files` (default: fixtureRepo()), destroyed at teardown. Each call
 * uses its own test folder, so call it once per test.
 */
export async function sandboxWith(
  t: FixtureTest,
  files: FixtureFiles = fixtureRepo(),
  options: Omit<LocalSandboxOptions, 'root'> = {},
): Promise<Sandbox> {
  const dir = t.testdir({ repo: files, sandboxes: {} });
  let backend: SandboxBackend;
  if (toolsBackend === 'docker') {
    const { DockerSandboxBackend } = await import('../../../../lib/env/sandbox/docker.js');
    const { startPodmanService } = await import('../../../support/podman.js');
    const socketPath = await startPodmanService(t);
    backend = new DockerSandboxBackend({ socketPath, ...(options.limits ? { limits: options.limits } : {}) });
  } else {
    backend = new LocalSandboxBackend({ ...options, root: `${dir}/sandboxes` });
  }
  const sandbox = await backend.create({ repoDir: `${dir}/repo` });
  t.teardown(() => sandbox.destroy());
  return sandbox;
}
