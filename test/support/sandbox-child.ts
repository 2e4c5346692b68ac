/**
 * A separate process with a sandbox backend, for the tests of what happens when a run is
 * interrupted (SIGINT, SIGTERM) or killed (SIGKILL).
 *
 * Default: holds a sandbox with a running command; prints "ready <id>" once the command runs,
 * then waits to be signalled.
 *
 * mode 'signal-mid-create': keeps a SIGTERM handler of its own (the process lives on), sends
 * itself SIGTERM just after a create of `repo` begins, then prints one JSON line: how that
 * create ended and whether a create after the signal works.
 */
import { createSandboxBackend } from '../../lib/env/sandbox/backends.js';

const { backend: name, options, label, mode, repo } = JSON.parse(process.env.SWERL_CHILD_SANDBOX!) as {
  backend: string;
  options: Record<string, unknown>;
  label: string;
  mode?: 'signal-mid-create';
  repo?: string;
};
const backend = await createSandboxBackend(name, options);

if (mode === 'signal-mid-create') {
  process.on('SIGTERM', () => undefined);
  await (await backend.create({ label })).destroy(); // the backend's first start (reap, probes) out of the way
  const signalled = backend.create({ label, repoDir: repo! });
  process.kill(process.pid, 'SIGTERM');
  const outcome = await signalled.then(
    async (sandbox) => {
      await sandbox.destroy();
      return { made: true };
    },
    (error: Error & { code?: string }) => ({ made: false, code: error.code, message: error.message }),
  );
  const after = await backend.create({ label });
  const afterWorks = (await after.exec('echo alive')).output.trim() === 'alive';
  await after.destroy();
  process.stdout.write(`${JSON.stringify({ outcome, afterWorks })}\n`);
} else {
  const sandbox = await backend.create({ label });
  void sandbox.exec('sleep 1000 & sleep 1000', { timeoutMs: 3_600_000 });
  // Give the command time to start before saying so.
  await new Promise((resolve) => setTimeout(resolve, 500));
  process.stdout.write(`ready ${sandbox.id}\n`);
  setInterval(() => undefined, 1000);
}
