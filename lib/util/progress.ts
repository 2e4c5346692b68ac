/**
 * Progress on the terminal: live bars (cli-progress) when stderr is a terminal, plain lines
 * otherwise, so a log file gets no carriage returns or escape codes. Times and rates are
 * formatted here, once, for every command.
 */
import cliProgress from 'cli-progress';

/** 42s, 3m05s, 1h02m, 2d03h. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '-';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  return `${Math.floor(s / 86400)}d${String(Math.floor((s % 86400) / 3600)).padStart(2, '0')}h`;
}

/** 0.42/s, 12.3/s, 4.5k/s; with a unit, 12.3 ep/s. */
export function formatRate(count: number, seconds: number, unit = ''): string {
  if (!(seconds > 0) || !Number.isFinite(count)) return '-';
  const r = count / seconds;
  const value = r >= 10_000 ? `${(r / 1000).toFixed(0)}k` : r >= 1000 ? `${(r / 1000).toFixed(1)}k` : r >= 10 ? r.toFixed(1) : r.toFixed(2);
  return `${value}${unit ? ` ${unit}` : ''}/s`;
}

/** Remaining time when `done` of `total` took `seconds` at a steady rate. */
export function eta(done: number, total: number, seconds: number): number {
  return done > 0 ? (seconds / done) * (total - done) : NaN;
}

export function textBar(fraction: number, width: number): string {
  const full = Math.round(Math.max(0, Math.min(1, fraction)) * width);
  return `${'█'.repeat(full)}${'░'.repeat(width - full)}`;
}

/** One live line: redrawn with what `render` returns. */
export interface LiveLine {
  update(text: string): void;
  remove(): void;
}

/** Live lines under a log of plain lines; on a non-terminal only the log is written. */
export interface ProgressDisplay {
  readonly live: boolean;
  line(): LiveLine;
  log(text: string): void;
  stop(): void;
}

export function progressDisplay(live: boolean, stream: NodeJS.WriteStream = process.stderr): ProgressDisplay {
  if (!live) {
    const quiet: LiveLine = { update: () => undefined, remove: () => undefined };
    return { live, line: () => quiet, log: (text) => void stream.write(text.endsWith('\n') ? text : `${text}\n`), stop: () => undefined };
  }
  const bars = new cliProgress.MultiBar({
    stream,
    // The text is ours: a format that prints the payload as it is.
    format: (_options, _params, payload: { text?: string }) => payload.text ?? '',
    hideCursor: false,
    clearOnComplete: true,
    linewrap: false,
    fps: 5,
    // Draw even when the stream reports no TTY (live was asked for: run.progress 'bar').
    noTTYOutput: stream.isTTY !== true,
    notTTYSchedule: 2000,
  });
  return {
    live,
    line() {
      const bar = bars.create(1, 0, { text: '' });
      return { update: (text) => bar.update(0, { text }), remove: () => bars.remove(bar) };
    },
    log: (text) => bars.log(text.endsWith('\n') ? text : `${text}\n`),
    stop: () => bars.stop(),
  };
}
