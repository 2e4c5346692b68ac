/** A finished command's ExecResult, from what it printed and how it ended (every backend's exec returns one). */
import type { OutputCollector } from './output.js';
import type { ExecResult } from './sandbox.js';

export function execResult(output: OutputCollector, ended: { exitCode: number; timedOut: boolean; startedAt: number }): ExecResult {
  return {
    exitCode: ended.exitCode,
    stdout: output.stdout(),
    stderr: output.stderr(),
    output: output.combined(),
    timedOut: ended.timedOut,
    outputLimited: output.limited,
    durationMs: performance.now() - ended.startedAt,
  };
}
