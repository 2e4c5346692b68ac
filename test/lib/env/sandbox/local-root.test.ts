/**
 * The local backend's sandbox root: each user's own by default, and a root this user cannot
 * use refused with the fix when the backend is created. The other user is real: as root, the
 * child runs as nobody (uid 65534) through setpriv.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import t, { type Test } from 'tap';

import { LocalSandboxBackend, defaultSandboxRoot } from '../../../../lib/env/sandbox/local.js';
import { ROOT, typescriptExecArgv } from '../../../support/child-process.js';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'local-root-child.ts');
const NOBODY = 65534;
const IS_ROOT = process.getuid!() === 0;
const hasSetpriv = spawnSync('setpriv', ['--version']).status === 0;
const asNobody = !IS_ROOT ? 'needs root (to run a child as another uid)' : !hasSetpriv ? 'needs setpriv (util-linux)' : false;

/** A tmpdir shared by every user, as /tmp is (1777), removed at the end. */
function sharedTmp(t: Test): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'swerl-root-test-'));
  chmodSync(dir, 0o1777);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs `code` with TMPDIR and SWERL_SANDBOX_ROOT set as given (undefined: unset). */
function withEnv<T>(env: { TMPDIR?: string; SWERL_SANDBOX_ROOT?: string }, code: () => T): T {
  const saved = { TMPDIR: process.env.TMPDIR, SWERL_SANDBOX_ROOT: process.env.SWERL_SANDBOX_ROOT };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
  if (!('SWERL_SANDBOX_ROOT' in env)) delete process.env.SWERL_SANDBOX_ROOT;
  try {
    return code();
  } finally {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
  }
}

/** The child (local-root-child.ts) as nobody, with this environment. */
function childAsNobody(env: Record<string, string>, options: object = {}, what = 'backend'): { ok: boolean; root?: string; uid?: string; code?: string; message?: string } {
  const { NODE_OPTIONS: _n, SWERL_SANDBOX_ROOT: _r, ...inherited } = process.env;
  const r = spawnSync(
    'setpriv',
    ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', '--', process.execPath, ...typescriptExecArgv(), CHILD, JSON.stringify(options), what],
    { cwd: ROOT, env: { ...inherited, HOME: '/nonexistent', ...env }, encoding: 'utf8', timeout: 120_000 },
  );
  const line = r.stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line);
  } catch {
    throw new Error(`the child printed no result (status ${r.status}): ${r.stdout}\n${r.stderr}`);
  }
}

const mode = (p: string) => lstatSync(p).mode & 0o7777;

t.test('the default root is this user\'s: <tmpdir>/swerl-sandboxes-<uid>, made private', (t) => {
  const tmp = sharedTmp(t);
  const backend = withEnv({ TMPDIR: tmp }, () => new LocalSandboxBackend());
  const expected = path.join(tmp, `swerl-sandboxes-${process.getuid!()}`);
  t.equal(withEnv({ TMPDIR: tmp }, defaultSandboxRoot), expected);
  t.equal(backend.options.root, expected);
  t.equal(lstatSync(expected).uid, process.getuid!());
  t.equal(mode(expected), IS_ROOT ? 0o711 : 0o700, 'made when the backend is created, 0700 (0711 as root: its sandboxes run as other uids)');
  chmodSync(expected, 0o777);
  withEnv({ TMPDIR: tmp }, () => new LocalSandboxBackend());
  t.equal(mode(expected), IS_ROOT ? 0o711 : 0o700, 'a loosened root of ours is tightened again');
  t.end();
});

t.test('a root that cannot be used is refused when the backend is created, naming SWERL_SANDBOX_ROOT', (t) => {
  const tmp = sharedTmp(t);
  const file = path.join(tmp, 'a-file');
  writeFileSync(file, '');
  t.throws(() => withEnv({ SWERL_SANDBOX_ROOT: file }, () => new LocalSandboxBackend()), {
    code: 'ERR_SWERL_SANDBOX',
    message: new RegExp(`^the sandbox root ${file} \\(SWERL_SANDBOX_ROOT\\) (is not a folder|cannot be created)\\b.*set SWERL_SANDBOX_ROOT to a folder of your own`),
  });
  t.throws(() => new LocalSandboxBackend({ root: path.join(file, 'below') }), {
    code: 'ERR_SWERL_SANDBOX',
    message: /\(the backend's root option\) cannot be created by this user \(uid \d+\): ENOTDIR\. .*SWERL_SANDBOX_ROOT=/,
  });
  // The default root is in the shared tmpdir: a symbolic link planted there is not followed.
  symlinkSync(tmp, path.join(tmp, `swerl-sandboxes-${process.getuid!()}`));
  t.throws(() => withEnv({ TMPDIR: tmp }, () => new LocalSandboxBackend()), {
    code: 'ERR_SWERL_SANDBOX',
    message: /^the default sandbox root \S+ is a symbolic link, not a folder\. Remove it, or set SWERL_SANDBOX_ROOT/,
  });
  t.end();
});

t.test('two users: root\'s default root does not block another user\'s, who runs a sandbox in its own', { skip: asNobody }, (t) => {
  const tmp = sharedTmp(t);
  const mine = withEnv({ TMPDIR: tmp }, () => new LocalSandboxBackend()).options.root;
  t.equal(mine, path.join(tmp, 'swerl-sandboxes-0'));
  // What used to happen: root's <tmpdir>/swerl-sandboxes, then everyone else's EACCES.
  mkdirSync(path.join(tmp, 'swerl-sandboxes'), { mode: 0o711 });
  const theirs = childAsNobody({ TMPDIR: tmp }, {}, 'sandbox');
  t.same(theirs, { ok: true, root: path.join(tmp, `swerl-sandboxes-${NOBODY}`), uid: String(NOBODY) }, 'nobody ran a sandbox under its own root');
  t.equal(lstatSync(theirs.root!).uid, NOBODY);
  t.equal(mode(theirs.root!), 0o700);
  t.end();
});

t.test('another user\'s root: refused with the fix, before any sandbox', { skip: asNobody }, (t) => {
  const tmp = sharedTmp(t);
  // SWERL_SANDBOX_ROOT at root's folder: nobody cannot write it.
  const rootOwned = path.join(tmp, 'roots');
  mkdirSync(rootOwned, { mode: 0o755 });
  const refused = childAsNobody({ TMPDIR: tmp, SWERL_SANDBOX_ROOT: rootOwned });
  t.equal(refused.code, 'ERR_SWERL_SANDBOX');
  t.match(refused.message, `the sandbox root ${rootOwned} (SWERL_SANDBOX_ROOT) belongs to uid 0, not to this user (uid ${NOBODY})`);
  t.match(refused.message, /set SWERL_SANDBOX_ROOT to a folder of your own \(e\.g\. SWERL_SANDBOX_ROOT=\$HOME\/\.cache\/swerl-sandboxes\)/);
  const below = childAsNobody({ TMPDIR: tmp, SWERL_SANDBOX_ROOT: path.join(rootOwned, 'sub') });
  t.match(below, { ok: false, code: 'ERR_SWERL_SANDBOX', message: /\(SWERL_SANDBOX_ROOT\) cannot be created by this user \(uid 65534\): EACCES\. Create it yourself, or set SWERL_SANDBOX_ROOT/ });
  // A group-writable root of someone else's is still not shared.
  chmodSync(rootOwned, 0o777);
  t.match(childAsNobody({ TMPDIR: tmp, SWERL_SANDBOX_ROOT: rootOwned }), { ok: false, message: /belongs to uid 0/ });
  // nobody's default root, made first by someone else (here root).
  mkdirSync(path.join(tmp, `swerl-sandboxes-${NOBODY}`), { mode: 0o777 });
  chmodSync(path.join(tmp, `swerl-sandboxes-${NOBODY}`), 0o777);
  t.match(childAsNobody({ TMPDIR: tmp }), {
    ok: false,
    code: 'ERR_SWERL_SANDBOX',
    message: /^the default sandbox root \S+swerl-sandboxes-65534 belongs to uid 0, not to this user \(uid 65534\); users cannot share a sandbox root\. Have its owner remove it, or set SWERL_SANDBOX_ROOT/,
  });
  t.end();
});

t.test('as root: a default root planted by another user is refused; a root named explicitly may be anyone\'s', { skip: asNobody }, (t) => {
  const tmp = sharedTmp(t);
  const planted = path.join(tmp, 'swerl-sandboxes-0');
  mkdirSync(planted);
  chownSync(planted, NOBODY, NOBODY);
  t.throws(() => withEnv({ TMPDIR: tmp }, () => new LocalSandboxBackend()), { code: 'ERR_SWERL_SANDBOX', message: /^the default sandbox root \S+ belongs to uid 65534, not to this user \(uid 0\)/ });
  const named = withEnv({ SWERL_SANDBOX_ROOT: planted }, () => new LocalSandboxBackend());
  t.equal(named.options.root, planted);
  t.equal(mode(planted) & 0o011, 0o011, 'the sandboxes\' uids can pass through it');
  t.end();
});
