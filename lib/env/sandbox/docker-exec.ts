/** Pieces of running a command through the exec API: its output frames, its exit code, killing its processes. */
import type { Duplex } from 'node:stream';

import type Docker from 'dockerode';

import { connectionFailure } from './docker-errors.js';
import { shellQuote } from './sandbox.js';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Splits Docker's multiplexed exec stream (8-byte frame headers) into stdout and stderr. */
export function demultiplex(stream: Duplex, onFrame: (kind: 'stdout' | 'stderr', data: Buffer) => void): void {
  let pending: Buffer = Buffer.alloc(0);
  stream.on('data', (chunk: Buffer) => {
    pending = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length >= 8) {
      const size = pending.readUInt32BE(4);
      if (pending.length < 8 + size) break;
      const kind = pending[0];
      const data = pending.subarray(8, 8 + size);
      pending = pending.subarray(8 + size);
      if (kind === 1) onFrame('stdout', data);
      else if (kind === 2) onFrame('stderr', data);
    }
  });
}

/** Stops and kills every process whose environment holds `marker` (VAR=value), until none is left. */
export function killByMarkerScript(marker: string): string {
  return [
    `m=${shellQuote(marker)}`,
    'i=0',
    'while [ $i -lt 50 ]; do',
    '  pids=',
    '  for f in $(grep -lsxzF -e "$m" /proc/[0-9]*/environ); do p=${f#/proc/}; pids="$pids ${p%/environ}"; done',
    '  [ -z "$pids" ] && exit 0',
    '  kill -STOP $pids 2>/dev/null; kill -KILL $pids 2>/dev/null',
    '  i=$((i+1))',
    'done',
    'exit 1',
  ].join('\n');
}

/** The exec's exit code (-1 when its container is gone); a daemon that no longer answers throws. */
export async function exitCodeOf(exec: Docker.Exec): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      const info = await exec.inspect();
      if (!info.Running) return info.ExitCode ?? -1;
    } catch (error) {
      if (connectionFailure(error) !== null) throw error;
      return -1; // the container is gone
    }
    await sleep(20);
  }
  return -1;
}
