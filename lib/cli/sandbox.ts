/** `swerl sandbox reap`: remove the sandboxes of runs that died. */
import { Option, type Command } from 'commander';

import { createSandboxBackend } from '../env/sandbox/backends.js';
import { SANDBOX_BACKENDS } from '../env/sandbox/options.js';
import type { Register } from './program.js';

async function reapAction(flags: { sandbox: string; label?: string; all: boolean }): Promise<number> {
  const backend = await createSandboxBackend(flags.sandbox);
  const removed = await backend.reap({ ...(flags.label ? { label: flags.label } : {}), all: flags.all });
  console.log(`removed ${removed} sandbox(es)`);
  return 0;
}

export function addSandboxCommand(program: Command, register: Register): void {
  const sandbox = program.command('sandbox').summary('manage sandboxes').description('Manage the sandboxes runs leave behind.');
  sandbox
    .command('reap')
    .description('remove sandboxes left by runs that died (their owner process is gone)')
    .addOption(sandboxOption())
    .option('--label <label>', 'only this run label')
    .option('--all', 'also those of live runs', false)
    .action(register(reapAction));
}

/** --sandbox local|docker, as every verb that runs tasks takes it. */
export function sandboxOption(): Option {
  return new Option('--sandbox <backend>', 'the sandbox backend').choices(SANDBOX_BACKENDS).default('local');
}
