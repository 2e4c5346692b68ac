/**
 * `swerl train --nproc N`: torchrun's job for swerl. Starts N ranks of this node (ranks
 * nodeRank * N … nodeRank * N + N - 1 of WORLD_SIZE = nnodes * N), each this same command
 * line in a process of its own with RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT
 * set (train() reads them: lib/train/parallel.ts). Rank 0 of the node speaks on the console;
 * the others' stderr comes prefixed with their rank. Ctrl-C reaches every rank (each closes
 * its episodes and sandboxes); a rank that fails stops the others (SIGTERM, then SIGKILL of
 * its process group after a grace), so nothing is left behind; the exit code is the first
 * failure's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import readline from 'node:readline';

export interface LaunchOptions {
  nproc: number;
  nnodes: number;
  nodeRank: number;
  masterAddr: string;
  masterPort: number;
  /** How long a failed group's other ranks get to close before SIGKILL. Default 15 s. */
  graceMs?: number;
}

/** Runs the ranks to their end; resolves with the exit code the launcher should give. */
export async function launchRanks(argv: readonly string[], options: LaunchOptions): Promise<number> {
  const world = options.nproc * options.nnodes;
  const ranks: ChildProcess[] = [];
  let failure: { rank: number; code: number } | undefined;
  let stopping = false;
  const grace = options.graceMs ?? 15_000;

  const stopOthers = (signal: NodeJS.Signals) => {
    for (const child of ranks) if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    const killer = setTimeout(() => {
      for (const child of ranks) if (child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }, grace);
    killer.unref();
  };

  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      stopOthers('SIGKILL');
      return;
    }
    stopping = true;
    console.error(`swerl train: stopping ${ranks.length} rank(s) (Ctrl-C again to force)`);
    for (const child of ranks) child.kill(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const exits = Array.from({ length: options.nproc }, (_, local) => {
    const rank = options.nodeRank * options.nproc + local;
    const child = spawn(process.execPath, [...process.execArgv, ...argv], {
      env: {
        ...process.env,
        RANK: String(rank),
        LOCAL_RANK: String(local),
        WORLD_SIZE: String(world),
        LOCAL_WORLD_SIZE: String(options.nproc),
        MASTER_ADDR: options.masterAddr,
        MASTER_PORT: String(options.masterPort),
      },
      // Its own process group: a forced stop takes the rank and everything it started.
      detached: true,
      stdio: ['ignore', rank === 0 ? 'inherit' : 'ignore', 'pipe'],
    });
    ranks.push(child);
    readline.createInterface({ input: child.stderr! }).on('line', (line) => console.error(rank === 0 ? line : `[rank ${rank}] ${line}`));
    return new Promise<void>((resolve) =>
      child.on('exit', (code, signal) => {
        const status = code ?? (signal ? 128 + ({ SIGINT: 2, SIGTERM: 15, SIGKILL: 9 }[signal as string] ?? 1) : 1);
        if (status !== 0 && !failure && !stopping) {
          failure = { rank, code: status };
          console.error(`swerl train: rank ${rank} exited with ${signal ?? `code ${code}`}; stopping the other ranks`);
          stopOthers('SIGTERM');
        } else if (status !== 0 && !failure && stopping) failure = { rank, code: status };
        resolve();
      }),
    );
  });
  await Promise.all(exits);
  process.removeListener('SIGINT', onSignal);
  process.removeListener('SIGTERM', onSignal);
  return failure?.code ?? 0;
}
