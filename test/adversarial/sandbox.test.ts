/**
 * Resource attacks from inside a local (bwrap) sandbox, as a model's commands would make them:
 * fill the disk, fill /dev and /dev/shm, hold more memory across processes than the sandbox
 * has, open nested user namespaces, write outside the work tree. Each attack must be
 * contained (a case's 'clean-error': the attack failed where it should) within its bound; one
 * that gets through is a crash. The docker backend's equivalents run in the containment suite.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import t from 'tap';

import { describeBounds, localBounds } from '../../lib/env/sandbox/local-bounds.js';
import { LocalSandboxBackend } from '../../lib/env/sandbox/local.js';
import { AdversarialTally, type Outcome } from '../support/adversarial.js';

const BOUND_MS = 30_000;

t.test('resource attacks from inside a local sandbox', async (t) => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'swerl-adversarial-sandbox-'));
  const repo = mkdtempSync(path.join(os.tmpdir(), 'swerl-adversarial-repo-'));
  writeFileSync(path.join(repo, 'app.py'), 'print(1)\n');
  t.teardown(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(repo, { recursive: true, force: true });
  });
  const bounds = localBounds();
  t.comment(`this machine: ${describeBounds(bounds)}`);
  const limits = { diskBytes: 64 * 1024 ** 2, shmBytes: 8 * 1024 ** 2, memoryBytes: 256 * 1024 ** 2, maxFileBytes: 1024 ** 3 };
  const backend = new LocalSandboxBackend({ root, limits });
  const sandbox = await backend.create({ repoDir: repo, label: 'adversarial' });
  t.teardown(() => sandbox.destroy());
  // The attacks run in the sandbox's processes: the bound is a wall-clock hang guard.
  const tally = new AdversarialTally('sandbox', { clock: 'wall' });

  /** Runs `command`; contained when `contained(output)` holds. */
  const attack = (name: string, command: string, contained: (output: string) => boolean, applies = true) =>
    applies && tally.case(name, async (): Promise<Outcome> => {
      const r = await sandbox.exec(command, { timeoutMs: 20_000 });
      if (!contained(r.output)) throw new Error(`not contained: ${r.output.slice(-500)}`);
      return 'clean-error';
    }, BOUND_MS);

  const sizeOf = (output: string) => Number(/(\d+)\s*$/.exec(output.trim())?.[1] ?? NaN);
  await attack('fill the work tree (240 MB)', 'for i in 1 2 3 4 5 6; do head -c 40000000 /dev/zero > f$i || break; done 2>&1; du -cb f* | tail -1 | cut -f1',
    (o) => /No space left/.test(o) && sizeOf(o) <= limits.diskBytes, bounds.disk !== 'none');
  await attack('fill /tmp (240 MB)', 'rm -f f*; for i in 1 2 3 4 5 6; do head -c 40000000 /dev/zero > /tmp/f$i || break; done 2>&1; du -cb /tmp | tail -1 | cut -f1',
    (o) => /No space left/.test(o) && sizeOf(o) <= limits.diskBytes, bounds.disk !== 'none');
  await attack('a million small files', 'rm -f /tmp/f*; mkdir many && cd many && i=0; while [ $i -lt 1000000 ]; do : > $i || break; i=$((i+1)); done 2>&1 | tail -1; echo $i',
    (o) => /No space left|Disk quota/.test(o), bounds.disk !== 'none');
  await attack('write a file in /dev', 'rm -rf many; head -c 100000000 /dev/zero > /dev/fill 2>&1; echo done', (o) => /Read-only file system/.test(o));
  await attack('fill /dev/shm (100 MB)', 'head -c 100000000 /dev/zero > /dev/shm/fill 2>&1; stat -c %s /dev/shm/fill', (o) => sizeOf(o) <= limits.shmBytes);
  await attack('4 x 100 MB resident against 256 MB', `for i in 1 2 3 4; do python3 -c "import time; b = b'x' * (100 * 2**20); time.sleep(3); print('held')" & done 2>&1; wait`,
    (o) => (o.match(/held/g) ?? []).length < 4, bounds.memory !== 'rlimit');
  await attack('one process past memoryBytes', `python3 -c "b = b'x' * (400 * 2**20); print('held')" 2>&1`, (o) => !/held/.test(o));
  await attack('a nested user namespace (unshare -U -r)', 'unshare -U -r id -u 2>&1; echo "exit $?"', (o) => /exit [1-9]/.test(o) && !/^0$/m.test(o));
  await attack('a nested bwrap', 'bwrap --unshare-user --ro-bind / / id -u 2>&1; echo "exit $?"', (o) => /exit [1-9]/.test(o));
  await attack('write to the host root', 'touch /evil /usr/evil /etc/evil 2>&1; echo done', (o) => (o.match(/Read-only file system|Permission denied/g) ?? []).length === 3);

  t.ok(tally.results.length >= 6, `${tally.results.length} attacks ran on this machine`);
  tally.report(t);
});
