/**
 * One Docker sandbox: a running container whose commands go through the exec API, and whose
 * command trees are killed by its PID 1 (SIGUSR1) or by a second exec (docker.ts tells how).
 *
 * When its daemon stops answering (the host is down, its socket gone), the sandbox is lost:
 * commands fail with ERR_SWERL_SANDBOX (an infrastructure fault: the rollout engine plays the
 * episode again in a fresh sandbox, on a host that answers), its host's slot is freed, and
 * destroy() leaves the container to be removed when the host answers again (or at exit, or by
 * the reaper).
 */
import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';

import type Docker from 'dockerode';

import { SwerlError } from '../../errors.js';
import { track } from './cleanup.js';
import { connectionFailure, errorMessage, statusOf } from './docker-errors.js';
import { demultiplex, exitCodeOf, killByMarkerScript, sleep } from './docker-exec.js';
import { pendingRemoval, removeAtExit, removePendingSync } from './docker-reaper.js';
import type { HostLease } from './docker-host.js';
import { execResult } from './exec-result.js';
import { OutputCollector } from './output.js';
import { ExecFilesSandbox, type ExecOptions, type ExecResult, type SandboxLimits } from './sandbox.js';

/** How long a stopped command's stream may take to end before the next step (sweep, then cut). */
const STOP_GRACE_MS = 5_000;

interface RunningExec {
  marker: string;
}

export class DockerSandbox extends ExecFilesSandbox {
  destroyed = false;
  private readonly running = new Set<RunningExec>();
  private readonly inflight = new Set<Promise<unknown>>();
  /** A container-wide kill in progress: new commands wait for it. */
  private sweeping: Promise<void> | null = null;
  private removing: Promise<void> | null = null;
  /** Why the daemon stopped answering, once it did: the sandbox is not used again. */
  private lostBecause: string | null = null;
  private readonly untrack: () => void;

  constructor(
    readonly id: string,
    readonly label: string,
    readonly workdir: string,
    private readonly container: Docker.Container,
    private readonly lease: HostLease,
    protected readonly limits: SandboxLimits,
  ) {
    super();
    removeAtExit(container.id, lease.connection);
    this.untrack = track(this);
  }

  exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    if (this.destroyed) return Promise.reject(new SwerlError('ERR_SWERL_SANDBOX', `sandbox ${this.id} was destroyed`));
    if (this.lostBecause !== null) return Promise.reject(this.lostError());
    const state: RunningExec = { marker: `SWERL_EXEC=${randomBytes(8).toString('hex')}` };
    this.running.add(state);
    const result = this.run(command, options, state);
    this.inflight.add(result);
    const done = () => {
      this.running.delete(state);
      this.inflight.delete(result);
    };
    result.then(done, done);
    return result;
  }

  destroy(): Promise<void> {
    this.destroyed = true;
    this.removing ??= this.remove().catch((error: unknown) => {
      this.removing = null; // a later destroy() (or the exit hook, or a reaper) tries again
      throw error;
    });
    return this.removing;
  }

  /** At process exit: removes this (and every other pending) container through a child process. */
  destroySync(): void {
    this.destroyed = true;
    if (pendingRemoval.has(this.container.id)) removePendingSync();
  }

  private async remove(): Promise<void> {
    let lost: string | null = null;
    try {
      await this.container.remove({ force: true, v: true });
    } catch (error) {
      lost = connectionFailure(error);
      if (lost === null && statusOf(error) !== 404) throw new SwerlError('ERR_SWERL_SANDBOX', `could not remove container ${this.id}: ${errorMessage(error)}`);
    }
    if (lost === null) {
      pendingRemoval.delete(this.container.id);
      this.lease.end();
    } else {
      // Nothing can be removed from a host that does not answer; the container waits for it.
      this.lease.removeLater(this.container.id);
      this.lease.lost();
    }
    await Promise.allSettled([...this.inflight]);
    this.untrack();
  }

  /** The daemon stopped answering: the sandbox is lost (and its host's slot freed). */
  private hostLost(why: string): SwerlError {
    this.lostBecause ??= why;
    this.lease.lost();
    return this.lostError();
  }

  private lostError(): SwerlError {
    return new SwerlError('ERR_SWERL_SANDBOX', `sandbox ${this.id} lost its Docker host ${this.lease.name}: ${this.lostBecause}`);
  }

  private async run(command: string, options: ExecOptions, state: RunningExec): Promise<ExecResult> {
    if (this.sweeping) await this.sweeping;
    const started = performance.now();
    const timeoutMs = options.timeoutMs ?? this.limits.timeoutMs;
    const output = new OutputCollector(options.maxOutputBytes ?? this.limits.maxOutputBytes);
    const stdin = options.stdin !== undefined && options.stdin.length > 0 ? options.stdin : undefined;
    const env: Record<string, string> = { ...options.env, SWERL_SANDBOX: this.id };
    delete env[state.marker.slice(0, state.marker.indexOf('='))];
    let exec: Docker.Exec;
    let stream: Duplex;
    try {
      exec = await this.container.exec({
        Cmd: ['sh', '-c', command],
        AttachStdin: stdin !== undefined,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
        Env: [...Object.entries(env).map(([k, v]) => `${k}=${v}`), state.marker],
        WorkingDir: options.cwd ?? this.workdir,
      });
      stream = await exec.start({ hijack: true, stdin: stdin !== undefined });
    } catch (error) {
      if (this.destroyed) throw new SwerlError('ERR_SWERL_SANDBOX', `sandbox ${this.id} was destroyed`);
      const lost = connectionFailure(error);
      if (lost !== null) throw this.hostLost(lost);
      const why = statusOf(error) === 409 ? ' (its container is not running: does the image have sh and sleep?)' : '';
      throw new SwerlError('ERR_SWERL_SANDBOX', `could not run a command in sandbox ${this.id}: ${errorMessage(error)}${why}`);
    }
    const ended = new Promise<void>((resolve) => {
      stream.once('end', resolve);
      stream.once('close', resolve);
      stream.once('error', () => resolve());
    });
    let timedOut = false;
    let stopping: Promise<void> | null = null;
    const stop = () => void (stopping ??= this.stop(state, stream, ended));
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, timeoutMs);
    demultiplex(stream, (kind, data) => {
      if (!output.push(kind, data)) stop();
    });
    if (stdin !== undefined) {
      stream.on('error', () => undefined); // the command may exit without reading its input
      stream.write(stdin);
      stream.end();
    }
    await ended;
    clearTimeout(timer);
    if (stopping) await stopping;
    let exitCode = -1;
    if (!timedOut) {
      try {
        exitCode = await exitCodeOf(exec);
      } catch (error) {
        // The stream ended because the daemon went away: the command's fate is unknown.
        throw this.hostLost(connectionFailure(error) ?? errorMessage(error));
      }
    }
    return execResult(output, { exitCode, timedOut, startedAt: started });
  }

  /**
   * Kills one command's whole tree. Alone in the sandbox: PID 1 kills every other process.
   * Beside other commands: its marked processes are stopped and killed by a second exec;
   * whatever still holds its output open after that is swept container-wide too.
   */
  private async stop(state: RunningExec, stream: Duplex, ended: Promise<void>): Promise<void> {
    const within = (ms: number) => Promise.race([ended.then(() => true), sleep(ms).then(() => false)]);
    if (this.running.size > 1 && (await this.killMarked(state.marker)) && (await within(STOP_GRACE_MS))) return;
    let endSweep!: () => void;
    const sweep = new Promise<void>((resolve) => (endSweep = resolve));
    this.sweeping = sweep;
    try {
      // Bounded: a daemon that no longer answers must not hold the command past its grace.
      await Promise.race([this.container.kill({ signal: 'SIGUSR1' }).catch(() => undefined), sleep(STOP_GRACE_MS)]);
      if (!(await within(STOP_GRACE_MS))) stream.destroy();
      await ended;
    } finally {
      endSweep();
      if (this.sweeping === sweep) this.sweeping = null;
    }
  }

  /** A second exec that kills the processes carrying `marker`; true when it finished cleanly. */
  private async killMarked(marker: string): Promise<boolean> {
    try {
      const exec = await this.container.exec({ Cmd: ['sh', '-c', killByMarkerScript(marker)], AttachStdout: true, AttachStderr: true, Tty: false, WorkingDir: '/' });
      const stream = await exec.start({ hijack: true, stdin: false });
      stream.resume();
      const ended = new Promise<boolean>((resolve) => {
        stream.once('end', () => resolve(true));
        stream.once('close', () => resolve(true));
        stream.once('error', () => resolve(false));
      });
      if (!(await Promise.race([ended, sleep(STOP_GRACE_MS).then(() => false)]))) {
        stream.destroy();
        return false;
      }
      return (await exitCodeOf(exec)) === 0;
    } catch {
      return false;
    }
  }
}
