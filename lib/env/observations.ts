/**
 * Observation text of the execute_bash tool, byte for byte as docs/swe-env.md describes
 * (R2E-Gym's shape): the exit code line, the tool line, then the output with ANSI escapes and
 * carriage returns removed and the middle of long outputs cut.
 */

/** Outputs longer than this many lines keep their first and last EDGE_LINES lines. */
export const MAX_OUTPUT_LINES = 80;
export const EDGE_LINES = 40;

// CSI sequences (colours, cursor moves), OSC sequences (titles, links), and the other escapes:
// ESC, intermediate bytes 0x20-0x2F, a final byte 0x30-0x7E (e.g. ESC ( B, ESC =).
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[ -/]*[0-~]/g;

export function stripTerminalControls(text: string): string {
  return text.replace(ANSI, '').replace(/\r/g, '');
}

/** The first and last 40 lines of an output over 80 lines, with a marker between. */
export function truncateMiddle(text: string): string {
  // A final newline ends the last line; it does not start another one.
  const trailing = text.endsWith('\n') ? '\n' : '';
  const lines = (trailing ? text.slice(0, -1) : text).split('\n');
  if (lines.length <= MAX_OUTPUT_LINES) return text;
  const cut = lines.length - 2 * EDGE_LINES;
  return (
    [
      ...lines.slice(0, EDGE_LINES),
      `[... ${cut} lines truncated: narrow the command, e.g. with grep, head or tail ...]`,
      ...lines.slice(-EDGE_LINES),
    ].join('\n') + trailing
  );
}

export interface BashResult {
  exitCode: number;
  /** stdout and stderr combined, in order. */
  output: string;
  timedOut: boolean;
}

export function bashObservation(result: BashResult, timeoutSeconds: number): string {
  const code = result.timedOut ? '-1' : result.exitCode === 0 ? '0' : `Error: Exit code ${result.exitCode}`;
  const output = result.timedOut
    ? `The command took too long to execute (>${timeoutSeconds}s)`
    : truncateMiddle(stripTerminalControls(result.output));
  return `Exit code: ${code}\nExecution output of [execute_bash]:\n${output}`;
}
