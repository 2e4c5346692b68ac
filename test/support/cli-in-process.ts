/** Runs the swerl CLI in this process (runCli), collecting what it writes to stdout and stderr. */
import { runCli } from '../../lib/cli/program.js';

export async function cliInProcess(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const saved = { out: process.stdout.write, err: process.stderr.write, log: console.log, error: console.error };
  process.stdout.write = ((chunk: string | Uint8Array) => ((stdout += chunk.toString()), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => ((stderr += chunk.toString()), true)) as typeof process.stderr.write;
  console.log = (...args: unknown[]) => void (stdout += `${args.join(' ')}\n`);
  console.error = (...args: unknown[]) => void (stderr += `${args.join(' ')}\n`);
  try {
    return { code: await runCli(argv), stdout, stderr };
  } finally {
    process.stdout.write = saved.out;
    process.stderr.write = saved.err;
    console.log = saved.log;
    console.error = saved.error;
  }
}
