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
 *
 * mode 'churn': holds two sandboxes of `repo` while, for `seconds`, it makes and destroys
 * others two at a time and reaps (as every start does), checking after each round that the
 * held ones still work and hold what it wrote; then destroys them and prints one JSON line:
 * rounds, and every failure seen.
 */
import { createSandboxBackend } from '../../lib/env/sandbox/backends.js';
import type { SandboxSpec } from '../../lib/env/sandbox/sandbox.js';

const { backend: name, options, spec, label, mode, repo, seconds } = JSON.parse(process.env.SWERL_CHILD_SANDBOX!) as {
  backend: string;
  options: Record<string, unknown>;
  /** Laid under every create's own spec (e.g. a persistent shell). */
  spec?: SandboxSpec;
  label: string;
  mode?: 'signal-mid-create' | 'churn';
  repo?: string;
  seconds?: number;
};
const backend = await createSandboxBackend(name, options);

if (mode === 'signal-mid-create') {
  process.on('SIGTERM', () => undefined);
  await (await backend.create({ ...spec, label })).destroy(); // the backend's first start (reap, probes) out of the way
  const signalled = backend.create({ ...spec, label, repoDir: repo! });
  process.kill(process.pid, 'SIGTERM');
  const outcome = await signalled.then(
    async (sandbox) => {
      await sandbox.destroy();
      return { made: true };
    },
    (error: Error & { code?: string }) => ({ made: false, code: error.code, message: error.message }),
  );
  const after = await backend.create({ ...spec, label });
  const afterWorks = (await after.exec('echo alive')).output.trim() === 'alive';
  await after.destroy();
  process.stdout.write(`${JSON.stringify({ outcome, afterWorks })}\n`);
} else if (mode === 'churn') {
  const failures: string[] = [];
  const note = (what: string) => (error: unknown) => void failures.push(`${what}: ${(error as Error).message}`);
  const held = await Promise.all([0, 1].map(() => backend.create({ ...spec, label, repoDir: repo! })));
  await Promise.all(held.map((sandbox, i) => sandbox.writeFile('held.txt', `${sandbox.id} ${i}\n`)));
  const end = Date.now() + seconds! * 1000;
  let rounds = 0;
  // At least one round however slow the machine: the test counts rounds, not seconds.
  do {
    await Promise.all([0, 1].map(async () => {
      const sandbox = await backend.create({ ...spec, label, repoDir: repo! });
      const r = await sandbox.exec('ls >/dev/null && echo ok');
      if (r.output !== 'ok\n') failures.push(`a new sandbox answered ${JSON.stringify(r.output)}`);
      await sandbox.destroy();
    }).map((p) => p.catch(note('churn'))));
    await backend.reap().catch(note('reap'));
    for (const [i, sandbox] of held.entries()) {
      const r = await sandbox.exec('cat held.txt').catch((error: Error) => ({ output: `threw ${error.message}` }));
      if (r.output !== `${sandbox.id} ${i}\n`) failures.push(`held sandbox ${i} answered ${JSON.stringify(r.output)}`);
    }
    rounds++;
  } while (Date.now() < end);
  await Promise.all(held.map((sandbox) => sandbox.destroy().catch(note('destroy'))));
  process.stdout.write(`${JSON.stringify({ rounds, failures })}\n`);
} else {
  const sandbox = await backend.create({ ...spec, label });
  void sandbox.exec('sleep 1000 & sleep 1000', { timeoutMs: 3_600_000 });
  // Give the command time to start before saying so.
  await new Promise((resolve) => setTimeout(resolve, 500));
  process.stdout.write(`ready ${sandbox.id}\n`);
  setInterval(() => undefined, 1000);
}
