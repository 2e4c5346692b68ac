/**
 * A shell that lives as long as a local sandbox (SandboxSpec.persistentShell), so that a
 * command costs a fork of it instead of a bwrap of its own (the cgroup's join, prlimit, bwrap
 * and its namespaces and mounts): ~9 ms of CPU a command against ~32 (bench/README.md).
 *
 * The shell runs inside one bwrap made as every command's is (the same limits, cgroup and
 * binds), plus a folder of the host's bound read-only at SHELL_IO: three FIFOs made with the
 * sandbox (`req`, the requests; `o` and `e`, a command's stdout and stderr) and the scripts the
 * host writes there. For each command the host writes a script under a fresh name (`cd` to the
 * command's folder, then `env -i` with its environment and `sh -c` the command), opens o and e
 * to read, and sends the name; the shell runs the script with its stdin, stdout and stderr
 * bound there, then kills every process left in the sandbox's pid namespace but itself (as a
 * bwrap of its own would have on its exit) and answers `<name> <status>`. The host holds a
 * writer of o and e of its own until that answer, so their end of file marks the end of that
 * command's output and of nothing else.
 *
 * A command that times out or floods its output takes the shell down with it (its process
 * group is killed, as a command's own bwrap is); the next command starts another. A command
 * issued while another runs gets a bwrap of its own (LocalSandbox.exec). A command that kills
 * every process it can reach kills the shell too and ends as killed (137).
 *
 * What the commands in such a sandbox can do to the shell (write requests through /proc, kill
 * it) they can do only to their own sandbox: it is for the agent's sandbox, whose work tree the
 * policy owns anyway; grading keeps a bwrap per command.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, constants, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

import type { OutputCollector } from './output.js';
import { shellQuote } from './sandbox.js';
import type { Spawned } from './spawner.js';

/** Where the host's folder of FIFOs and scripts appears inside the sandbox. */
export const SHELL_IO = '/.swerl-io';

/** The host's steps that make the shell's folder in `folder` (with the sandbox's disk), owned by `uid` where given. */
export function shellFolderSteps(folder: string, uid: number | null): [string, string[]][] {
  const io = path.join(folder, 'io');
  const fifos = ['req', 'o', 'e'].map((name) => path.join(io, name));
  return [
    ['mkdir', ['-m', '711', '--', io]],
    ['mkfifo', ['-m', '600', '--', ...fifos]],
    ...(uid === null ? [] : [['chown', [`${uid}:${uid}`, '--', ...fifos]] as [string, string[]]]),
  ];
}

/**
 * The shell (dash or any POSIX sh). A request is a name of hex digits, run once: one that names
 * no script, or the script last run, is passed over (a command can write to `req` through /proc).
 */
const SERVER = [
  `exec 3<>${SHELL_IO}/req`,
  'echo ready',
  'last=',
  'while read -r n <&3; do',
  "  case $n in ''|*[!0-9a-f]*) continue;; esac",
  `  [ "$n" != "$last" ] && [ -f ${SHELL_IO}/$n ] || continue`,
  '  last=$n',
  `  i=/dev/null; [ -f ${SHELL_IO}/$n.in ] && i=${SHELL_IO}/$n.in`,
  `  (. ${SHELL_IO}/$n) <"$i" >${SHELL_IO}/o 2>${SHELL_IO}/e 3<&-`,
  '  s=$?',
  // Every process but this shell and pid 1 (kill(-1) under the kernel's task list lock: no fork
  // escapes it). dash takes -1 after `-9`, not after `-s KILL`.
  '  kill -9 -1 2>/dev/null',
  '  echo "$n $s"',
  'done',
].join('\n');

/** The exit status of a command whose shell was killed (SIGKILL). */
const KILLED = 128 + 9;

export interface ShellCommand {
  command: string;
  env: Record<string, string>;
  cwd: string;
  stdin: string | Uint8Array;
  timeoutMs: number;
  output: OutputCollector;
}

/** A FIFO read to its end, with the host's own writer held until release(). */
class FifoReader {
  readonly ended: Promise<void>;
  private hold: number | null;
  private readonly socket: net.Socket;

  constructor(file: string, onData: (chunk: Buffer) => void) {
    const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
    this.hold = openSync(file, constants.O_WRONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
    this.socket = new net.Socket({ fd, readable: true, writable: false });
    this.socket.on('data', onData);
    this.ended = new Promise((resolve) => this.socket.once('close', () => resolve()));
    this.socket.on('error', () => this.socket.destroy());
  }

  /** Lets end of file come once the command's writers are gone too. */
  release(): void {
    if (this.hold === null) return;
    closeSync(this.hold);
    this.hold = null;
  }
}

/** A running shell: its process, its requests' writer, and the lines it answered not yet read. */
interface Server {
  spawned: Spawned;
  requests: number | null;
  lines: string[];
  onLine: (() => void) | null;
  exited: boolean;
}

/** The shell of one sandbox: started on the first command, again after one that took it down. */
export class LocalShell {
  /** A command is running (another one then gets a bwrap of its own). */
  busy = false;
  /** The shell could not start: every command of this sandbox gets a bwrap of its own. */
  broken = false;
  private server: Server | null = null;

  /**
   * @param io the host folder bound at SHELL_IO
   * @param start starts `sh -c script` in the sandbox's bwrap with SHELL_IO bound, in a process group of its own
   * @param kill kills a process group
   */
  constructor(
    private readonly io: string,
    private readonly start: (script: string, handlers: { stdout(chunk: Buffer): void }) => Spawned,
    private readonly kill: (pid: number) => void,
  ) {}

  /**
   * Runs one command; null when it was never sent (the shell could not start, or was gone
   * before the request): the caller runs it in a bwrap of its own.
   */
  async run(command: ShellCommand): Promise<{ exitCode: number; timedOut: boolean } | null> {
    this.busy = true;
    try {
      const server = await this.ready();
      return server && (await this.runOn(server, command));
    } finally {
      this.busy = false;
    }
  }

  /** Kills the shell (the sandbox's destroy); resolves once it has exited. */
  stop(): Promise<void> {
    const server = this.server;
    if (!server) return Promise.resolve();
    void server.spawned.pid.then(this.kill, () => undefined);
    return server.spawned.exit.then(() => undefined, () => undefined);
  }

  private async ready(): Promise<Server | null> {
    if (this.server && !this.server.exited) return this.server;
    let partial = '';
    const spawned = this.start(SERVER, {
      stdout: (chunk) => {
        const lines = (partial + chunk.toString('latin1')).split('\n');
        partial = lines.pop()!;
        server.lines.push(...lines);
        server.onLine?.();
      },
    });
    const server: Server = { spawned, requests: null, lines: [], onLine: null, exited: false };
    this.server = server;
    void spawned.exit.catch(() => undefined).then(() => {
      server.exited = true;
      if (server.requests !== null) closeSync(server.requests);
      server.requests = null;
      server.onLine?.();
    });
    if ((await this.nextLine(server)) !== 'ready') {
      // Killed, not dropped: a shell that answered something else is still running, and stop() must reach it.
      this.broken = true;
      void spawned.pid.then(this.kill, () => undefined);
      return null;
    }
    try {
      server.requests = openSync(path.join(this.io, 'req'), constants.O_WRONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
    } catch {
      return null; // it exited meanwhile (ENXIO: no reader)
    }
    if (server.exited) {
      closeSync(server.requests);
      server.requests = null;
      return null;
    }
    return server;
  }

  /** The shell's next line, or null once it has exited. */
  private nextLine(server: Server): Promise<string | null> {
    return new Promise((resolve) => {
      const check = (): void => {
        if (server.lines.length > 0) {
          server.onLine = null;
          resolve(server.lines.shift()!);
        } else if (server.exited) {
          server.onLine = null;
          resolve(null);
        }
      };
      server.onLine = check;
      check();
    });
  }

  private async runOn(server: Server, command: ShellCommand): Promise<{ exitCode: number; timedOut: boolean } | null> {
    const name = randomBytes(8).toString('hex');
    const script = path.join(this.io, name);
    const input = path.join(this.io, `${name}.in`);
    const environment = Object.entries(command.env).map(([key, value]) => shellQuote(`${key}=${value}`)).join(' ');
    let killed = false;
    let timedOut = false;
    const stop = (): void => {
      if (killed) return;
      killed = true;
      void server.spawned.pid.then(this.kill, () => undefined);
    };
    const push = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
      if (!command.output.push(stream, chunk)) stop();
    };
    const readers: FifoReader[] = [];
    let timer: NodeJS.Timeout | undefined;
    try {
      try {
        // Readable by the sandbox's uid whatever this process's umask (as root, the sandbox is another user).
        writeFileSync(script, `cd -- ${shellQuote(command.cwd)} || exit 1\nexec env -i ${environment} sh -c ${shellQuote(command.command)}\n`);
        chmodSync(script, 0o644);
        if (command.stdin.length > 0) {
          writeFileSync(input, command.stdin);
          chmodSync(input, 0o644);
        }
        readers.push(new FifoReader(path.join(this.io, 'o'), push('stdout')), new FifoReader(path.join(this.io, 'e'), push('stderr')));
        writeSync(server.requests!, `${name}\n`);
      } catch {
        return null; // the shell went between commands (EPIPE, or its writer closed), or its folder went with the sandbox
      }
      timer = setTimeout(() => {
        timedOut = true;
        stop();
      }, command.timeoutMs);
      let exitCode: number | null = null;
      for (let line = await this.nextLine(server); line !== null; line = await this.nextLine(server)) {
        const [answered, status] = line.split(' ');
        if (answered === name) {
          exitCode = Number(status);
          break;
        }
      }
      // No answer: the shell is gone (killed here, or by the command), and every process of the sandbox with it.
      if (exitCode === null || killed) {
        stop();
        await server.spawned.exit.catch(() => undefined);
      }
      for (const reader of readers) reader.release();
      await Promise.all(readers.map((reader) => reader.ended));
      return { exitCode: timedOut ? -1 : killed || exitCode === null ? KILLED : exitCode, timedOut };
    } finally {
      clearTimeout(timer);
      for (const reader of readers) reader.release();
      rmSync(script, { force: true });
      rmSync(input, { force: true });
    }
  }
}
