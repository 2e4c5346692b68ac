/**
 * A test file's own folder for local sandboxes, and a backend rooted in it, removed at the end.
 * A folder of its own rather than t.testdir(): a second run of the same file (a full `tap` beside
 * it) shares the testdir, and would see, or wipe, this run's sandboxes.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import type { Test } from 'tap';

import { LocalSandboxBackend } from '../../lib/env/sandbox/local.js';

export function sandboxFolder(t: Test, prefix: string): { testdir: string; root: string; backend: LocalSandboxBackend } {
  const testdir = mkdtempSync(path.join(os.tmpdir(), prefix));
  chmodSync(testdir, 0o755); // sandboxes run under their own uid when swerl is root
  t.teardown(() => rmSync(testdir, { recursive: true, force: true }));
  const root = path.join(testdir, 'root');
  return { testdir, root, backend: new LocalSandboxBackend({ root }) };
}
