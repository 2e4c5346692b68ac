import { readFileSync } from 'node:fs';

/** The middle value of timings (the upper one of the two middles for an even count). */
export function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
}

/** /proc/stat's processes started since boot and CPU seconds spent (busy, all cores); null off Linux. */
export function machineCounters(): { processes: number; cpuSeconds: number } | null {
  try {
    const stat = readFileSync('/proc/stat', 'utf8');
    const processes = Number(/^processes (\d+)$/m.exec(stat)![1]);
    // user nice system idle iowait irq softirq steal: all but idle and iowait are busy.
    const ticks = /^cpu +(.*)$/m.exec(stat)![1]!.trim().split(/\s+/).map(Number);
    const busy = ticks.slice(0, 8).reduce((sum, value, i) => (i === 3 || i === 4 ? sum : sum + value), 0);
    return { processes, cpuSeconds: busy / 100 };
  } catch {
    return null;
  }
}
