/**
 * The swerl command line on commander: every verb and sub-verb answers -h/--help, the program
 * answers --version, and a mistyped verb or flag gets the verb's usage and a "did you mean".
 * Exit codes: 0 done, 1 failed, 2 a usage error (a bad flag, argument or config), 130 stopped.
 */
import { Command, CommanderError } from 'commander';

import { SwerlError } from '../errors.js';
import { packageInfo } from '../util/package-info.js';
import { addEvalCommand } from './eval.js';
import { addSandboxCommand } from './sandbox.js';
import { addServeCommand } from './serve.js';
import { addPretrainCommand } from './pretrain.js';
import { addSftCommand } from './sft.js';
import { addTasksCommand } from './tasks.js';
import { addTokenizerCommand } from './tokenizer.js';
import { addTrainCommand } from './train.js';
import { addTrainVerifierCommand } from './train-verifier.js';
import { addViewCommand } from './view.js';
import type { Register } from './flags.js';

export const USAGE_ERROR = 2;

/** The program, its verbs added; `exitCode` receives what the action that ran returned. */
export function buildProgram(exitCode: (code: number) => void): Command {
  const program = new Command('swerl')
    .description('reinforcement learning for software-engineering agents: GRPO++ over multi-turn trajectories in repository sandboxes')
    .version(packageInfo().version, '-V, --version', 'print the version')
    .helpCommand('help [command]', 'help for a command')
    // Set before the verbs are added, so each of them inherits it.
    .exitOverride()
    .showHelpAfterError()
    .showSuggestionAfterError()
    .configureOutput({ outputError: (text, write) => write(`swerl: ${text.replace(/^error: /, '')}`) });
  const register: Register = (action) => async (...args) => exitCode(await action(...args));
  addTrainCommand(program, register);
  addSftCommand(program, register);
  addPretrainCommand(program, register);
  addEvalCommand(program, register);
  addTrainVerifierCommand(program, register);
  addServeCommand(program, register);
  addViewCommand(program, register);
  addTasksCommand(program, register);
  addTokenizerCommand(program, register);
  addSandboxCommand(program, register);
  program.addHelpText('after', `
Every command answers --help. Start with:
  swerl train examples/frozenlake.json            the demo's run (a tiny model learns FrozenLake)
  swerl train examples/swe-mini.json run.steps=1  one step of the SWE pipeline in local sandboxes
  swerl view runs/*                               curves and trajectories in the browser`);
  return program;
}

/** Runs the command line; resolves with the exit code. */
export async function runCli(argv: readonly string[]): Promise<number> {
  let code = 0;
  const program = buildProgram((c) => (code = c));
  // The verb that is running, for "see swerl X --help" after an error of its arguments.
  let verb = 'swerl';
  program.hook('preAction', (_, action) => {
    const names: string[] = [];
    for (let c: Command | null = action; c; c = c.parent) names.unshift(c.name());
    verb = names.join(' ');
  });
  if (argv.length === 0) {
    program.outputHelp();
    return 0;
  }
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : USAGE_ERROR;
    if (error instanceof SwerlError) {
      const usage = error.code === 'ERR_SWERL_INVALID_ARG';
      console.error(`swerl: ${error.message}${usage && verb !== 'swerl' ? `\n(${verb} --help shows its usage)` : ''}`);
      return usage ? USAGE_ERROR : 1;
    }
    console.error(error);
    return 1;
  }
}
