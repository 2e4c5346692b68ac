/** Sandbox backends by name (the docker backend and its client load only when asked for). */
import { LocalSandboxBackend } from './local.js';
import { checkBackendName, type DockerSandboxOptions, type LocalSandboxOptions } from './options.js';
import type { SandboxBackend } from './sandbox.js';

export async function createSandboxBackend(name: string, options: LocalSandboxOptions | DockerSandboxOptions = {}): Promise<SandboxBackend> {
  if (checkBackendName(name, 'sandbox') === 'local') return new LocalSandboxBackend(options as LocalSandboxOptions);
  const { DockerSandboxBackend } = await import('./docker.js');
  return new DockerSandboxBackend(options as DockerSandboxOptions);
}
