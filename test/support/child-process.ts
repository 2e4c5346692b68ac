/** Running a TypeScript helper script as a child process, the way tap runs tests. */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root and the CLI's source, as tests run it. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = path.join(ROOT, 'lib/cli.ts');

/** Node's flags for TypeScript under tap (its loader), without tap's coverage hooks. */
export function typescriptExecArgv(): string[] {
  return process.execArgv.filter((arg) => arg.includes('@tapjs/typescript') || arg === '--enable-source-maps');
}

/** Where these helpers run compiled (scripts/gpu-check.sh's tests without tap's TypeScript loader), a script's compiled sibling. */
const COMPILED = import.meta.url.endsWith('.js');

export function spawnTs(script: string, env: Record<string, string>, args: string[] = []): ChildProcess {
  const { NODE_OPTIONS: _ignored, ...inherited } = process.env;
  const file = COMPILED ? script.replace(/\.ts$/, '.js') : script;
  return spawn(process.execPath, [...typescriptExecArgv(), file, ...args], { env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'], cwd: ROOT });
}

/** Runs `swerl args…` (lib/cli.ts) to its end from the repository root. */
export function runSwerl(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnTs(CLI, env, args);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** Runs a TypeScript script to its end from the repository root: its exit code, and stdout and stderr as they came, interleaved. */
export function runTs(script: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  const child = spawnTs(script, env, args);
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, output })));
}

/** Resolves with the first stdout line matching `pattern`; rejects if the child exits first. */
export function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`no line matching ${pattern} in ${timeoutMs} ms; stderr: ${err}`)), timeoutMs);
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = pattern.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`child exited (${code ?? signal}) before printing ${pattern}; stderr: ${err}`));
    });
  });
}

export function waitForExit(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}
