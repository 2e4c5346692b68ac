/**
 * Who owns a sandbox: the creating process's pid and its start time (field 22 of
 * /proc/PID/stat), so that a reaper can tell a live owner from a dead one whose pid was reused.
 */
import { readFileSync } from 'node:fs';

export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** This process's start time. */
export const OWN_START = processStartTime(process.pid) ?? '';

export function ownerAlive(pid: number, start: string): boolean {
  return Number.isInteger(pid) && pid > 0 && processStartTime(pid) === start;
}

/** This process as the names of its half-made things say it ("<pid>.<start>"), for a reaper after a kill -9. */
export const OWNER_TAG = `${process.pid}.${OWN_START}`;

/** The owner tag at the start of `rest` ("<pid>.<start>-…"), or null where it has none. */
export function ownerTagOf(rest: string): { pid: number; start: string } | null {
  const m = /^(\d+)\.(\d*)-/.exec(rest);
  return m === null ? null : { pid: Number(m[1]), start: m[2]! };
}

/** The owner tag at the start of `rest` is a process still running. */
export function taggedOwnerAlive(rest: string): boolean {
  const tag = ownerTagOf(rest);
  return tag !== null && ownerAlive(tag.pid, tag.start);
}
