/**
 * Bounds on a local sandbox as a whole, beyond the per-process rlimits: what this machine
 * allows is probed once per process.
 *
 * - disk: as root, the work tree and /tmp live on a loop-mounted ext4 image of diskBytes
 *   (sparse: it costs what is written), so a sandbox gets ENOSPC, never the host's disk; or,
 *   with the backend's `disk: 'tmpfs'`, on a tmpfs of diskBytes (no image to make: for small
 *   repositories, whose files then take memory);
 * - memory and processes: a cgroup (v2, or v1's memory and pids controllers) per sandbox
 *   with memoryBytes and maxProcesses, which every command joins before bwrap starts.
 *
 * Where neither is possible (not root, no writable cgroup), the bounds are the rlimits alone:
 * each file up to maxFileBytes, each process up to memoryBytes of address space and the
 * sandbox to maxProcesses processes, so memory is bounded by memoryBytes x maxProcesses and
 * disk by nothing but the host. `describeBounds()` says which applies.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { SwerlError } from '../../errors.js';
import { OWN_START, OWNER_TAG, ownerAlive, ownerTagOf, taggedOwnerAlive } from './owner.js';
import { shellQuote } from './sandbox.js';
import { runToCompletion } from './spawner.js';

const IS_ROOT = process.getuid?.() === 0;
const CGROUP = '/sys/fs/cgroup';

export interface LocalBounds {
  disk: 'loop-ext4' | 'none';
  memory: 'cgroup-v2' | 'cgroup-v1' | 'rlimit';
}

let probed: LocalBounds | undefined;

/** What this machine allows, probed once per process. */
export function localBounds(): LocalBounds {
  return (probed ??= { disk: probeDisk(), memory: probeCgroups() });
}

export function describeBounds(b: LocalBounds): string {
  return `disk: ${b.disk === 'loop-ext4' ? 'a loop-mounted ext4 image per sandbox' : 'per file only (needs root and loop devices)'}; ` +
    `memory: ${b.memory === 'rlimit' ? 'per process only (needs root and a writable cgroup)' : `a ${b.memory} cgroup per sandbox`}`;
}

/**
 * The prefix of a disk probe's folder in the temporary directory, `swerl-disk-probe-<owner>-…`:
 * a process killed mid-probe leaves it (and maybe its mount) for removeOrphanDisks.
 */
const PROBE = 'swerl-disk-probe-';
/**
 * The prefix of a host scratch folder in the temporary directory, `swerl-scratch-<owner>-…`
 * (base-commit.ts's): swept with the probes' once its owner is gone.
 */
export const SCRATCH = 'swerl-scratch-';

/** Mounts and unmounts a small image for real: root in a container may still have no loop devices. */
function probeDisk(): LocalBounds['disk'] {
  if (!IS_ROOT) return 'none';
  const dir = mkdtempSync(path.join(os.tmpdir(), `${PROBE}${OWNER_TAG}-`));
  try {
    // Synchronously, as the bounds are asked for synchronously (once per process).
    const disk = diskOf(dir, path.basename(dir), 16 * 1024 ** 2, 'image');
    for (const [command, args] of disk.commands) {
      const r = spawnSync(command, args, { encoding: 'utf8' });
      if (r.status !== 0) return 'none';
    }
    return 'loop-ext4';
  } catch {
    return 'none';
  } finally {
    unmountDisk(path.basename(dir));
    rmSync(dir, { recursive: true, force: true });
  }
}

function probeCgroupKind(): LocalBounds['memory'] {
  if (!IS_ROOT) return 'rlimit';
  const probe = (dirs: string[]) => {
    try {
      for (const dir of dirs) mkdirSync(dir, { recursive: true });
      return true;
    } catch {
      return false;
    }
  };
  if (existsSync(`${CGROUP}/cgroup.controllers`)) {
    const controllers = readFileSync(`${CGROUP}/cgroup.controllers`, 'utf8');
    if (!/\bmemory\b/.test(controllers) || !/\bpids\b/.test(controllers)) return 'rlimit';
    try {
      writeFileSync(`${CGROUP}/cgroup.subtree_control`, '+memory +pids');
      if (!probe([`${CGROUP}/swerl`])) return 'rlimit';
      writeFileSync(`${CGROUP}/swerl/cgroup.subtree_control`, '+memory +pids');
      return 'cgroup-v2';
    } catch {
      return 'rlimit';
    }
  }
  return probe([`${CGROUP}/memory/swerl`, `${CGROUP}/pids/swerl`]) ? 'cgroup-v1' : 'rlimit';
}

/** The kind of cgroup that exists, if a sandbox's can really be made, limited and removed. */
function probeCgroups(): LocalBounds['memory'] {
  const kind = probeCgroupKind();
  if (kind === 'rlimit') return kind;
  try {
    createCgroup(`probe-${process.pid}`, 64 * 1024 ** 2, 16, process.getuid!(), { disk: 'none', memory: kind })?.remove();
    return kind;
  } catch {
    return 'rlimit';
  }
}

/**
 * Runs a host command without blocking the event loop (hundreds of sandboxes are made at once,
 * beside the decode loop); a failure is a sandbox error naming it.
 */
export async function runHostCommand(command: string, args: string[], stdin: string | Uint8Array = ''): Promise<void> {
  const fail = (why: string) => new SwerlError('ERR_SWERL_SANDBOX', `${command} ${args.join(' ')} failed: ${why.trim()}`);
  let result: { code: number | null; stderr: string };
  try {
    result = await runToCompletion(command, args, stdin);
  } catch (error) {
    throw fail((error as Error).message);
  }
  if (result.code !== 0) throw fail(result.stderr);
}

/**
 * Where sandbox disks are mounted: outside the sandbox folders, so that removing a folder (or
 * the tree holding them) never meets a busy mount. `<id>.dir` records whose disk it is: the
 * sandbox folder, then the owning process's pid and start time (one per line); it is written
 * as `.draft-<owner>-<id>` and renamed.
 */
const DISKS = path.join(os.tmpdir(), 'swerl-disks');
/** The prefix of a disk record being written. */
const RECORD_DRAFT = '.draft-';

/** What a sandbox's disk is: an ext4 image on the host's disk, or a tmpfs (memory). */
export type DiskKind = 'image' | 'tmpfs';

/** A sandbox disk's mountpoint (made, its owner recorded) and the commands that make and mount it. */
function diskOf(dir: string, id: string, bytes: number, kind: DiskKind): { mountpoint: string; commands: [string, string[]][] } {
  const mountpoint = path.join(DISKS, id);
  mkdirSync(mountpoint, { recursive: true });
  // Written whole under a temporary name, then renamed: a reaper never reads half a record.
  const draft = path.join(DISKS, `${RECORD_DRAFT}${OWNER_TAG}-${id}`);
  writeFileSync(draft, `${dir}\n${process.pid}\n${OWN_START}\n`);
  renameSync(draft, `${mountpoint}.dir`);
  if (kind === 'tmpfs') {
    // One mount instead of an image made and loop-mounted (~30 ms of CPU less a sandbox); its
    // inodes as many as ext4 gives an image of this size (one per 16 KiB).
    const options = `size=${bytes},nr_inodes=${Math.max(1024, Math.floor(bytes / 16384))},mode=0755,nosuid,nodev`;
    return { mountpoint, commands: [['mount', ['-t', 'tmpfs', '-o', options, 'swerl-disk', mountpoint]]] };
  }
  const image = path.join(dir, 'disk.img');
  // Sparse, no reserved blocks, tables initialized lazily: a 4 GiB image costs ~5 MB and 30 ms.
  return {
    mountpoint,
    commands: [
      ['truncate', ['-s', String(bytes), image]],
      ['mkfs.ext4', ['-q', '-F', '-m', '0', '-E', 'lazy_itable_init=1,lazy_journal_init=1', image]],
      ['mount', ['-o', 'loop,nosuid,nodev', image, mountpoint]],
    ],
  };
}

/**
 * The folder holding the sandbox's work/ and tmp/: a mounted disk of `bytes` (`kind`: an image
 * or a tmpfs), or `dir` itself. `fill(folder)` names commands that fill it (the work tree's copy),
 * run by the same host shell as the disk's: each process this one starts is a fork of a Node
 * helper (spawner.ts), ~5 ms of CPU more than a command the shell starts (bench/README.md).
 * `stdin` goes to that shell (one of the commands may read it).
 */
export async function mountDisk(dir: string, id: string, bytes: number, kind: DiskKind, bounds: LocalBounds, fill: (folder: string) => [string, string[]][] = () => [], stdin: Uint8Array = new Uint8Array()): Promise<string> {
  const disk = bounds.disk === 'none' ? { mountpoint: dir, commands: [] } : diskOf(dir, id, bytes, kind);
  const commands = [...disk.commands, ...fill(disk.mountpoint)];
  if (commands.length > 0) await runHostCommand('sh', ['-c', commands.map(([command, args]) => [command, ...args].map(shellQuote).join(' ')).join(' && ')], stdin);
  if (bounds.disk !== 'none' && kind === 'image') rmdirSync(path.join(disk.mountpoint, 'lost+found'));
  return disk.mountpoint;
}

/** Unmounts what mountDisk mounted (lazily: a dying process may still hold it a moment). */
export function unmountDisk(id: string): void {
  const mountpoint = path.join(DISKS, id);
  // The record goes even where the mountpoint has (a destroy killed between the two).
  if (existsSync(mountpoint)) {
    spawnSync('umount', ['-l', mountpoint]);
    rmSync(mountpoint, { recursive: true, force: true });
  }
  rmSync(`${mountpoint}.dir`, { force: true });
}

/** unmountDisk without blocking the event loop (a destroy among hundreds; the exit hooks keep the sync one). */
export async function unmountDiskAsync(id: string): Promise<void> {
  const mountpoint = path.join(DISKS, id);
  if (existsSync(mountpoint)) {
    await runHostCommand('umount', ['-l', mountpoint]).catch(() => undefined);
    rmSync(mountpoint, { recursive: true, force: true });
  }
  rmSync(`${mountpoint}.dir`, { force: true });
}

/**
 * What processes now gone (a run killed) left of their disks: mounts and their records, records
 * half-written, disk probes' folders and scratch folders. Other live processes' disks are theirs, whatever state
 * their folders are in (a create or a destroy under way renames them); a record removed under
 * this sweep by its owner is passed over.
 */
export function removeOrphanDisks(): void {
  let names: string[];
  try {
    names = readdirSync(DISKS);
  } catch {
    names = [];
  }
  removeOrphanDrafts(names.filter((name) => name.startsWith(RECORD_DRAFT)));
  unmountOrphanRecords(names.filter((name) => name.endsWith('.dir')));
  removeOrphanTmp();
}

/** Records' drafts of processes killed before the rename: nothing was mounted on their mountpoints yet. */
function removeOrphanDrafts(drafts: string[]): void {
  for (const name of drafts) {
    const rest = name.slice(RECORD_DRAFT.length);
    if (taggedOwnerAlive(rest)) continue;
    rmSync(path.join(DISKS, name), { force: true });
    try {
      rmdirSync(path.join(DISKS, rest.replace(/^[^-]*-/, ''))); // the mountpoint: empty, or not ours to empty
    } catch {
      // gone already, or something is in it
    }
  }
}

function unmountOrphanRecords(entries: string[]): void {
  for (const entry of entries) {
    let record: string;
    try {
      record = readFileSync(path.join(DISKS, entry), 'utf8');
    } catch {
      continue; // its owner removed it just now
    }
    const [dir, pid, start] = record.split('\n');
    // A record of an older layout holds the folder alone: there, the folder's absence is the sign.
    const orphaned = pid === undefined ? !existsSync(dir!) : !ownerAlive(Number(pid), start ?? '');
    if (orphaned) unmountDisk(entry.slice(0, -'.dir'.length));
  }
}

/** A probe takes well under a second: an untagged folder (an older swerl's) a minute old is abandoned. */
function olderThanAMinute(file: string): boolean {
  try {
    return Date.now() - statSync(file).mtimeMs > 60_000;
  } catch {
    return false;
  }
}

/** Disk probes' and scratch folders whose process is gone (a probe's mount, if any, went with its record above). */
function removeOrphanTmp(): void {
  let names: string[];
  try {
    names = readdirSync(os.tmpdir()).filter((name) => name.startsWith(PROBE) || name.startsWith(SCRATCH));
  } catch {
    return;
  }
  for (const name of names) {
    const rest = name.slice((name.startsWith(PROBE) ? PROBE : SCRATCH).length);
    const abandoned = ownerTagOf(rest) === null ? olderThanAMinute(path.join(os.tmpdir(), name)) : !taggedOwnerAlive(rest);
    if (!abandoned) continue;
    unmountDisk(name);
    rmSync(path.join(os.tmpdir(), name), { recursive: true, force: true });
  }
}

export interface SandboxCgroup {
  /** Files a process writes its pid to, to join (writable by the sandbox's uid). */
  procs: string[];
  /** At exit (no event loop left to wait on). */
  remove(): void;
  /** In a running process: waits for the kernel to let go without blocking the event loop. */
  removeAsync(): Promise<void>;
}

/** A cgroup with the sandbox's memory and process bounds, or null where there is none. */
export function createCgroup(id: string, memoryBytes: number, maxProcesses: number, uid: number, bounds: LocalBounds): SandboxCgroup | null {
  if (bounds.memory === 'rlimit') return null;
  const dirs = cgroupDirsOf(id, bounds);
  for (const dir of dirs) mkdirSync(dir);
  const remove = () => removeCgroups(dirs);
  const removeAsync = () => removeCgroupsAsync(dirs);
  try {
    if (bounds.memory === 'cgroup-v2') {
      writeFileSync(`${dirs[0]}/memory.max`, String(memoryBytes));
      if (existsSync(`${dirs[0]}/memory.swap.max`)) writeFileSync(`${dirs[0]}/memory.swap.max`, '0');
      writeFileSync(`${dirs[0]}/pids.max`, String(maxProcesses));
    } else {
      writeFileSync(`${dirs[0]}/memory.limit_in_bytes`, String(memoryBytes));
      if (existsSync(`${dirs[0]}/memory.memsw.limit_in_bytes`)) writeFileSync(`${dirs[0]}/memory.memsw.limit_in_bytes`, String(memoryBytes));
      writeFileSync(`${dirs[1]}/pids.max`, String(maxProcesses));
    }
    const procs = dirs.map((dir) => `${dir}/cgroup.procs`);
    // The sandbox's own uid moves its command in; it can write no other cgroup's file.
    for (const file of procs) chownSync(file, uid, uid);
    return { procs, remove, removeAsync };
  } catch (error) {
    remove();
    throw new SwerlError('ERR_SWERL_SANDBOX', `could not set up the sandbox's cgroup: ${(error as Error).message}`);
  }
}

/** A cgroup goes once its last process has; the kill that preceded its removal may still be landing: so many tries, so far apart. */
const CGROUP_REMOVE_TRIES = 50;
const CGROUP_REMOVE_WAIT_MS = 20;

/** Removes a sandbox's cgroup folders (its processes are gone or going). */
export function removeCgroups(dirs: string[]): void {
  for (const dir of dirs) {
    for (let attempt = 0; attempt < CGROUP_REMOVE_TRIES && existsSync(dir); attempt++) {
      try {
        rmdirSync(dir);
      } catch {
        spawnSync('sleep', [String(CGROUP_REMOVE_WAIT_MS / 1000)]);
      }
    }
  }
}

/**
 * removeCgroups without blocking: each retry waits on a timer, so the other sandboxes' work
 * goes on meanwhile (a 20 ms sleep per try, blocking, held every episode's tools up: the event
 * loop of a rollout run stood still ~60 ms on average).
 */
export async function removeCgroupsAsync(dirs: string[]): Promise<void> {
  for (const dir of dirs) {
    for (let attempt = 0; attempt < CGROUP_REMOVE_TRIES; attempt++) {
      try {
        await fs.rmdir(dir);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') break;
        await new Promise((resolve) => setTimeout(resolve, CGROUP_REMOVE_WAIT_MS));
      }
    }
  }
}

/** The cgroup folders a sandbox id would have (for reaping what a dead run left). */
export function cgroupDirsOf(id: string, bounds: LocalBounds): string[] {
  if (bounds.memory === 'rlimit') return [];
  return bounds.memory === 'cgroup-v2' ? [`${CGROUP}/swerl/${id}`] : [`${CGROUP}/memory/swerl/${id}`, `${CGROUP}/pids/swerl/${id}`];
}
