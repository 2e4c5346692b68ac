/**
 * A process that makes local sandboxes on SWERL_CHILD_ROOT, for the tests of a signal at a
 * random moment of a create: makes and destroys sandboxes without pause, four at a time, until
 * it is killed (a kill -9 at any moment of a create leaves nothing the next run's reaper cannot
 * remove, and a SIGTERM leaves nothing at all). Prints "created" after each sandbox is made.
 * (A signal in a process that lives on after it: sandbox-child.ts, the containment suite.)
 */
import { LocalSandboxBackend } from '../../lib/env/sandbox/local.js';

const root = process.env.SWERL_CHILD_ROOT!;
const backend = new LocalSandboxBackend({ root, label: 'killed-mid-create' });

async function loop(): Promise<never> {
  for (;;) {
    const sandbox = await backend.create();
    process.stdout.write('created\n');
    await sandbox.destroy();
  }
}
await Promise.all([loop(), loop(), loop(), loop()]);
