/** `swerl sandbox reap`: remove the sandboxes of runs that died; `swerl sandbox seccomp-profile`: the docker sandboxes' profile. */
import type { Command } from 'commander';

import { createSandboxBackend } from '../env/sandbox/backends.js';
import { SANDBOX_SECCOMP_PROFILE } from '../env/sandbox/seccomp.js';
import { sandboxOption, type Register } from './flags.js';

async function reapAction(flags: { sandbox: string; label?: string; all: boolean }): Promise<number> {
  const backend = await createSandboxBackend(flags.sandbox);
  const removed = await backend.reap({ ...(flags.label ? { label: flags.label } : {}), all: flags.all });
  console.log(`removed ${removed} sandbox(es)`);
  return 0;
}

async function seccompProfileAction(): Promise<number> {
  console.log(JSON.stringify(SANDBOX_SECCOMP_PROFILE, null, 2));
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
  sandbox
    .command('seccomp-profile')
    .description("print the seccomp profile of docker sandboxes (a remote Podman host needs it as a file: its host's seccompProfile option)")
    .action(register(seccompProfileAction));
}
