/** `swerl view <run dirs…>`: curves and trajectories of runs in the browser. */
import type { Command } from 'commander';

import { untilStopped, withListenFlags, type Register } from './flags.js';

async function viewAction(dirs: string[], flags: { host: string; port: number }): Promise<number> {
  const { startViewer } = await import('../view/server.js');
  const viewer = await startViewer({ dirs, host: flags.host, port: flags.port });
  console.log(`swerl view: ${viewer.url} (Ctrl-C stops)`);
  await untilStopped();
  await viewer.close();
  return 0;
}

export function addViewCommand(program: Command, register: Register): void {
  const view = program
    .command('view')
    .summary('look at runs in the browser: live curves, trajectories, eval reports')
    .description('A local web page over run directories: live curves of every metric (several runs overlaid), and a trajectory browser (the conversation turn by turn, the loss mask on the tokens, the patch, the tests, the reward).')
    .argument('<dirs...>', 'run directories (run.dir of swerl train), swerl eval output folders, or folders of those');
  withListenFlags(view, 6060, 'the address to listen on (loopback by default: the page shows your tasks and code)').action(register(viewAction));
}
