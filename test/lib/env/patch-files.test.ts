/** The files of a diff, read from what git itself writes (names with spaces, non-ASCII, renames, binary, modes). */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import { patchFiles } from '../../../lib/env/patch-files.js';

t.test('git diff --binary of every kind of change', async (t) => {
  const dir = t.testdir({ 'keep.py': 'a\n', 'old name.py': 'x\ny\nz\n', 'gone.py': 'bye\n', 'script.sh': 'echo\n', 'blob.bin': Buffer.from([0, 1, 2, 3]) });
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'core.quotePath=true', ...args], { cwd: dir, encoding: 'utf8' });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'base');
  writeFileSync(path.join(dir, 'keep.py'), 'b\n');
  git('mv', 'old name.py', 'new name.py');
  git('rm', '-q', 'gone.py');
  writeFileSync(path.join(dir, 'tést ü.py'), 'new\n');
  writeFileSync(path.join(dir, 'with space.py'), '');
  writeFileSync(path.join(dir, 'blob.bin'), Buffer.from([9, 9, 0, 1]));
  execFileSync('chmod', ['+x', path.join(dir, 'script.sh')]);
  git('add', '-A');
  const diff = git('diff', '--cached', '--binary', '-M', 'HEAD');
  const files = patchFiles(diff);
  const byNew = Object.fromEntries(files.map((f) => [f.newPath ?? `deleted:${f.oldPath}`, f.oldPath]));
  t.same(byNew, {
    'blob.bin': 'blob.bin',
    'deleted:gone.py': 'gone.py',
    'keep.py': 'keep.py',
    'new name.py': 'old name.py',
    'script.sh': 'script.sh',
    'tést ü.py': null,
    'with space.py': null,
  }, 'paths as they are, renames with their old name, added and deleted files');
  t.equal(files.length, 7);
  t.throws(() => patchFiles('diff --git what is this\n', 'row.test_patch'), { code: 'ERR_SWERL_INVALID_ARG', message: /^row\.test_patch has a file header swerl cannot read/ });
});
