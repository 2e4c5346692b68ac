/** `swerl train <config> [key.path=value …]`: a training run from a YAML or JSON config. */
import type { Command } from 'commander';

import { SwerlError } from '../errors.js';
import { loadTrainConfig } from '../train/config-file.js';
import { isSftConfig, resolveTrainConfig } from '../train/config.js';
import { resolveSftConfig } from '../train/sft/options.js';
import { train } from '../train/trainer.js';
import { freePortPair } from '../util/ports.js';
import { integerArg, reportRun, runFlagOverrides, stoppable, withRunFlags, type Register, type RunFlags } from './flags.js';

interface TrainFlags extends RunFlags {
  nproc?: number;
  nnodes?: number;
  nodeRank?: number;
  masterAddr?: string;
  masterPort?: number;
  repos?: string;
}

/** The flags are shorthands for overrides, so a field still crosses into the config once. */
function flagOverrides(flags: TrainFlags): string[] {
  return [
    ...runFlagOverrides(flags),
    ...(flags.repos !== undefined ? [`tasks.repos=${JSON.stringify(flags.repos)}`] : []),
  ];
}

async function trainAction(file: string, overrides: string[], flags: TrainFlags): Promise<number> {
  const { config, baseDir } = await loadTrainConfig(file, [...overrides, ...flagOverrides(flags)]);
  const world = (flags.nproc ?? 1) * (flags.nnodes ?? 1);
  // The launcher: the ranks are this command again, each told its rank (a rank sees WORLD_SIZE).
  if (world > 1 && process.env.WORLD_SIZE === undefined && !flags.printConfig) {
    if ((flags.nodeRank ?? 0) >= (flags.nnodes ?? 1)) throw new SwerlError('ERR_SWERL_INVALID_ARG', `--node-rank ${flags.nodeRank} is not below --nnodes ${flags.nnodes ?? 1}; nodes are 0 to nnodes - 1`);
    // Checked once here, so a config that cannot run fails before any rank starts.
    if (isSftConfig(config)) throw new SwerlError('ERR_SWERL_INVALID_ARG', 'an sft config trains in one process: drop --nproc/--nnodes');
    resolveTrainConfig(config, baseDir);
    const { launchRanks } = await import('./launch.js');
    const masterAddr = flags.masterAddr ?? process.env.MASTER_ADDR ?? '127.0.0.1';
    const givenPort = flags.masterPort ?? (process.env.MASTER_PORT ? Number(process.env.MASTER_PORT) : undefined);
    // One node: a free pair of its own (torchrun --standalone's choice), so two runs on a
    // machine never meet at 29500; across nodes every node must be told the same port.
    const masterPort = givenPort ?? ((flags.nnodes ?? 1) === 1 ? await freePortPair(masterAddr) : 29500);
    return launchRanks(process.argv.slice(1), {
      nproc: flags.nproc ?? 1,
      nnodes: flags.nnodes ?? 1,
      nodeRank: flags.nodeRank ?? 0,
      masterAddr,
      masterPort,
    });
  }
  // Otherwise train() checks the config first, before a sandbox or a model is touched.
  if (flags.printConfig) {
    console.log(JSON.stringify(isSftConfig(config) ? resolveSftConfig(config, baseDir) : resolveTrainConfig(config, baseDir), null, 2));
    return 0;
  }

  // The exit hook of sandbox/cleanup.ts still kills and removes every live sandbox on a forced stop.
  return reportRun(await stoppable('stopping: closing the running episodes', (signal) => train(config, { signal, baseDir })));
}

export function addTrainCommand(program: Command, register: Register): void {
  withRunFlags(
    program
      .command('train')
      .summary('train a policy (GRPO++, DAPO, Dr. GRPO, RLOO presets) from a config')
      .description('Train a policy from a YAML or JSON config. Relative input paths in the config (tasks.path, tasks.repos, model.path) are taken from the config file\'s folder; run.dir from the working directory.')
      .argument('<config>', 'a YAML or JSON config file (see examples/)')
      .argument('[overrides...]', 'key.path=value pairs replacing config fields, Hydra style (~key.path removes one)'),
  )
    .option('--repos <dir>', 'clones for dataset rows (tasks.repos=DIR)')
    .option('--nproc <n>', 'data parallel: ranks on this node, a process each (torchrun\'s --nproc-per-node)', integerArg('--nproc'))
    .option('--nnodes <n>', 'data parallel: nodes (default 1)', integerArg('--nnodes'))
    .option('--node-rank <n>', 'data parallel: this node\'s rank (default 0)', integerArg('--node-rank', 0))
    .option('--master-addr <host>', 'data parallel: where rank 0 serves the rendezvous (default 127.0.0.1)')
    .option('--master-port <port>', 'data parallel: its port, and the next one for async rollouts (default: a free pair on one node, 29500 across nodes)', integerArg('--master-port'))
    .addHelpText('after', `
Examples:
  swerl train examples/frozenlake.json
  swerl train examples/swe-mini.json run.steps=1 rollout.samplesPerTask=4 --dir runs/try
  swerl train my.yaml algorithm.preset=dapo optimizer.lr=5e-7 ~eval.every --print-config
  swerl train examples/frozenlake.json --nproc 2 --master-port 29511
Ctrl-C stops cleanly (episodes closed, finished steps kept); --resume continues.
A rank (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT set, as torchrun sets them) trains its share.`)
    .action(register(trainAction));
}
