/** What the verbs share: flag value parsers, the flags several verbs take, the action wrapper. */
import { InvalidArgumentError, Option, type Command } from 'commander';

import { SANDBOX_BACKENDS } from '../env/sandbox/options.js';

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

/** Wraps a verb's action for commander: the exit code it resolves with becomes the program's. */
export type Register = <A extends unknown[]>(action: (...args: A) => Promise<number>) => (...args: A) => Promise<void>;

/** --sandbox local|docker, as every verb that runs tasks takes it. */
export function sandboxOption(): Option {
  return new Option('--sandbox <backend>', 'the sandbox backend').choices(SANDBOX_BACKENDS).default('local');
}
