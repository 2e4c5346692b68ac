/**
 * Repositories for dataset rows: a folder of git clones (`--repos DIR`, `tasks.repos`) where a
 * row's repository `owner/name` is `DIR/owner__name` or `DIR/owner/name` and holds the row's
 * base commit. A sandbox's work tree is that commit checked out with a `.git` of its own: a
 * shallow clone of exactly that commit (the agent sees a real repository and no future
 * history), made once per (repository, commit) on the host and copied into each sandbox.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { SwerlError } from '../errors.js';

/** A clone on the host and the commit a task's work tree starts at. */
export interface Checkout {
  /** The clone's folder (a work tree or a bare repository). */
  repository: string;
  /** The full commit id. */
  commit: string;
}

// Host-side git: no hooks, no fsmonitor, and clones owned by another user are fine (CI runs as
// root over a checkout it did not create).
const HOST_GIT = ['-c', 'safe.directory=*', '-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false'];

/** git's environment in `dir`: a folder inside some other repository (a repos folder within a project) is not taken for it. */
function hostGitEnv(dir: string): NodeJS.ProcessEnv {
  return { ...process.env, GIT_CEILING_DIRECTORIES: path.dirname(path.resolve(dir)) };
}

function git(args: string[], cwd?: string): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  const env = cwd ? hostGitEnv(cwd) : process.env;
  return new Promise((resolve) => {
    execFile('git', [...HOST_GIT, ...args], { cwd, env, encoding: 'utf8', maxBuffer: 16 * 1024 ** 2 }, (error, stdout, stderr) => {
      if (error && (error as NodeJS.ErrnoException).code === 'ENOENT') {
        resolve({ ok: false, stdout: '', stderr: 'git is not installed (apt-get install git)' });
      } else resolve({ ok: !error, stdout, stderr });
    });
  });
}

function taskError(id: string, message: string): SwerlError {
  return new SwerlError('ERR_SWERL_INVALID_TASK', `${id}: ${message}`);
}

/** The folders a repository `owner/name` may be in under `reposDir`, in the order tried. */
export function repositoryCandidates(reposDir: string, repo: string): string[] {
  const [owner, name] = repo.split('/');
  return [path.join(reposDir, `${owner}__${name}`), path.join(reposDir, owner!, name!)];
}

/** One `git cat-file --batch-check` per clone answers every commit query of a load. */
class CommitLookup {
  private readonly child: ChildProcess;
  private readonly waiting: ((line: string | null) => void)[] = [];
  private buffered = '';

  constructor(readonly dir: string) {
    this.child = spawn('git', [...HOST_GIT, 'cat-file', '--batch-check'], {
      cwd: dir,
      env: hostGitEnv(dir),
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      this.buffered += chunk;
      let newline: number;
      while ((newline = this.buffered.indexOf('\n')) >= 0) {
        const line = this.buffered.slice(0, newline);
        this.buffered = this.buffered.slice(newline + 1);
        this.waiting.shift()?.(line);
      }
    });
    const fail = () => this.waiting.splice(0).forEach((resolve) => resolve(null));
    this.child.on('close', fail);
    this.child.on('error', fail);
    this.child.stdin!.on('error', fail);
  }

  /** The full id of `commit` when the clone holds it, else null. */
  resolve(commit: string): Promise<string | null> {
    return new Promise((resolve) => {
      this.waiting.push((line) => {
        const m = line === null ? null : /^([0-9a-f]{40,64}) commit \d+$/.exec(line);
        resolve(m ? m[1]! : null);
      });
      this.child.stdin!.write(`${commit}^{commit}\n`);
    });
  }

  close(): void {
    this.child.stdin!.end();
  }
}

/**
 * Finds rows' clones under `reposDir` and checks they hold the rows' commits, with one git
 * process per clone however many rows there are. Errors name the task, the folders looked in
 * and the command that fixes it. close() ends the git processes.
 */
export class CheckoutFinder {
  private readonly clones = new Map<string, Promise<CommitLookup | string>>();

  constructor(readonly reposDir: string) {}

  async find(id: string, repo: string | undefined, commit: string | undefined): Promise<Checkout> {
    if (!repo || !/^[\w.-]+\/[\w.-]+$/.test(repo)) {
      throw taskError(id, `row.repo is ${JSON.stringify(repo)}; a repos folder needs "owner/name" to find the clone`);
    }
    if (!commit || !/^[0-9a-f]{7,64}$/.test(commit)) {
      throw taskError(id, `row.base_commit is ${JSON.stringify(commit)}; a repos folder needs the commit id the task starts at`);
    }
    if (!existsSync(this.reposDir)) throw taskError(id, `the repos folder ${this.reposDir} does not exist; give the folder your clones are in (--repos DIR, tasks.repos)`);
    let clone = this.clones.get(repo);
    if (!clone) {
      clone = this.open(repo);
      this.clones.set(repo, clone);
    }
    const lookup = await clone;
    if (typeof lookup === 'string') throw taskError(id, lookup);
    const full = await lookup.resolve(commit);
    if (!full) {
      throw taskError(id, `${lookup.dir} does not hold base_commit ${commit}; fetch it: git -C ${lookup.dir} fetch origin ${commit} (or clone ${repo} again)`);
    }
    return { repository: lookup.dir, commit: full };
  }

  /** The clone's lookup, or why there is none (a message). */
  private async open(repo: string): Promise<CommitLookup | string> {
    const candidates = repositoryCandidates(this.reposDir, repo);
    const found = candidates.find((dir) => existsSync(dir));
    if (!found) return `no clone of ${repo} in ${this.reposDir} (looked for ${candidates.join(' and ')}); clone it: git clone https://github.com/${repo} ${candidates[0]}`;
    const isRepo = await git(['rev-parse', '--git-dir'], found);
    if (!isRepo.ok) return `${found} is not a git repository (${isRepo.stderr.trim()}); clone ${repo} there`;
    return new CommitLookup(path.resolve(found));
  }

  close(): void {
    for (const clone of this.clones.values()) void clone.then((lookup) => typeof lookup !== 'string' && lookup.close());
    this.clones.clear();
  }
}

/** One row's clone and commit (a CheckoutFinder for one lookup). */
export async function findCheckout(id: string, reposDir: string, repo: string | undefined, commit: string | undefined): Promise<Checkout> {
  const finder = new CheckoutFinder(reposDir);
  try {
    return await finder.find(id, repo, commit);
  } finally {
    finder.close();
  }
}

/** Where work trees are made: $SWERL_CHECKOUT_CACHE, else <tmpdir>/swerl-checkouts. */
export function checkoutCacheDir(): string {
  return process.env.SWERL_CHECKOUT_CACHE ?? path.join(os.tmpdir(), 'swerl-checkouts');
}

const pending = new Map<string, Promise<string>>();

/**
 * A host folder holding `checkout.commit` checked out with its own shallow `.git` (that commit
 * only, on branch main). Made once and reused: a commit's tree never changes. Concurrent
 * callers, in this process or others, get the same folder (made aside, then renamed in place).
 */
export function checkoutWorkTree(checkout: Checkout, cacheDir = checkoutCacheDir()): Promise<string> {
  const name = `${path.basename(checkout.repository).replace(/[^\w.-]/g, '_')}@${checkout.commit}`;
  const target = path.join(cacheDir, name);
  let made = pending.get(target);
  if (!made) {
    made = makeWorkTree(checkout, cacheDir, target);
    pending.set(target, made);
    made.catch(() => pending.delete(target));
  }
  return made;
}

async function makeWorkTree(checkout: Checkout, cacheDir: string, target: string): Promise<string> {
  if (existsSync(path.join(target, '.git'))) return target;
  await fs.mkdir(cacheDir, { recursive: true });
  const aside = `${target}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const fail = (what: string, stderr: string) =>
    new SwerlError('ERR_SWERL_SANDBOX', `checking out ${checkout.commit} of ${checkout.repository}: ${what} failed: ${stderr.trim()}`);
  try {
    let r = await git(['init', '-q', '-b', 'main', aside]);
    if (!r.ok) throw fail('git init', r.stderr);
    // A fetch by commit id of depth 1: just that commit's tree, from a full or a shallow clone.
    r = await git(
      ['-c', 'protocol.file.allow=always', 'fetch', '-q', '--depth', '1', '--no-tags',
        '--upload-pack', 'git -c uploadpack.allowAnySHA1InWant=true upload-pack', `file://${checkout.repository}`, checkout.commit],
      aside,
    );
    if (!r.ok) throw fail('git fetch', r.stderr);
    r = await git(['-c', 'advice.detachedHead=false', 'checkout', '-q', '-B', 'main', checkout.commit], aside);
    if (!r.ok) throw fail('git checkout', r.stderr);
    await fs.rename(aside, target).catch(async (error: NodeJS.ErrnoException) => {
      // Another process made it first: theirs is the same tree.
      if (!existsSync(path.join(target, '.git'))) throw error;
    });
  } finally {
    await fs.rm(aside, { recursive: true, force: true });
  }
  return target;
}
