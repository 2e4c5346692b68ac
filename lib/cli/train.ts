/** `swerl train <config> [key.path=value …]`: a training run from a YAML or JSON config. */
import type { Command } from 'commander';

import { loadTrainConfig } from '../train/config-file.js';
import { isSftConfig, resolveSftConfig, resolveTrainConfig } from '../train/config.js';
import { train } from '../train/trainer.js';
import { integerArg, stoppable, type Register } from './flags.js';

interface TrainFlags {
  resume?: boolean;
  steps?: number;
  dir?: string;
  repos?: string;
  printConfig?: boolean;
}

/** The flags are shorthands for overrides, so a field still crosses into the config once. */
function flagOverrides(flags: TrainFlags): string[] {
  return [
    ...(flags.resume ? ['run.resume=true'] : []),
    ...(flags.steps !== undefined ? [`run.steps=${flags.steps}`] : []),
    ...(flags.dir !== undefined ? [`run.dir=${JSON.stringify(flags.dir)}`] : []),
    ...(flags.repos !== undefined ? [`tasks.repos=${JSON.stringify(flags.repos)}`] : []),
  ];
}

async function trainAction(file: string, overrides: string[], flags: TrainFlags): Promise<number> {
  const { config, baseDir } = await loadTrainConfig(file, [...overrides, ...flagOverrides(flags)]);
  // Otherwise train() checks the config first, before a sandbox or a model is touched.
  if (flags.printConfig) {
    console.log(JSON.stringify(isSftConfig(config) ? resolveSftConfig(config, baseDir) : resolveTrainConfig(config, baseDir), null, 2));
    return 0;
  }

  // The exit hook of sandbox/cleanup.ts still kills and removes every live sandbox on a forced stop.
  const summary = await stoppable('stopping: closing the running episodes', (signal) => train(config, { signal, baseDir }));
  const evals = summary.evals.map((e) => `${e.step}:${e.success.toFixed(3)}`).join(' ');
  console.log(`${summary.stopped ? 'stopped' : 'done'}: ${summary.steps} step(s) in ${summary.seconds.toFixed(1)} s, run dir ${summary.dir}`);
  if (evals) console.log(`greedy success by step: ${evals}`);
  if (summary.checkpoint) console.log(`last checkpoint: ${summary.checkpoint}`);
  return summary.stopped ? 130 : 0;
}

export function addTrainCommand(program: Command, register: Register): void {
  program
    .command('train')
    .summary('train a policy (GRPO++, DAPO, Dr. GRPO, RLOO presets) from a config')
    .description('Train a policy from a YAML or JSON config. Relative input paths in the config (tasks.path, tasks.repos, model.path) are taken from the config file\'s folder; run.dir from the working directory.')
    .argument('<config>', 'a YAML or JSON config file (see examples/)')
    .argument('[overrides...]', 'key.path=value pairs replacing config fields, Hydra style (~key.path removes one)')
    .option('--resume', 'continue the run in run.dir from its last checkpoint (run.resume=true)')
    .option('--steps <n>', 'training steps (run.steps=N)', integerArg('--steps'))
    .option('--dir <dir>', 'the run directory (run.dir=DIR)')
    .option('--repos <dir>', 'clones for dataset rows (tasks.repos=DIR)')
    .option('--print-config', 'print the config with every default filled in, and exit')
    .addHelpText('after', `
Examples:
  swerl train examples/frozenlake.json
  swerl train examples/swe-mini.json run.steps=1 rollout.samplesPerTask=4 --dir runs/try
  swerl train my.yaml algorithm.preset=dapo optimizer.lr=5e-7 ~eval.every --print-config
Ctrl-C stops cleanly (episodes closed, finished steps kept); --resume continues.`)
    .action(register(trainAction));
}
