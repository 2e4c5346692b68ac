/**
 * The spawner's helpers: processes started through them report their pid, output and exit; a
 * program that cannot start is an error; and when the process that asked dies (SIGKILL, no
 * cleanup of its own), the helpers kill what they started and exit: nothing outlives it.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import t from 'tap';

import { runToCompletion, spawnProcess } from '../../../../lib/env/sandbox/spawner.js';

/** Running: it exists and is not a zombie (a killed process whose reaper is gone stays one). */
const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

t.test('output, pid and exit come back; a missing program is an error', async (t) => {
  let out = '';
  let err = '';
  const child = spawnProcess(
    { program: 'sh', args: ['-c', 'cat; echo oops >&2; exit 3'], env: { PATH: '/usr/bin:/bin' }, detached: true, stdin: 'hello from stdin' },
    { stdout: (d) => (out += d), stderr: (d) => (err += d) },
  );
  t.ok((await child.pid) > 1, 'a pid');
  t.same(await child.exit, { code: 3, signal: null });
  t.equal(out, 'hello from stdin');
  t.equal(err, 'oops\n');
  const killed = spawnProcess({ program: 'sleep', args: ['30'], env: { PATH: '/usr/bin:/bin' }, detached: true, stdin: '' }, { stdout: () => undefined, stderr: () => undefined });
  process.kill(-(await killed.pid), 'SIGKILL');
  t.same(await killed.exit, { code: null, signal: 'SIGKILL' }, 'its group killed from here');
  const missing = spawnProcess({ program: 'no-such-program-swerl', args: [], env: { PATH: '/usr/bin:/bin' }, detached: false, stdin: '' }, { stdout: () => undefined, stderr: () => undefined });
  await t.rejects(missing.exit, /ENOENT/);
  await t.rejects(missing.pid, /ENOENT/);
  t.same(await runToCompletion('sh', ['-c', 'echo bad >&2; exit 1']), { code: 1, stderr: 'bad\n' });
});

t.test('when the asking process is killed, what its helpers started dies with it', async (t) => {
  const spawner = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../../../lib/env/sandbox/spawner.ts');
  // A process that starts a long sleep (its own group) through a helper, says the pid, and waits.
  const script = `
    const { spawnProcess } = await import(${JSON.stringify(spawner)});
    const s = spawnProcess({ program: 'sleep', args: ['600'], env: { PATH: '/usr/bin:/bin' }, detached: true, stdin: '' }, { stdout() {}, stderr() {} });
    console.log(await s.pid);
    setInterval(() => {}, 1000);
  `;
  const parent = spawn(process.execPath, [...process.execArgv, '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const pid = await new Promise<number>((resolve, reject) => {
    let text = '';
    parent.stdout!.on('data', (d: Buffer) => {
      text += d;
      if (text.includes('\n')) resolve(Number(text.trim()));
    });
    parent.once('exit', (code) => reject(new Error(`the parent exited first (${code})`)));
  });
  t.ok(alive(pid), `sleep ${pid} runs`);
  parent.kill('SIGKILL');
  let gone = false;
  for (let i = 0; i < 600 && !gone; i++) {
    await new Promise((r) => setTimeout(r, 50));
    gone = !alive(pid);
  }
  t.ok(gone, 'the sleep is gone after its asker\'s SIGKILL');
});
