/**
 * A swerl folder's base commit, made once per process and task instead of in every sandbox.
 *
 * A swerl folder carries no .git, so each sandbox of its task used to run `git init`, `add -A`,
 * `commit` and `rev-parse` before anything else: four git processes and a sandbox command, in
 * both sandboxes of every episode (the agent's and the grader's). Here the repository is copied
 * once to a scratch folder on the host, its .gitignore written, and committed there (the host's
 * git configuration left out, a fixed date: the same files give the same commit anywhere); its
 * .git and .gitignore are kept in memory as tar entries that each sandbox of the task is made
 * with (SandboxSpec.overlay). Such a sandbox starts at the base commit with no command run in it.
 *
 * The task's files only are trusted here (a dataset's, not a policy's): nothing a sandbox wrote
 * ever reaches this copy. A repository too large to hold in memory keeps the old way.
 */
import { createHash } from 'node:crypto';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { GIT } from './git.js';
import { SCRATCH } from './sandbox/local-bounds.js';
import { OWNER_TAG } from './sandbox/owner.js';
import { shellQuote } from './sandbox/sandbox.js';
import { runToCompletion } from './sandbox/spawner.js';
import type { TarEntry } from './sandbox/tar.js';

export interface BaseSnapshot {
  /** The base commit's id. */
  commit: string;
  /** .git and .gitignore, to lay over the repository's copy. */
  overlay: readonly TarEntry[];
  bytes: number;
}

/** Repositories above this many bytes of files (or entries) are committed in their sandboxes, as before. */
const MAX_REPO_BYTES = 16 * 1024 ** 2;
const MAX_REPO_ENTRIES = 20_000;
/** What the snapshots of one process may hold, least recently used dropped first. */
const MAX_CACHED_BYTES = 256 * 1024 ** 2;
const DATE = '2000-01-01T00:00:00Z';

/** Snapshots by repository and contents, least recently used first; and their bytes. */
const cache = new Map<string, Promise<BaseSnapshot | null>>();
const sizes = new Map<string, number>();
let cachedBytes = 0;

/**
 * The folder's entries by path, type, mode, size and mtime: a changed file gives another key.
 * Asynchronous, each folder's entries stated together: a sandbox is made for every episode,
 * and a walk of thousands of files must not hold the event loop (the model's other episodes).
 */
async function fingerprint(repoDir: string): Promise<string | null> {
  const hash = createHash('sha256');
  let bytes = 0;
  let entries = 0;
  const walk = async (rel: string): Promise<boolean> => {
    const names = (await fs.readdir(path.join(repoDir, rel))).sort();
    if ((entries += names.length) > MAX_REPO_ENTRIES) return false;
    const children = names.map((name) => (rel ? `${rel}/${name}` : name));
    const stats = await Promise.all(children.map((child) => fs.lstat(path.join(repoDir, child))));
    for (const [i, child] of children.entries()) {
      const stat = stats[i]!;
      if ((bytes += stat.size) > MAX_REPO_BYTES) return false;
      hash.update(`${child}\0${stat.mode}\0${stat.size}\0${stat.mtimeMs}\n`);
      if (stat.isDirectory() && !(await walk(child))) return false;
    }
    return true;
  };
  return (await walk('')) ? hash.digest('hex') : null;
}

/** The tar entries of `dir` (folders first, then their contents), named under `prefix`. */
function entriesOf(dir: string, prefix: string): TarEntry[] {
  const out: TarEntry[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    const name = `${prefix}/${entry.name}`;
    const mode = lstatSync(full).mode & 0o7777;
    if (entry.isDirectory()) out.push({ name: `${name}/`, type: 'dir', mode }, ...entriesOf(full, name));
    else if (entry.isSymbolicLink()) out.push({ name, type: 'symlink', linkname: readlinkSync(full) });
    else out.push({ name, data: readFileSync(full), mode });
  }
  return out;
}

async function make(repoDir: string, gitignore: string | undefined): Promise<BaseSnapshot | null> {
  // Owner-tagged: a run killed here leaves it to the next local backend's reap.
  const scratch = mkdtempSync(path.join(os.tmpdir(), `${SCRATCH}${OWNER_TAG}-`));
  try {
    const work = path.join(scratch, 'w');
    const script = [
      `export HOME=${shellQuote(scratch)} GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_AUTHOR_DATE=${DATE} GIT_COMMITTER_DATE=${DATE} LC_ALL=C`,
      // Owned by this user (not -a): git refuses a repository another user owns.
      `cp -RP --preserve=mode,timestamps -- ${shellQuote(`${repoDir}/.`)} ${shellQuote(work)}`,
      `cd ${shellQuote(work)}`,
      ...(gitignore === undefined ? [] : ['cat > .gitignore']),
      // git's own template (hooks/, info/exclude), as a commit made in the sandbox has it.
      'git init -q',
      `${GIT} add -A`,
      `${GIT} commit -q --no-verify --allow-empty -m base`,
      'git rev-parse HEAD > ../commit',
    ].join(' && ');
    const { code } = await runToCompletion('sh', ['-c', script], gitignore ?? '');
    if (code !== 0) return null;
    const commit = readFileSync(path.join(scratch, 'commit'), 'utf8').trim();
    const overlay: TarEntry[] = [
      { name: '.git/', type: 'dir', mode: 0o755 },
      ...entriesOf(path.join(work, '.git'), '.git'),
      ...(gitignore === undefined ? [] : [{ name: '.gitignore', data: Buffer.from(gitignore), mode: 0o644 }]),
    ];
    const bytes = overlay.reduce((sum, e) => sum + 512 + (e.data?.length ?? 0), 0);
    return { commit, overlay, bytes };
  } catch {
    return null;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * The base commit of a swerl folder's repository (no .git of its own) and what lays it into a
 * sandbox; null when the repository is too large to hold, or git failed here (the sandbox then
 * commits it itself, as prepareRepository does for any work tree without a HEAD).
 */
export async function baseSnapshot(repoDir: string, gitignore: string | undefined): Promise<BaseSnapshot | null> {
  const print = await fingerprint(repoDir);
  if (print === null) return null;
  const key = createHash('sha256').update(`${path.resolve(repoDir)}\0${print}\0${gitignore ?? '\u0000none'}`).digest('hex');
  let found = cache.get(key);
  if (found) {
    cache.delete(key);
    cache.set(key, found);
    return found;
  }
  found = make(repoDir, gitignore);
  cache.set(key, found);
  void found.then((snapshot) => {
    if (cache.get(key) !== found) return;
    if (snapshot === null) {
      cache.delete(key); // made again next time
      return;
    }
    sizes.set(key, snapshot.bytes);
    cachedBytes += snapshot.bytes;
    for (const old of cache.keys()) {
      if (cachedBytes <= MAX_CACHED_BYTES) break;
      if (old === key || !sizes.has(old)) continue;
      cachedBytes -= sizes.get(old)!;
      sizes.delete(old);
      cache.delete(old);
    }
  });
  return found;
}
