/** What the verbs share: flag value parsers, the flags several verbs take, the action wrapper. */
import { InvalidArgumentError, Option, type Command } from 'commander';

import { SANDBOX_BACKENDS } from '../env/sandbox/options.js';
import type { TrainSummary } from '../train/run.js';

/** A flag's value as a whole number >= min (commander calls it with the text given). */
export function integerArg(flag: string, min = 1): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${flag} is ${JSON.stringify(value)}; give ${min === 1 ? 'a positive integer' : `an integer >= ${min}`}`);
    return n;
  };
}

/** A flag's value as a number > 0. */
export function positiveNumberArg(flag: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === '' || !(n > 0) || !Number.isFinite(n)) throw new InvalidArgumentError(`${flag} is ${JSON.stringify(value)}; give a number > 0`);
    return n;
  };
}

/** A flag's value as a number in [min, max]. */
export function boundedNumberArg(flag: string, min: number, max: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max) throw new InvalidArgumentError(`${flag} is ${JSON.stringify(value)}; give a number in [${min}, ${max}]`);
    return n;
  };
}

/** A flag's comma-separated list, each item one of `allowed`. */
export function listArg(flag: string, allowed: readonly string[]): (value: string) => string[] {
  return (value) => {
    const items = value.split(',').map((item) => item.trim());
    const bad = items.find((item) => !allowed.includes(item));
    if (bad !== undefined) throw new InvalidArgumentError(`${flag} has ${JSON.stringify(bad)}; give a comma-separated list of ${allowed.join(', ')}`);
    return items;
  };
}

/** A flag's `N` or `A-B` (whole numbers >= min, A <= B). */
export function rangeArg(flag: string, min: number): (value: string) => { min: number; max: number } {
  return (value) => {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(value);
    const [a, b] = m ? [Number(m[1]), Number(m[2] ?? m[1])] : [NaN, NaN];
    if (!m || a < min || a > b || !Number.isSafeInteger(b)) throw new InvalidArgumentError(`${flag} is ${JSON.stringify(value)}; give N or A-B, whole numbers >= ${min} with A <= B`);
    return { min: a, max: b };
  };
}

/** --host and --port, as every verb that serves takes them. */
export function withListenFlags(command: Command, defaultPort: number, hostHelp = 'the address to listen on'): Command {
  return command.option('--host <host>', hostHelp, '127.0.0.1').option('--port <n>', 'the port (0: any free port)', integerArg('--port', 0), defaultPort);
}

/** Resolves at the first SIGINT or SIGTERM: a server runs until Ctrl-C. */
export function untilStopped(): Promise<void> {
  return new Promise((done) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => done());
  });
}

/**
 * Runs a training job (train, sft) under Ctrl-C: the first SIGINT/SIGTERM/SIGHUP aborts the
 * signal handed to `job` (finish nothing new, close every env, keep what is written), a second
 * one forces. The job closes its envs itself, so cleanup.ts's signal handlers stay off: they
 * would destroy sandboxes under episodes still resetting (an ERR_SWERL_SANDBOX instead of a
 * clean stop) and re-raise the signal, which would be taken for the second Ctrl-C and exit
 * before summary.json is written. Nor may a closed terminal or pipe (SIGHUP, `| head`) turn a
 * stop into a crash: an EPIPE/EIO on the progress output would be an uncaught exception, with
 * episodes still open.
 */
export async function stoppable<T>(stopping: string, job: (signal: AbortSignal) => Promise<T>): Promise<T> {
  process.env.SWERL_NO_SIGNAL_HANDLERS = '1';
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  const stop = new AbortController();
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const onSignal = () => {
    if (stop.signal.aborted) process.exit(130);
    console.error(`\nswerl: ${stopping} (Ctrl-C again to force)`);
    stop.abort();
  };
  for (const signal of signals) process.on(signal, onSignal);
  try {
    return await job(stop.signal);
  } finally {
    for (const signal of signals) process.removeListener(signal, onSignal);
  }
}

/** Wraps a verb's action for commander: the exit code it resolves with becomes the program's. */
export type Register = <A extends unknown[]>(action: (...args: A) => Promise<number>) => (...args: A) => Promise<void>;

/** --sandbox local|docker, as every verb that runs tasks takes it. */
export function sandboxOption(): Option {
  return new Option('--sandbox <backend>', 'the sandbox backend').choices(SANDBOX_BACKENDS).default('local');
}

/**
 * What a training command prints when its run ends (train, sft, pretrain): done or stopped,
 * the steps and the run directory, the trainer's own lines, greedy success by step and the
 * last checkpoint. The exit code: 130 for a stopped run (as a shell reports SIGINT), else 0.
 */
export function reportRun(summary: TrainSummary, lines: readonly string[] = []): number {
  console.log(`${summary.stopped ? 'stopped' : 'done'}: ${summary.steps} step(s) in ${summary.seconds.toFixed(1)} s, run dir ${summary.dir}`);
  for (const line of lines) console.log(line);
  const evals = summary.evals.map((e) => `${e.step}:${e.success.toFixed(3)}`).join(' ');
  if (evals) console.log(`greedy success by step: ${evals}`);
  if (summary.checkpoint) console.log(`last checkpoint: ${summary.checkpoint}`);
  return summary.stopped ? 130 : 0;
}

/** The run's flags every training command takes (train, sft, pretrain). */
export interface RunFlags {
  resume?: boolean;
  steps?: number;
  dir?: string;
  printConfig?: boolean;
}

/** Adds the run's flags: --resume, --steps, --dir and --print-config. */
export function withRunFlags(command: Command): Command {
  return command
    .option('--resume', 'continue the run in run.dir from its last checkpoint (run.resume=true)')
    .option('--steps <n>', 'training steps (run.steps=N)', integerArg('--steps'))
    .option('--dir <dir>', 'the run directory (run.dir=DIR)')
    .option('--print-config', 'print the config with every default filled in, and exit');
}

/** The run's flags as the overrides they are shorthands for, so a field still crosses into the config once. */
export function runFlagOverrides(flags: RunFlags): string[] {
  return [
    ...(flags.resume ? ['run.resume=true'] : []),
    ...(flags.steps !== undefined ? [`run.steps=${flags.steps}`] : []),
    ...(flags.dir !== undefined ? [`run.dir=${JSON.stringify(flags.dir)}`] : []),
  ];
}
