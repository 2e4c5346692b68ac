/**
 * A process that makes local sandboxes on SWERL_CHILD_ROOT, for the tests of a signal in the
 * middle of a create.
 *
 * Default: makes and destroys sandboxes without pause, four at a time, until it is killed (a
 * kill -9 at any moment of a create leaves nothing the next run's reaper cannot remove, and a
 * SIGTERM leaves nothing at all). Prints "created" after each sandbox is made.
 *
 * SWERL_CHILD_MODE=survive: keeps a SIGTERM handler of its own (the process lives on), sends
 * itself SIGTERM just after a create of SWERL_CHILD_REPO begins, then prints one JSON line:
 * how that create ended, what the root held after it, and whether a create after the signal
 * works.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { LocalSandboxBackend } from '../../lib/env/sandbox/local.js';

const root = process.env.SWERL_CHILD_ROOT!;
const backend = new LocalSandboxBackend({ root, label: 'killed-mid-create' });

if (process.env.SWERL_CHILD_MODE === 'survive') {
  process.on('SIGTERM', () => undefined);
  await (await backend.create()).destroy();  // the backend's first start (reap, bwrap probe) out of the way
  const signalled = backend.create({ repoDir: process.env.SWERL_CHILD_REPO! });
  process.kill(process.pid, 'SIGTERM');
  const outcome = await signalled.then(
    async (sandbox) => {
      await sandbox.destroy();
      return { made: true };
    },
    (error: Error & { code?: string }) => ({ made: false, code: error.code, message: error.message }),
  );
  const left = readdirSync(root).filter((name) => name !== '.uids');
  const claims = readdirSync(path.join(root, '.uids'));
  const after = await backend.create();
  const afterWorks = (await after.exec('echo alive')).output.trim() === 'alive';
  await after.destroy();
  process.stdout.write(`${JSON.stringify({ outcome, left, claims, afterWorks })}\n`);
} else {
  async function loop(): Promise<never> {
    for (;;) {
      const sandbox = await backend.create();
      process.stdout.write('created\n');
      await sandbox.destroy();
    }
  }
  await Promise.all([loop(), loop(), loop(), loop()]);
}
