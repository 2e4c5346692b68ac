/** A sandbox backend that records the text of every command run in the sandboxes it makes. */
import type { SandboxBackend } from '../../lib/env/sandbox/sandbox.js';

export function countingBackend<B extends SandboxBackend>(inner: B): { backend: B; commands: string[] } {
  const commands: string[] = [];
  const counting = Object.create(inner) as B;
  counting.create = async (spec) => {
    const sandbox = await inner.create(spec);
    const exec = sandbox.exec.bind(sandbox);
    sandbox.exec = (command, options) => {
      commands.push(command);
      return exec(command, options);
    };
    return sandbox;
  };
  return { backend: counting, commands };
}
