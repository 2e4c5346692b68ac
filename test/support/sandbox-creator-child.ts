/**
 * A process that makes and destroys local sandboxes without pause, four at a time, until it
 * is killed: for the tests that a kill -9 at any moment of a create leaves nothing the next
 * run's reaper cannot remove, and that a SIGTERM leaves nothing at all. Prints "created" after
 * each sandbox is made.
 */
import { LocalSandboxBackend } from '../../lib/env/sandbox/local.js';

const backend = new LocalSandboxBackend({ root: process.env.SWERL_CHILD_ROOT!, label: 'killed-mid-create' });
async function loop(): Promise<never> {
  for (;;) {
    const sandbox = await backend.create();
    process.stdout.write('created\n');
    await sandbox.destroy();
  }
}
await Promise.all([loop(), loop(), loop(), loop()]);
