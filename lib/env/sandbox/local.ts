/**
 * The local sandbox: bubblewrap. Each exec is a fresh `bwrap` with new user, mount, pid, net,
 * ipc, uts and cgroup namespaces: no network, the host's /usr and /etc read-only, the work
 * tree (and a private /tmp) the only writable places. rlimits bound CPU time, memory, file
 * size and processes; a timeout or an output flood kills the whole tree (the pid namespace
 * goes down with its first process).
 *
 * When swerl runs as root, every sandbox runs under its own unused host uid: RLIMIT_NPROC is
 * counted per uid and root is exempt from it, so a fork bomb is only contained that way, and
 * the sandbox cannot read root-only host files or signal another sandbox's processes.
 *
 * On disk, under `root` (default $SWERL_SANDBOX_ROOT or <tmpdir>/swerl-sandboxes-<uid>: each
 * user's own, since whoever starts on a root reaps the dead sandboxes in it; prepareRoot):
 *   <id>/meta.json   label, owner pid and its start time, host uid
 *   <id>/work/       the work tree, bound at /testbed
 *   <id>/tmp/        the sandbox's /tmp
 *   .uids/<uid>      a claim on a host uid, so that concurrent runs never share one
 */
import { spawnSync } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { accessSync, chmodSync, constants, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { SwerlError, invalidArg } from '../../errors.js';
import { guardCreate, track } from './cleanup.js';
import { hostLayout } from './host-layout.js';
import { cgroupDirsOf, createCgroup, localBounds, mountDisk, removeCgroups, unmountDisk, unmountDiskAsync, removeOrphanDisks, type SandboxCgroup } from './local-bounds.js';
import { execResult } from './exec-result.js';
import { LocalShell, SHELL_IO, shellFolderSteps } from './local-shell.js';
import { spawnProcess, type SpawnHandlers } from './spawner.js';
import { tarArchive } from './tar.js';
import { OutputCollector } from './output.js';
import { parseLocalOptions, type LocalSandboxOptions, type ResolvedLocalOptions } from './options.js';
import { OWN_START, OWNER_TAG, ownerAlive, taggedOwnerAlive } from './owner.js';
import {
  LABEL_PATTERN,
  ExecFilesSandbox,
  type ExecOptions,
  type ExecResult,
  type Sandbox,
  type SandboxBackend,
  type SandboxLimits,
  type SandboxSpec,
} from './sandbox.js';

export const SANDBOX_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** The environment every command starts from: nothing of the host's leaks in. */
export function baseEnvironment(sandboxId: string): Record<string, string> {
  return {
    PATH: SANDBOX_PATH,
    HOME: '/tmp',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    PYTHONDONTWRITEBYTECODE: '1',
    SWERL_SANDBOX: sandboxId,
  };
}

// Host uids handed to sandboxes when running as root: far above any real account or the
// subordinate-uid ranges of rootless containers.
const UID_BASE = 1_879_048_192;
const UID_RANGE = 65_536;
const IS_ROOT = process.getuid?.() === 0;

/** The sandbox root when neither the options nor $SWERL_SANDBOX_ROOT name one: this user's own. */
export function defaultSandboxRoot(): string {
  return path.join(os.tmpdir(), `swerl-sandboxes-${process.getuid?.() ?? os.userInfo().username}`);
}

/**
 * Makes the sandbox root and checks that this user can use it, so that a root made by another
 * user fails when the backend is created, with the fix, not as an EACCES in the middle of a
 * run. The default root is this user's alone (0700; 0711 as root, whose sandboxes run under
 * their own uids and must reach their work trees) and must be a real folder of this user's: it
 * lives in the shared tmpdir, where anyone could have made it first. A root named by the
 * options or $SWERL_SANDBOX_ROOT must be writable, and this user's unless running as root.
 */
function prepareRoot(root: string, source: 'default' | 'SWERL_SANDBOX_ROOT' | 'options'): void {
  const uid = process.getuid?.() ?? -1;
  const isDefault = source === 'default';
  const where = isDefault ? `the default sandbox root ${root}` : source === 'options' ? `the sandbox root ${root} (the backend's root option)` : `the sandbox root ${root} (SWERL_SANDBOX_ROOT)`;
  const example = IS_ROOT ? '/var/tmp/swerl-sandboxes' : '$HOME/.cache/swerl-sandboxes';
  const refuse = (why: string, fix: string) =>
    new SwerlError(
      'ERR_SWERL_SANDBOX',
      `${where} ${why}. ${fix}set SWERL_SANDBOX_ROOT to a folder of your own (e.g. SWERL_SANDBOX_ROOT=${example}), ` +
        'or give the local backend a root (tasks.sandboxOptions.root in a training config).',
    );
  const mode = IS_ROOT ? 0o711 : 0o700;
  try {
    mkdirSync(root, { recursive: true, mode });
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    throw refuse(`cannot be created by this user (uid ${uid}): ${e.code ?? e.message}`, 'Create it yourself, or ');
  }
  const stat = isDefault ? lstatSync(root) : statSync(root);
  if (!stat.isDirectory()) throw refuse(stat.isSymbolicLink() ? 'is a symbolic link, not a folder' : 'is not a folder', 'Remove it, or ');
  if (stat.uid !== uid && (isDefault || !IS_ROOT)) {
    throw refuse(`belongs to uid ${stat.uid}, not to this user (uid ${uid}); users cannot share a sandbox root`, 'Have its owner remove it, or ');
  }
  try {
    accessSync(root, constants.W_OK | constants.X_OK);
  } catch {
    throw refuse(`is not writable by this user (uid ${uid})`, 'Make it writable (chmod u+rwx), or ');
  }
  // The default root: no one else may list it. Any root as root: the sandboxes' uids must pass.
  const wanted = isDefault ? mode : IS_ROOT ? stat.mode | 0o011 : stat.mode;
  if ((stat.mode & 0o7777) !== (wanted & 0o7777)) {
    try {
      chmodSync(root, wanted & 0o7777);
    } catch {
      // a file system without modes: its permissions are what they are
    }
  }
}

interface SandboxMeta {
  id: string;
  label: string;
  ownerPid: number;
  ownerStart: string;
  uid: number;
  createdAt: string;
}

/**
 * The prefix of a sandbox folder being made, `.new-<owner>-<id>`: renamed to its id once its
 * meta.json is in. The owner (pid.start) is in the name, for a create killed before its meta.
 */
const STAGING = '.new-';
/** The prefix of a uid claim being written (`.claim-<owner>-<random>` in .uids). */
const CLAIM_DRAFT = '.claim-';
/** The prefix of a sandbox folder being removed (renamed so before it is emptied). */
const REMOVING = '.gone-';

/**
 * Renames a sandbox folder to its REMOVING name before it is emptied, so a process killed
 * mid-removal leaves a folder the reaper knows for garbage, not one that lost its meta.json
 * and could be anyone's. Returns the path to remove (the folder itself if it could not move).
 */
function retire(dir: string): string {
  const doomed = retiredName(dir);
  try {
    renameSync(dir, doomed);
    return doomed;
  } catch {
    return dir;  // already gone, or never made
  }
}

function retiredName(dir: string): string {
  return path.join(path.dirname(dir), `${REMOVING}${path.basename(dir)}`);
}

async function writeMeta(dir: string, meta: SandboxMeta): Promise<void> {
  await fs.writeFile(path.join(dir, 'meta.json.tmp'), JSON.stringify(meta));
  await fs.rename(path.join(dir, 'meta.json.tmp'), path.join(dir, 'meta.json'));
}

async function readMeta(dir: string): Promise<SandboxMeta | undefined> {
  try {
    return JSON.parse(await fs.readFile(path.join(dir, 'meta.json'), 'utf8')) as SandboxMeta;
  } catch {
    return undefined;
  }
}

function ownerOf(meta: SandboxMeta): boolean {
  return ownerAlive(meta.ownerPid, meta.ownerStart);
}

/** bwrap's mounts of the host toolchain (host-layout.ts) and any extra read-only binds. */
function hostMountArgs(readOnlyBinds: readonly string[]): string[] {
  const { folders, links } = hostLayout();
  return [
    ...folders.flatMap((folder) => ['--ro-bind', folder, folder]),
    ...links.flatMap((link) => ['--symlink', link.target, link.path]),
    ...readOnlyBinds.flatMap((bind) => ['--ro-bind', bind, bind]),
  ];
}

/** Processes whose environment carries SWERL_SANDBOX=<id> with match(id) (bwrap and all under it). */
export function sandboxProcesses(match: (id: string) => boolean): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${entry}/environ`, 'latin1');
    } catch {
      continue;
    }
    const m = /(?:^|\0)SWERL_SANDBOX=([^\0]*)/.exec(environ);
    if (m && match(m[1]!)) found.push(Number(entry));
  }
  return found;
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

function removeTree(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch {
    // An agent can leave folders without the owner's permissions; as non-root, restore them.
    spawnSync('chmod', ['-R', 'u+rwx', dir]);
    rmSync(dir, { recursive: true, force: true });
  }
}

export class LocalSandboxBackend implements SandboxBackend {
  readonly name = 'local' as const;
  readonly options: Readonly<ResolvedLocalOptions & { root: string }>;
  private readonly mountArgs: string[];
  private probed: Promise<void> | null = null;
  /** bwrap >= 0.8 can refuse nested user namespaces (--disable-userns); older ones cannot. */
  private disableUserns = false;

  constructor(options: LocalSandboxOptions = {}) {
    const parsed = parseLocalOptions(options, 'sandbox');
    const fromEnv = process.env.SWERL_SANDBOX_ROOT || undefined;
    const root = path.resolve(parsed.root ?? fromEnv ?? defaultSandboxRoot());
    prepareRoot(root, parsed.root !== undefined ? 'options' : fromEnv !== undefined ? 'SWERL_SANDBOX_ROOT' : 'default');
    this.options = { ...parsed, root };
    this.mountArgs = hostMountArgs(this.options.readOnlyBinds);
  }

  async create(spec: SandboxSpec = {}): Promise<Sandbox> {
    if (spec.image !== undefined && spec.repoDir === undefined) {
      throw invalidArg('spec.image', 'is for the docker backend', 'give the local backend a repoDir, or use sandbox: "docker"');
    }
    if (spec.overlay !== undefined && spec.repoDir === undefined) throw invalidArg('spec.overlay', 'is laid over a repoDir\'s copy', 'give a repoDir too');
    const label = spec.label ?? this.options.label;
    if (!LABEL_PATTERN.test(label)) throw invalidArg('spec.label', `${JSON.stringify(label)} is not a valid label`, `match ${LABEL_PATTERN}`);
    const workdir = spec.workdir ?? '/testbed';
    if (!path.posix.isAbsolute(workdir)) throw invalidArg('spec.workdir', 'must be an absolute path');
    await (this.probed ??= this.firstStart());

    const id = `${label}-${randomBytes(6).toString('hex')}`;
    const dir = path.join(this.options.root, id);
    // The folder is made under a dot name with its meta.json (the owner's pid and start time)
    // inside, then renamed: a folder under a sandbox id always says whose it is, so a run
    // killed mid-create (kill -9) leaves nothing a reaper cannot attribute to a dead owner.
    const meta: SandboxMeta = { id, label, ownerPid: process.pid, ownerStart: OWN_START, uid: IS_ROOT ? -1 : process.getuid!(), createdAt: new Date().toISOString() };
    const staging = path.join(this.options.root, `${STAGING}${OWNER_TAG}-${id}`);
    let uid = meta.uid;
    let cgroup: SandboxCgroup | null = null;
    // Tracked before the first byte is written: a signal while this create is in flight
    // cancels it at its next step and waits for the undo; an exit removes what it made so far.
    // (The sandbox tracks itself once it exists.)
    const undoSync = (): void => {
      cgroup?.remove();
      unmountDisk(id);
      removeTree(staging);
      removeTree(dir);
      if (IS_ROOT && uid >= 0) rmSync(path.join(this.options.root, '.uids', String(uid)), { force: true });
    };
    const guard = await guardCreate(undoSync);
    try {
      await fs.mkdir(staging, { mode: 0o711 });
      guard.checkpoint();
      await writeMeta(staging, meta);
      guard.checkpoint();
      await fs.rename(staging, dir);
      guard.checkpoint();
      if (IS_ROOT) {
        // The claim names the id, so a run killed before the meta below is rewritten leaves a
        // claim the reaper still finds (releaseOrphanClaims).
        uid = await this.claimUid(id);
        guard.checkpoint();
        await writeMeta(dir, { ...meta, uid });
        guard.checkpoint();
      }
      const limits = this.options.limits;
      const repoDir = spec.repoDir;
      if (repoDir !== undefined && !existsSync(repoDir)) throw invalidArg('spec.repoDir', `${repoDir} does not exist`);
      // The work tree is copied, the overlay unpacked over it (from stdin) and all of it handed
      // to the sandbox's uid by the process that makes the disk.
      const copy = (folder: string): [string, string[]][] => {
        if (repoDir === undefined) return [];
        const work = path.join(folder, 'work');
        return [
          ['cp', ['-a', '--', `${repoDir}/.`, work]],
          ...(spec.overlay ? [['tar', ['-C', work, '-xf', '-']] as [string, string[]]] : []),
          ...(IS_ROOT ? [['chown', ['-R', `${uid}:${uid}`, '--', work]] as [string, string[]]] : []),
        ];
      };
      const fill = (folder: string): [string, string[]][] => [...copy(folder), ...(spec.persistentShell ? shellFolderSteps(folder, IS_ROOT ? uid : null) : [])];
      const base = await mountDisk(dir, id, limits.diskBytes, this.options.disk, localBounds(), fill, spec.overlay ? tarArchive(spec.overlay) : undefined);
      guard.checkpoint();
      cgroup = createCgroup(id, limits.memoryBytes, limits.maxProcesses, uid, localBounds());
      const work = path.join(base, 'work');
      const tmp = path.join(base, 'tmp');
      await fs.mkdir(tmp, { mode: 0o700 });
      if (repoDir === undefined) await fs.mkdir(work);
      if (IS_ROOT) await Promise.all([...(repoDir === undefined ? [fs.chown(work, uid, uid)] : []), fs.chown(tmp, uid, uid)]);
      guard.checkpoint();
      const confinement = { mountArgs: this.mountArgs, cgroup, disableUserns: this.disableUserns, work, tmp, io: spec.persistentShell ? path.join(base, 'io') : null };
      const sandbox = new LocalSandbox(id, label, workdir, dir, uid, limits, confinement, () => this.releaseUid(uid), spec.env ?? {});
      await guard.finish();
      return sandbox;
    } catch (error) {
      undoSync();
      await guard.finish();
      throw error;
    }
  }

  async reap(options: { label?: string; all?: boolean } = {}): Promise<number> {
    let entries: string[];
    try {
      entries = await fs.readdir(this.options.root);
    } catch {
      return 0;
    }
    const doomed: { dir: string; meta: SandboxMeta }[] = [];
    for (const entry of entries) {
      const dir = path.join(this.options.root, entry);
      if (entry.startsWith(REMOVING)) {
        // Its owner was removing it: garbage whoever's it was.
        if (options.label === undefined) doomed.push({ dir, meta: { id: entry.slice(REMOVING.length), uid: -1 } as SandboxMeta });
        continue;
      }
      if (entry.startsWith(STAGING)) {
        // Nothing of the sandbox exists yet but this folder (no claim, mount or process).
        if (options.label === undefined && (options.all || !taggedOwnerAlive(entry.slice(STAGING.length)))) doomed.push({ dir, meta: { id: entry, uid: -1 } as SandboxMeta });
        continue;
      }
      if (entry.startsWith('.')) continue;
      const meta = await readMeta(dir);
      if (meta === undefined) {
        // A folder of an older layout whose create died before its meta: old enough means abandoned.
        const stat = await fs.stat(dir).catch(() => null);
        if (stat && Date.now() - stat.mtimeMs > 60_000) doomed.push({ dir, meta: { id: entry, uid: -1 } as SandboxMeta });
        continue;
      }
      if (options.label !== undefined && meta.label !== options.label) continue;
      if (options.all || !ownerOf(meta)) doomed.push({ dir, meta });
    }
    removeOrphanDisks();
    if (doomed.length > 0) {
      const ids = new Set(doomed.map((d) => d.meta.id));
      for (const pid of sandboxProcesses((id) => ids.has(id))) killGroup(pid);
      for (const { dir, meta } of doomed) {
        unmountDisk(meta.id);
        removeCgroups(cgroupDirsOf(meta.id, localBounds()));
        removeTree(dir);
      }
    }
    // The doomed sandboxes' uids among them: their folders are gone now.
    if (IS_ROOT) await this.releaseOrphanClaims();
    return doomed.length;
  }

  /**
   * Uid claims whose sandbox folder is gone (a run killed between its claim and its meta, or
   * between its folder's removal and the release). Safe beside live runs: a create claims
   * only once its folder exists, and a destroy releases before it removes the folder.
   */
  private async releaseOrphanClaims(): Promise<void> {
    const claims = path.join(this.options.root, '.uids');
    for (const name of await fs.readdir(claims).catch(() => [] as string[])) {
      if (name.startsWith(CLAIM_DRAFT)) {
        if (!taggedOwnerAlive(name.slice(CLAIM_DRAFT.length))) await fs.rm(path.join(claims, name), { force: true });
        continue;
      }
      const id = await fs.readFile(path.join(claims, name), 'utf8').catch(() => '');
      const folders = [id, `${REMOVING}${id}`].map((f) => path.join(this.options.root, f));
      if (id && !folders.some((f) => existsSync(f))) await fs.rm(path.join(claims, name), { force: true });
    }
  }

  /** Once per backend: the root folder, a reap of what dead runs left, and a probe of bwrap. */
  private async firstStart(): Promise<void> {
    await fs.mkdir(path.join(this.options.root, '.uids'), { recursive: true, mode: 0o711 });
    await this.reap();
    const probeArgs = ['--unshare-all', '--die-with-parent', ...this.mountArgs, '--proc', '/proc', '--dev', '/dev'];
    this.disableUserns = spawnSync('bwrap', [...probeArgs, '--unshare-user', '--disable-userns', 'true']).status === 0;
    const probe = spawnSync('bwrap', [...probeArgs, 'true'], { encoding: 'utf8' });
    if (probe.error || probe.status !== 0) {
      const why = probe.error ? `could not run bwrap (${probe.error.message})` : `bwrap failed: ${probe.stderr.trim()}`;
      throw new SwerlError(
        'ERR_SWERL_SANDBOX',
        `the local sandbox needs bubblewrap with user namespaces: ${why}. ` +
          'Install it (apt-get install bubblewrap), allow unprivileged user namespaces ' +
          '(sysctl kernel.unprivileged_userns_clone=1), or use the docker backend.',
      );
    }
  }

  /**
   * A claim appears whole or not at all: its id is written to a draft, which is then hard-linked
   * under the uid's name (link fails if the name exists, as O_EXCL would, but never leaves an
   * empty claim behind a kill).
   */
  private async claimUid(id: string): Promise<number> {
    const claims = path.join(this.options.root, '.uids');
    const draft = path.join(claims, `${CLAIM_DRAFT}${OWNER_TAG}-${randomBytes(4).toString('hex')}`);
    await fs.writeFile(draft, id);
    try {
      for (let attempt = 0; attempt < 100; attempt++) {
        const uid = UID_BASE + randomInt(UID_RANGE);
        try {
          await fs.link(draft, path.join(claims, String(uid)));
          return uid;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        }
      }
    } finally {
      await fs.rm(draft, { force: true });
    }
    throw new SwerlError('ERR_SWERL_SANDBOX', `no free sandbox uid after 100 tries under ${claims}`);
  }

  private async releaseUid(uid: number): Promise<void> {
    if (IS_ROOT) await fs.rm(path.join(this.options.root, '.uids', String(uid)), { force: true });
  }
}

/** A command in flight: its pid once started, and when it is over. */
interface RunningCommand {
  pid: Promise<number>;
  exit: Promise<void>;
}

class LocalSandbox extends ExecFilesSandbox {
  destroyed = false;
  private readonly running = new Set<RunningCommand>();
  private readonly untrack: () => void;
  private readonly env: Record<string, string>;

  constructor(
    readonly id: string,
    readonly label: string,
    readonly workdir: string,
    private readonly dir: string,
    private readonly uid: number,
    protected readonly limits: SandboxLimits,
    private readonly confinement: Confinement,
    private readonly release: () => Promise<void>,
    specEnv: Record<string, string>,
  ) {
    super();
    this.env = { ...baseEnvironment(id), ...specEnv };
    this.shell = confinement.io === null ? null : new LocalShell(confinement.io, (script, handlers) => this.startShell(script, handlers), killGroup);
    this.untrack = track(this);
  }

  private readonly shell: LocalShell | null;

  exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    if (this.destroyed) return Promise.reject(new SwerlError('ERR_SWERL_SANDBOX', `sandbox ${this.id} was destroyed`));
    if (this.shell && !this.shell.busy && !this.shell.broken) return this.execInShell(this.shell, command, options);
    return this.execAlone(command, options);
  }

  /** A command in the sandbox's shell (local-shell.ts); in a bwrap of its own where the shell cannot take it. */
  private async execInShell(shell: LocalShell, command: string, options: ExecOptions): Promise<ExecResult> {
    const started = performance.now();
    const output = new OutputCollector(options.maxOutputBytes ?? this.limits.maxOutputBytes);
    const ended = await shell.run({
      command,
      env: this.commandEnvironment(options.env),
      cwd: options.cwd ?? this.workdir,
      stdin: options.stdin ?? '',
      timeoutMs: options.timeoutMs ?? this.limits.timeoutMs,
      output,
    });
    if (ended === null) return this.execAlone(command, options);
    return execResult(output, { ...ended, startedAt: started });
  }

  /** The shell's own bwrap: a command's, with the shell's folder bound read-only at SHELL_IO. */
  private startShell(script: string, handlers: { stdout(chunk: Buffer): void }) {
    return this.spawnInBwrap(script, { env: this.commandEnvironment(), cwd: '/', stdin: '', binds: ['--ro-bind', this.confinement.io!, SHELL_IO] }, { stdout: handlers.stdout, stderr: () => undefined });
  }

  /** A command's environment: the sandbox's, the command's own, and the sandbox's id (the reaper finds its processes by it). */
  private commandEnvironment(extra: Record<string, string> = {}): Record<string, string> {
    return { ...this.env, ...extra, SWERL_SANDBOX: this.id };
  }

  /** `sh -c command` in a bwrap of this sandbox's, in a process group of its own. */
  private spawnInBwrap(command: string, how: { env: Record<string, string>; cwd: string; stdin: string | Uint8Array; binds?: string[] }, handlers: SpawnHandlers) {
    const line = this.commandLine();
    // Extra binds go before the root's final --remount-ro.
    const [program, ...args] = how.binds ? [...line.slice(0, -2), ...how.binds, ...line.slice(-2)] : line;
    // The environment is set inside bwrap after --clearenv: nothing of the host's (nor of a
    // wrapper that injects variables into every spawn) reaches the command.
    const environment = Object.entries(how.env).flatMap(([k, v]) => ['--setenv', k, v]);
    // From a helper process (spawner.ts): a fork of this one, model and all, would hold the event loop.
    return spawnProcess(
      {
        program: program!,
        args: [...args, '--clearenv', ...environment, '--chdir', how.cwd, 'sh', '-c', command],
        detached: true, // its own process group, killed as one
        env: { PATH: SANDBOX_PATH, SWERL_SANDBOX: this.id },
        // As root: the sandbox's own uid (libuv also drops the supplementary groups).
        ...(IS_ROOT ? { uid: this.uid, gid: this.uid } : {}),
        stdin: how.stdin,
      },
      handlers,
    );
  }

  /** A command in a bwrap of its own. */
  private execAlone(command: string, options: ExecOptions): Promise<ExecResult> {
    if (this.destroyed) return Promise.reject(new SwerlError('ERR_SWERL_SANDBOX', `sandbox ${this.id} was destroyed`));
    const timeoutMs = options.timeoutMs ?? this.limits.timeoutMs;
    const started = performance.now();
    const output = new OutputCollector(options.maxOutputBytes ?? this.limits.maxOutputBytes);
    let pid: number | undefined;
    let stopRequested = false;
    const stop = () => {
      stopRequested = true;
      if (pid !== undefined) killGroup(pid);
    };
    const child = this.spawnInBwrap(
      command,
      { env: this.commandEnvironment(options.env), cwd: options.cwd ?? this.workdir, stdin: options.stdin ?? '' },
      { stdout: (d) => output.push('stdout', d) || stop(), stderr: (d) => output.push('stderr', d) || stop() },
    );
    const running: RunningCommand = { pid: child.pid, exit: child.exit.then(() => undefined, () => undefined) };
    this.running.add(running);
    return new Promise((resolve, reject) => {
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        stop();
      }, timeoutMs);
      child.pid.then((p) => {
        pid = p;
        if (stopRequested) killGroup(p);
      }, () => undefined);
      child.exit.then(
        ({ code, signal }) => {
          clearTimeout(timer);
          this.running.delete(running);
          const signalNumber = signal ? (os.constants.signals[signal] ?? 0) : 0;
          resolve(execResult(output, { exitCode: timedOut ? -1 : (code ?? 128 + signalNumber), timedOut, startedAt: started }));
        },
        (error: Error) => {
          clearTimeout(timer);
          this.running.delete(running);
          reject(new SwerlError('ERR_SWERL_SANDBOX', `could not start the sandbox command: ${error.message}`));
        },
      );
    });
  }

  /** One removal however often it is asked for: a second caller (the signal path) waits for it. */
  destroy(): Promise<void> {
    this.destroyed = true;
    return (this.removal ??= this.remove());
  }

  private removal: Promise<void> | null = null;

  private async remove(): Promise<void> {
    const running = [...this.running];
    for (const command of running) void command.pid.then(killGroup, () => undefined);
    await Promise.all([...running.map((command) => command.exit), this.shell?.stop()]);
    await this.confinement.cgroup?.removeAsync();
    await unmountDiskAsync(this.id);
    const doomed = retire(this.dir);
    // Released while the folder still exists: a claim never outlives its sandbox's folder, so
    // the reaper may release every claim whose folder is gone.
    await this.release();
    await fs.rm(doomed, { recursive: true, force: true }).catch(() => removeTree(doomed));
    this.untrack();
  }

  destroySync(): void {
    this.destroyed = true;
    // At exit: the helpers' channels close with this process and they kill their groups; the
    // sandbox's processes found by their environment are killed here too.
    for (const pid of sandboxProcesses((id) => id === this.id)) killGroup(pid);
    this.confinement.cgroup?.remove();
    unmountDisk(this.id);
    const doomed = retire(this.dir);
    if (IS_ROOT) rmSync(path.join(path.dirname(this.dir), '.uids', String(this.uid)), { force: true });
    removeTree(doomed);
    // An async destroy in flight had retired it already and was emptying it.
    if (doomed === this.dir) removeTree(retiredName(this.dir));
  }


  private cachedCommandLine: string[] | null = null;

  /** [join the cgroup →] prlimit → bwrap with this sandbox's binds, up to the environment and --chdir. */
  private commandLine(): string[] {
    if (this.cachedCommandLine) return this.cachedCommandLine;
    const l = this.limits;
    const c = this.confinement;
    // The command moves itself into the sandbox's cgroup, then becomes prlimit.
    const joinCgroup = c.cgroup ? ['sh', '-c', 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"', 'sh', ...c.cgroup.procs, '--'] : [];
    // As non-root, RLIMIT_NPROC counts all of the user's processes: leave room for those.
    const processes = IS_ROOT ? l.maxProcesses : l.maxProcesses + countProcessesOf(this.uid);
    this.cachedCommandLine = [
      ...joinCgroup,
      'prlimit',
      `--cpu=${l.cpuSeconds}`,
      `--as=${l.memoryBytes}`,
      `--nproc=${processes}`,
      `--fsize=${l.maxFileBytes}`,
      '--',
      'bwrap',
      '--unshare-all',
      ...(c.disableUserns ? ['--unshare-user', '--disable-userns'] : []),
      '--die-with-parent',
      '--new-session',
      ...c.mountArgs,
      '--proc',
      '/proc',
      // bwrap's /dev is a RAM tmpfs as large as the host's: read-only but for a bounded /dev/shm.
      '--dev',
      '/dev',
      '--size',
      String(l.shmBytes),
      '--tmpfs',
      '/dev/shm',
      '--remount-ro',
      '/dev',
      '--bind',
      c.tmp,
      '/tmp',
      '--bind',
      c.work,
      this.workdir,
      // the root itself is bwrap's tmpfs: read-only, so that no write lands outside the binds
      '--remount-ro',
      '/',
    ];
    return this.cachedCommandLine;
  }
}

/** How a sandbox is confined beyond its rlimits (local-bounds.ts). */
interface Confinement {
  mountArgs: readonly string[];
  cgroup: SandboxCgroup | null;
  disableUserns: boolean;
  /** Host folders bound at the work dir and /tmp. */
  work: string;
  tmp: string;
  /** The host folder of the sandbox's shell (local-shell.ts), bound read-only at SHELL_IO; null without one. */
  io: string | null;
}

function countProcessesOf(uid: number): number {
  let count = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1] === String(uid)) count++;
    } catch {
      // exited meanwhile
    }
  }
  return count;
}
