/**
 * The sandbox interface every backend implements (local bubblewrap, Docker API). A sandbox
 * holds one rollout's copy of a repository at `workdir` (/testbed); commands run inside it
 * with no network, and only the work tree is writable.
 *
 * Every sandbox carries the run's label and its own id, so a reaper can find what a crashed
 * run left behind (see each backend's `reap`).
 */
import path from 'node:path';

import { SwerlError } from '../../errors.js';
import type { Infer } from '../../schema.js';
import type { TarEntry } from './tar.js';

export interface ExecOptions {
  /** Wall-clock limit in milliseconds; the whole process tree is killed when it passes. */
  timeoutMs?: number;
  /** Working directory inside the sandbox; default: the work tree. */
  cwd?: string;
  /** Extra environment variables (added to the sandbox's base environment). */
  env?: Record<string, string>;
  /** Bytes of stdout+stderr kept; past this the command is killed and `outputLimited` set. */
  maxOutputBytes?: number;
  /** Bytes written to the command's stdin (then closed). Default: stdin is empty. */
  stdin?: string | Uint8Array;
}

export interface ExecResult {
  /** The exit status; 128+N when killed by signal N; -1 when it timed out. */
  exitCode: number;
  stdout: Buffer;
  stderr: Buffer;
  /** stdout and stderr interleaved in arrival order, as text. */
  output: string;
  timedOut: boolean;
  /** The output passed maxOutputBytes: the rest was dropped and the command killed. */
  outputLimited: boolean;
  durationMs: number;
}

export interface Sandbox {
  /** This sandbox's id, unique on the machine. */
  readonly id: string;
  /** The run label it was created under (reapers select on it). */
  readonly label: string;
  /** The repository's path inside the sandbox. */
  readonly workdir: string;
  /** Runs `sh -c command` inside the sandbox. Never throws for a failing command. */
  exec(command: string, options?: ExecOptions): Promise<ExecResult>;
  /** Reads a file inside the sandbox (absolute, or relative to the work tree). */
  readFile(path: string): Promise<Buffer>;
  /** Writes a file inside the sandbox, creating parent folders. */
  writeFile(path: string, data: string | Uint8Array): Promise<void>;
  /** Removes every process, file and container of this sandbox. Idempotent. */
  destroy(): Promise<void>;
  /** Whether destroy() has run. */
  readonly destroyed: boolean;
}

/** What a backend needs to create a sandbox. */
export interface SandboxSpec {
  /** A host folder copied in as the work tree (swerl's own task format). */
  repoDir?: string;
  /**
   * Files laid over repoDir's copy as the sandbox is made (with repoDir only), owned as the
   * work tree is: what every sandbox of a task would otherwise make again (its base commit's
   * .git, base-commit.ts), without a command inside the sandbox.
   */
  overlay?: readonly TarEntry[];
  /** A container image holding the repo at `workdir` (Docker backend; SWE-bench/R2E-Gym images). */
  image?: string;
  /** Default: /testbed. */
  workdir?: string;
  /** Environment variables every command gets (on top of the backend's base environment). */
  env?: Record<string, string>;
  /** Run label; default: the process's default label (see defaultRunLabel). */
  label?: string;
  /**
   * Local backend: commands go to a shell that lives as long as the sandbox (local-shell.ts), a
   * fork each instead of a bwrap each; each still starts in a fresh `sh` with only its own
   * environment, and nothing it started outlives it. For a sandbox whose commands the policy
   * writes (the agent's): grading keeps a bwrap per command. The docker backend runs every
   * command as an exec of its own either way.
   */
  persistentShell?: boolean;
}

/** The defaults of a sandbox's limits. */
export const DEFAULT_LIMITS = {
  cpuSeconds: 600,
  memoryBytes: 4 * 1024 ** 3,
  maxProcesses: 256,
  maxFileBytes: 256 * 1024 ** 2,
  diskBytes: 4 * 1024 ** 3,
  shmBytes: 64 * 1024 ** 2,
  maxOutputBytes: 8 * 1024 ** 2,
  timeoutMs: 90_000,
} as const;

/** A sandbox's limits (SandboxLimits), every field defaulted, for options sections. */
export const LIMITS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    /** CPU seconds per process. */
    cpuSeconds: { type: 'integer', minimum: 1, default: DEFAULT_LIMITS.cpuSeconds },
    /**
     * Bytes of memory for the whole sandbox (a cgroup: docker always, local where the machine
     * lets swerl make one), and the address space of each of its processes (local).
     */
    memoryBytes: { type: 'integer', minimum: 64 * 1024 ** 2, default: DEFAULT_LIMITS.memoryBytes },
    /** Processes (and threads) the sandbox may have at once. */
    maxProcesses: { type: 'integer', minimum: 4, default: DEFAULT_LIMITS.maxProcesses },
    /** The largest file a command may write, in bytes. */
    maxFileBytes: { type: 'integer', minimum: 1024, default: DEFAULT_LIMITS.maxFileBytes },
    /**
     * Bytes the work tree and /tmp may hold together (local as root: a loop-mounted ext4 image
     * per sandbox; docker: the container's storage quota where the driver has one, and /tmp).
     */
    diskBytes: { type: 'integer', minimum: 16 * 1024 ** 2, default: DEFAULT_LIMITS.diskBytes },
    /** Size of the sandbox's /dev/shm (a tmpfs; the rest of /dev is read-only). */
    shmBytes: { type: 'integer', minimum: 1024 ** 2, default: DEFAULT_LIMITS.shmBytes },
    /** Default exec output cap, in bytes. */
    maxOutputBytes: { type: 'integer', minimum: 1024, default: DEFAULT_LIMITS.maxOutputBytes },
    /** Default exec timeout, in milliseconds. */
    timeoutMs: { type: 'integer', minimum: 1, default: DEFAULT_LIMITS.timeoutMs },
  },
} as const;
export type SandboxLimits = Infer<typeof LIMITS_SCHEMA>;

export interface SandboxBackend {
  readonly name: 'local' | 'docker';
  create(spec: SandboxSpec): Promise<Sandbox>;
  /**
   * Removes sandboxes whose creating process is gone (all of them with `all`), optionally
   * only those with `label`. Returns how many it removed.
   */
  reap(options?: { label?: string; all?: boolean }): Promise<number>;
}


/** Labels are used in file and container names: keep them to a safe alphabet. */
export const LABEL_PATTERN = /^[a-z0-9][a-z0-9_.-]{0,62}$/;

/** Quotes a string for sh. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** A path inside the sandbox: absolute as given, or relative to the work tree. */
export function sandboxPath(workdir: string, file: string): string {
  return file.startsWith('/') ? file : `${workdir.replace(/\/$/, '')}/${file}`;
}

/**
 * What both backends' sandboxes share: files read and written through the sandbox's own exec
 * (`cat`), by the sandbox's own user, so links inside the work tree cannot reach the host.
 */
export abstract class ExecFilesSandbox implements Sandbox {
  abstract readonly id: string;
  abstract readonly label: string;
  abstract readonly workdir: string;
  abstract readonly destroyed: boolean;
  protected abstract readonly limits: SandboxLimits;
  abstract exec(command: string, options?: ExecOptions): Promise<ExecResult>;
  abstract destroy(): Promise<void>;

  async readFile(file: string): Promise<Buffer> {
    const maxBytes = this.limits.maxFileBytes;
    const result = await this.exec(`cat -- ${shellQuote(sandboxPath(this.workdir, file))}`, { maxOutputBytes: maxBytes });
    if (result.exitCode !== 0 || result.outputLimited) {
      const why = result.outputLimited ? `larger than maxFileBytes (${maxBytes})` : result.stderr.toString().trim();
      throw new SwerlError('ERR_SWERL_SANDBOX', `cannot read ${file}: ${why}`);
    }
    return result.stdout;
  }

  async writeFile(file: string, data: string | Uint8Array): Promise<void> {
    const full = sandboxPath(this.workdir, file);
    const target = shellQuote(full);
    // The parent named here, not by $(dirname): every process a sandbox command starts costs
    // milliseconds of CPU, and most writes go to a folder that exists (`[ -d ]` is sh's own).
    const parent = shellQuote(path.posix.dirname(full));
    const prepare = `{ [ -d ${parent} ] || mkdir -p -- ${parent}; }`;
    const result = await this.exec(`${prepare} && cat > ${target}`, { stdin: data });
    if (result.exitCode === 0) return;
    // When the command fails before reading its input, a Docker API server may report its own
    // broken stdin pipe instead of the command's error (seen with podman's attach); the same
    // write without input says why it failed.
    const probe = await this.exec(`${prepare} && : > ${target}`);
    const reason = probe.exitCode !== 0 ? probe.output : result.output;
    throw new SwerlError('ERR_SWERL_SANDBOX', `cannot write ${file}: ${reason.trim()}`);
  }
}
