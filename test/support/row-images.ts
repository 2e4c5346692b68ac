/**
 * Local images laid out like SWE-bench's (`sweb.eval.x86_64.*`), for rows run from images on the
 * docker backend where no registry answers: the row's repository at /testbed (a git work tree
 * at its base commit), conda's paths (/opt/miniconda3/bin/activate, the `testbed` env's bin
 * first on PATH, as SWE-bench's images set it), and nothing else of theirs. The toolchain is the
 * host's: /usr comes in as a read-only bind (docker's readOnlyBinds), and the env's python and
 * pytest are links into it; the editable install SWE-bench's image makes of the repository is
 * PYTHONPATH here. Built through the Docker API from one tar layer (no registry, no Dockerfile).
 */
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import type Docker from 'dockerode';

import { imageArchive, loadImageArchive } from '../../lib/env/sandbox/docker-image.js';
import { hostLayout } from '../../lib/env/sandbox/host-layout.js';
import { SWE_BENCH_IMAGE_PATH } from '../../lib/env/tasks/swe-bench.js';
import type { TarEntry } from '../../lib/env/sandbox/tar.js';


function treeEntries(root: string, prefix: string): TarEntry[] {
  const entries: TarEntry[] = [];
  const walk = (dir: string, rel: string) => {
    for (const name of readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      const inTar = `${rel}/${name}`;
      const stat = lstatSync(full);
      if (stat.isSymbolicLink()) entries.push({ name: inTar, type: 'symlink', linkname: readlinkSync(full) });
      else if (stat.isDirectory()) {
        entries.push({ name: `${inTar}/`, type: 'dir', mode: 0o755 });
        walk(full, inTar);
      } else entries.push({ name: inTar, data: readFileSync(full), mode: stat.mode & 0o111 ? 0o755 : 0o644 });
    }
  };
  entries.push({ name: `${prefix}/`, type: 'dir', mode: 0o755 });
  walk(root, prefix);
  return entries;
}

/**
 * Builds `image` with the row's repository at its base commit (branch `instanceId` of the
 * shallow clone `clone`) and loads it into the Docker host. `pythonPath`: where the package
 * imports from inside /testbed (marshmallow: src).
 */
export async function buildSweBenchLayoutImage(docker: Docker, image: string, clone: string, instanceId: string, pythonPath: string): Promise<void> {
  const work = mkdtempSync(path.join(os.tmpdir(), 'swerl-row-image-'));
  try {
    const testbed = path.join(work, 'testbed');
    execFileSync('git', ['clone', '-q', '--branch', instanceId, '--single-branch', `file://${path.resolve(clone)}`, testbed], { stdio: 'ignore' });
    const { folders, links } = hostLayout();
    const dirs = ['dev', 'etc', 'home', 'opt', 'opt/miniconda3', 'opt/miniconda3/bin', 'opt/miniconda3/envs', 'opt/miniconda3/envs/testbed', 'opt/miniconda3/envs/testbed/bin', 'proc', 'root', 'run', 'sys', 'usr', 'var', ...folders.map((f) => f.slice(1))];
    const entries: TarEntry[] = [
      ...[...new Set(dirs)].map((d): TarEntry => ({ name: `${d}/`, type: 'dir', mode: d === 'root' ? 0o700 : 0o755 })),
      { name: 'tmp/', type: 'dir', mode: 0o1777 },
      ...links.map((l): TarEntry => ({ name: l.path.slice(1), type: 'symlink', linkname: l.target })),
      // conda's activation, as the harness's eval scripts source it; the env is on PATH already.
      { name: 'opt/miniconda3/bin/activate', data: Buffer.from('# swerl test image: the testbed env is first on PATH already\n'), mode: 0o644 },
      { name: 'opt/miniconda3/envs/testbed/bin/python', type: 'symlink', linkname: '/usr/bin/python3' },
      { name: 'opt/miniconda3/envs/testbed/bin/python3', type: 'symlink', linkname: '/usr/bin/python3' },
      { name: 'opt/miniconda3/envs/testbed/bin/pytest', type: 'symlink', linkname: '/usr/bin/pytest-3' },
      ...treeEntries(testbed, 'testbed'),
    ];
    const { archive } = imageArchive(image, entries, { Env: [`PATH=${SWE_BENCH_IMAGE_PATH}`, `PYTHONPATH=/testbed/${pythonPath}`], WorkingDir: '/testbed', Cmd: ['sh'] });
    await loadImageArchive(docker, archive);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
