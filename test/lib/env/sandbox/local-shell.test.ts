/**
 * The local sandbox's persistent shell (SandboxSpec.persistentShell, local-shell.ts): the same
 * commands give the same results as a bwrap each, nothing of one command reaches the next, the
 * containment suite holds, and what a command does to the shell costs it nothing but a restart.
 */
import { readFileSync, readdirSync } from 'node:fs';

import t from 'tap';

import { LocalSandboxBackend } from '../../../../lib/env/sandbox/local.js';
import type { Sandbox, SandboxBackend } from '../../../../lib/env/sandbox/sandbox.js';
import { containmentSuite } from './containment.js';
import { localBounds } from '../../../../lib/env/sandbox/local-bounds.js';

const root = t.testdir({ root: {} }) + '/root';

/** The backend, every sandbox of it made with a persistent shell. */
function withShell(backend: LocalSandboxBackend): SandboxBackend {
  const wrapped = Object.create(backend) as LocalSandboxBackend;
  wrapped.create = (spec = {}) => backend.create({ ...spec, persistentShell: true });
  return wrapped;
}

function processesOf(label: string): number {
  let count = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').includes(`SWERL_SANDBOX=${label}-`)) count++;
    } catch {
      // exited, or not ours to read
    }
  }
  return count;
}

/** The start time of the sandbox's pid 1 (its bwrap): the same while one shell serves the commands. */
async function bwrapStart(sandbox: Sandbox): Promise<string> {
  return (await sandbox.exec('cut -d " " -f 22 /proc/1/stat')).stdout.toString().trim();
}

t.test('the same results as a bwrap a command, from one shell', async (t) => {
  const repo = t.testdir({ 'a.txt': 'alpha\n', dir: { 'b.txt': 'beta\n' } });
  const backend = new LocalSandboxBackend({ root });
  const alone = await backend.create({ repoDir: repo });
  const shell = await backend.create({ repoDir: repo, persistentShell: true });
  t.teardown(() => Promise.all([alone.destroy(), shell.destroy()]));
  const commands: [string, Parameters<Sandbox['exec']>[1]][] = [
    ['pwd; cat a.txt; echo oops >&2; exit 3', {}],
    ['pwd', { cwd: '/testbed/dir' }],
    ['echo "$GREETING"; env | sort', { env: { GREETING: 'hi there' } }],
    ['wc -c', {}],
    ['tr a-z A-Z', { stdin: 'shout' }],
    ['od -An -tx1', { stdin: Buffer.from([0, 255, 10, 13, 27, 128]) }],
    ['kill -9 $$', {}],
    ['echo "$0" "$#"; ls /testbed', {}],
    ['exit 0', { cwd: '/no/such/folder' }],
  ];
  for (const [command, options] of commands) {
    const [a, b] = [await alone.exec(command, options), await shell.exec(command, options)];
    const name = `${command} ${JSON.stringify(options)}`;
    t.equal(b.exitCode, a.exitCode, `${name}: exit code`);
    if (!(options?.cwd ?? '').startsWith('/no/')) {
      t.equal(b.stdout.toString().replace(new RegExp(shell.id, 'g'), 'ID'), a.stdout.toString().replace(new RegExp(alone.id, 'g'), 'ID'), `${name}: stdout`);
      t.equal(b.stderr.toString(), a.stderr.toString(), `${name}: stderr`);
    }
  }
  t.not((await shell.exec('exit 0', { cwd: '/no/such/folder' })).exitCode, 0, 'a folder that does not exist fails the command');

  const umask = process.umask(0o077);
  try {
    const r = await shell.exec('cat; echo " and the script"', { stdin: 'the input' });
    t.equal(r.output, 'the input and the script\n', 'a umask of 077 here keeps the script and its input readable there (as root: another uid)');
  } finally {
    process.umask(umask);
  }

  await shell.writeFile('new/deep/file.txt', 'written\n');
  t.equal((await shell.readFile('/testbed/new/deep/file.txt')).toString(), 'written\n', 'write then read');
  const binary = Buffer.from([0, 255, 10, 13, 27, 128]);
  await shell.writeFile('bin.dat', binary);
  t.same(await shell.readFile('bin.dat'), binary, 'bytes survive a round trip');

  const first = await bwrapStart(shell);
  for (let i = 0; i < 5; i++) await shell.exec('true');
  t.equal(await bwrapStart(shell), first, 'one bwrap served every command');
  t.not(await bwrapStart(alone), await bwrapStart(alone), 'a bwrap each without the shell');
});

t.test('nothing of a command reaches the next: its folder, variables, processes', async (t) => {
  const repo = t.testdir({ 'a.txt': 'alpha\n' });
  const sandbox = await new LocalSandboxBackend({ root }).create({ repoDir: repo, persistentShell: true });
  t.teardown(() => sandbox.destroy());
  const r = await sandbox.exec('cd /tmp; export LEFT=1; LATER=2; sleep 300 & (setsid sleep 301 &); nohup sleep 302 >/dev/null 2>&1 & echo started');
  t.equal(r.output, 'started\n');
  t.equal(r.exitCode, 0, 'it ends when it exits: its background processes, killed, hold none of its output open');
  t.notOk(r.timedOut);
  t.equal((await sandbox.exec('pwd; echo "${LEFT-unset} ${LATER-unset}"')).output, '/testbed\nunset unset\n');
  const ps = await sandbox.exec('for p in /proc/[0-9]*; do cat $p/cmdline 2>/dev/null | tr "\\0" " "; echo; done');
  t.notMatch(ps.output, /sleep 30[012]/, 'no process the command started outlives it');
  t.match(ps.output, /while read/, 'the listing sees the shell itself (it lists processes)');
});

t.test('what a command does to the shell costs it a restart, never another command its result', async (t) => {
  const repo = t.testdir({ 'a.txt': 'alpha\n' });
  const label = `t-shell-${process.pid}`;
  const sandbox = await new LocalSandboxBackend({ root }).create({ repoDir: repo, persistentShell: true, label });

  const first = await bwrapStart(sandbox);
  const timedOut = await sandbox.exec('echo before; sleep 30', { timeoutMs: 500 });
  t.equal(timedOut.exitCode, -1);
  t.ok(timedOut.timedOut);
  t.equal(timedOut.output, 'before\n', 'the output up to the timeout is kept');
  t.equal((await sandbox.exec('echo after')).output, 'after\n', 'the next command runs');
  const second = await bwrapStart(sandbox);
  t.not(second, first, 'in a new shell');

  const flood = await sandbox.exec('yes', { maxOutputBytes: 4096 });
  t.ok(flood.outputLimited);
  t.equal(flood.exitCode, 137, 'killed, as a bwrap of its own is');
  t.equal((await sandbox.exec('echo after the flood')).output, 'after the flood\n');

  const killer = await sandbox.exec('kill -9 -1; sleep 5; echo survived');
  t.equal(killer.exitCode, 137, 'killing every process it can reach kills its shell and itself');
  t.equal((await sandbox.exec('echo after the kill')).output, 'after the kill\n');

  // A command can write to the shell's requests through /proc: the name of its own script (the
  // only one there while it runs, where it may list the folder: not as root), names of none and
  // paths are passed over, so nothing runs twice.
  const forge = '{ ls /.swerl-io 2>/dev/null | grep -E "^[0-9a-f]{16}$"; echo 0123456789abcdef; echo ../../bin/sh; } > /proc/$PPID/fd/3';
  const forged = await sandbox.exec(`echo ran >> /tmp/runs; ${forge}; echo forged`);
  t.equal(forged.output, 'forged\n', 'the forged lines were written (no error)');
  t.equal((await sandbox.exec('echo next')).output, 'next\n', 'the next command gets its own output');
  t.equal((await sandbox.exec('cat /tmp/runs')).output, 'ran\n', 'the forged request ran nothing');

  const io = await sandbox.exec('touch /.swerl-io/x; rm -f /.swerl-io/o; test -p /.swerl-io/o && test -p /.swerl-io/e && test -p /.swerl-io/req && echo fifos');
  t.match(io.stderr.toString(), /Read-only file system/, 'the shell\'s folder is read-only inside');
  t.equal(io.stdout.toString(), 'fifos\n', 'its FIFOs are all there');

  // Two commands at once: the second gets a bwrap of its own; neither sees the other's output.
  const [slow, quick] = await Promise.all([sandbox.exec('sleep 0.5; echo slow'), sandbox.exec('echo quick')]);
  t.equal(slow.output, 'slow\n');
  t.equal(quick.output, 'quick\n');

  t.ok(processesOf(label) > 0, 'the shell lives between commands');
  await sandbox.destroy();
  t.equal(processesOf(label), 0, 'destroy() leaves no process of the sandbox');
});

containmentSuite(t, {
  name: 'local with a persistent shell',
  make: async (limits) => withShell(new LocalSandboxBackend({ root, ...(limits ? { limits } : {}) })),
  childSpec: { backend: 'local', options: { root }, spec: { persistentShell: true } },
  leftovers: async (label) => {
    const named = readdirSync(root).filter((d) => d.startsWith(`${label}-`));
    return { sandboxes: named.length, processes: processesOf(label) };
  },
  wholeSandbox: { disk: localBounds().disk !== 'none', memory: localBounds().memory !== 'rlimit' },
});
