/**
 * Starting processes from small helper processes instead of this one. Node's spawn forks the
 * whole process and waits, on the event loop's thread, until the child has called exec: ~7 ms
 * for a small process, ~50 ms for one holding 2 GB (measured: `node` spawning `true` with a 2 GB
 * buffer held), longer while the cores are busy. A rollout run holds a model and starts some
 * thirty processes an episode (every sandbox command, the disk's mkfs and mount), so the event
 * loop stood still ~40-60 ms on average, and every episode's tools and the sampler with it.
 *
 * A helper is a Node process of a few tens of MB that spawns on request and streams the child's
 * output back over its IPC channel; requests go to the least busy of a few. A helper exits
 * when this process does (its IPC channel closes), killing the process groups it started, so
 * nothing started through it outlives this process (bwrap's --die-with-parent adds to that).
 * SWERL_SPAWNER=0 spawns in this process instead.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { startChild } from './start-child.mjs';

export interface SpawnRequest {
  program: string;
  args: string[];
  env: Record<string, string>;
  /** Its own process group (killed as one, by -pid). */
  detached: boolean;
  uid?: number;
  gid?: number;
  stdin: string | Uint8Array;
}

export interface SpawnHandlers {
  stdout(chunk: Buffer): void;
  stderr(chunk: Buffer): void;
}

export interface Spawned {
  /** The child's pid once it has started (rejects when it could not be started). */
  pid: Promise<number>;
  /** When it has exited and its output has been delivered. */
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

type ToHelper = { type: 'spawn'; id: number; request: SpawnRequest };
type FromHelper =
  | { type: 'pid'; id: number; pid: number }
  | { type: 'out' | 'err'; id: number; data: Uint8Array }
  | { type: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null }
  | { type: 'error'; id: number; message: string };

interface Pending {
  handlers: SpawnHandlers;
  pid: { resolve: (pid: number) => void; reject: (error: Error) => void };
  exit: { resolve: (value: { code: number | null; signal: NodeJS.Signals | null }) => void; reject: (error: Error) => void };
}

/** Plain JavaScript beside this file, in lib/ and in dist/lib/ alike (tsc copies it). */
const HELPER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'spawner-helper.mjs');

class Helper {
  readonly pending = new Map<number, Pending>();
  readonly child: ChildProcess;
  #dead: Error | undefined;

  constructor() {
    // No flags of this process (a TypeScript loader, -e SCRIPT): the helper is plain JavaScript.
    this.child = spawn(process.execPath, [HELPER], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
      env: { ...process.env, SWERL_SPAWNER_HELPER: '1' },
    });
    // An idle helper keeps nothing alive; a pending request holds this process up (hold/release).
    this.child.unref();
    this.#channel()?.unref();
    this.child.on('message', (m: FromHelper) => this.#receive(m));
    const die = (why: string) => {
      this.#dead ??= new Error(`the process-spawning helper ${why}`);
      for (const p of this.pending.values()) {
        p.pid.reject(this.#dead);
        p.exit.reject(this.#dead);
      }
      this.pending.clear();
    };
    this.child.on('exit', (code, signal) => die(`exited (${signal ?? code})`));
    this.child.on('error', (error) => die(`failed: ${error.message}`));
  }

  get alive(): boolean {
    return this.#dead === undefined;
  }

  #channel(): { ref(): void; unref(): void } | undefined {
    return this.child.channel as { ref(): void; unref(): void } | undefined;
  }

  add(id: number, pending: Pending): void {
    if (this.pending.size === 0) this.#channel()?.ref();
    this.pending.set(id, pending);
  }

  #done(id: number): void {
    this.pending.delete(id);
    if (this.pending.size === 0) this.#channel()?.unref();
  }

  #receive(m: FromHelper): void {
    const p = this.pending.get(m.id);
    if (!p) return;
    switch (m.type) {
      case 'pid':
        p.pid.resolve(m.pid);
        break;
      case 'out':
        p.handlers.stdout(Buffer.from(m.data));
        break;
      case 'err':
        p.handlers.stderr(Buffer.from(m.data));
        break;
      case 'exit':
        this.#done(m.id);
        p.exit.resolve({ code: m.code, signal: m.signal });
        break;
      case 'error':
        this.#done(m.id);
        p.pid.reject(new Error(m.message));
        p.exit.reject(new Error(m.message));
        break;
    }
  }
}

let helpers: Helper[] = [];
let nextId = 1;
const HELPERS = Math.max(2, Math.min(4, os.availableParallelism()));

function pickHelper(): Helper {
  helpers = helpers.filter((h) => h.alive);
  while (helpers.length < HELPERS) helpers.push(new Helper());
  return helpers.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
}

/** A request's promises, and the Pending that settles them (a failure rejects both). */
function pendingSpawn(handlers: SpawnHandlers): { pending: Pending; spawned: Spawned } {
  let pending!: Pending;
  const pid = new Promise<number>((resolve, reject) => {
    pending = { handlers, pid: { resolve, reject }, exit: undefined as unknown as Pending['exit'] };
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    pending.exit = { resolve, reject };
  });
  // Whoever awaits only `exit` must not see an unhandled rejection of `pid`.
  pid.catch(() => undefined);
  return { pending, spawned: { pid, exit } };
}

function spawnInProcess(request: SpawnRequest, handlers: SpawnHandlers): Spawned {
  const { pending, spawned } = pendingSpawn(handlers);
  startChild(request, {
    started: pending.pid.resolve,
    stdout: handlers.stdout,
    stderr: handlers.stderr,
    failed(error) {
      pending.pid.reject(error);
      pending.exit.reject(error);
    },
    closed: (code, signal) => pending.exit.resolve({ code, signal }),
  });
  return spawned;
}

/** Starts `request` from a helper (or here, with SWERL_SPAWNER=0); its output reaches `handlers`. */
export function spawnProcess(request: SpawnRequest, handlers: SpawnHandlers): Spawned {
  // A helper never starts helpers of its own (should it ever load this module).
  if (process.env.SWERL_SPAWNER === '0' || process.env.SWERL_SPAWNER_HELPER === '1') return spawnInProcess(request, handlers);
  const helper = pickHelper();
  const id = nextId++;
  const { pending, spawned } = pendingSpawn(handlers);
  helper.add(id, pending);
  helper.child.send({ type: 'spawn', id, request } satisfies ToHelper);
  return spawned;
}

/** Runs a host command to completion: its exit code and stderr (for mkfs, mount and the like). */
export async function runToCompletion(program: string, args: string[], stdin: string | Uint8Array = ''): Promise<{ code: number | null; stderr: string }> {
  let stderr = '';
  const { exit } = spawnProcess({ program, args, env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin' }, detached: false, stdin }, {
    stdout: () => undefined,
    stderr: (chunk) => (stderr += chunk.toString()),
  });
  const { code } = await exit;
  return { code, stderr };
}
