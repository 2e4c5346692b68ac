/** `swerl sft <data...> <config> [key.path=value …]`: supervised fine-tuning on the data named, from a config. */
import type { Command } from 'commander';

import { invalidArg } from '../errors.js';
import { loadTrainConfig } from '../train/config-file.js';
import { resolveSftConfig } from '../train/sft/options.js';
import { sft } from '../train/sft/sft.js';
import { reportRun, runFlagOverrides, stoppable, withRunFlags, type Register, type RunFlags } from './flags.js';

type SftFlags = RunFlags;

/** `a.b=value`, `+a.b=value`, `~a.b`: an override; anything else is a path. */
const OVERRIDE = /^(?:\+{0,2}[A-Za-z_][\w-]*(?:\.[\w-]+)*=|~[A-Za-z_][\w-]*(?:\.[\w-]+)*$)/;

/** The words after `swerl sft`: data paths, then the config, with overrides anywhere. */
export function splitSftArguments(words: readonly string[]): { data: string[]; config: string; overrides: string[] } {
  const overrides = words.filter((w) => OVERRIDE.test(w));
  const paths = words.filter((w) => !OVERRIDE.test(w));
  if (paths.length === 0) throw invalidArg('swerl sft', 'needs a config file', 'swerl sft <data...> <config> [key.path=value ...]');
  return { data: paths.slice(0, -1), config: paths.at(-1)!, overrides };
}

async function sftAction(words: string[], flags: SftFlags): Promise<number> {
  const { data, config: file, overrides } = splitSftArguments(words);
  // The data named here replaces the config's sft.data (taken from the working directory, as every path typed here is).
  const dataOverride = data.length ? [`sft.data=${JSON.stringify(data)}`] : [];
  const { config, baseDir } = await loadTrainConfig(file, [...dataOverride, ...overrides, ...runFlagOverrides(flags)]);
  if ((config.sft as { data?: unknown } | undefined)?.data === undefined)
    throw invalidArg('swerl sft', `has no data: none was named and ${file} has no sft.data`, 'name the data before the config: swerl sft conversations.jsonl config.json');
  if (flags.printConfig) {
    console.log(JSON.stringify(resolveSftConfig(config, baseDir), null, 2));
    return 0;
  }

  // Ctrl-C as under swerl train: the step running ends, an eval's episodes are closed, what is written stays.
  const summary = await stoppable('stopping after the running step', (signal) => sft(config, { signal, baseDir }));
  const last = summary.last as { loss?: { nll?: number }; heldOut?: { nll?: number } } | undefined;
  return reportRun(summary, typeof last?.loss?.nll === 'number' ? [`last step: nll ${last.loss.nll.toFixed(4)}${typeof last.heldOut?.nll === 'number' ? `, held-out nll ${last.heldOut.nll.toFixed(4)}` : ''}`] : []);
}

export function addSftCommand(program: Command, register: Register): void {
  withRunFlags(
    program
      .command('sft')
      .summary('supervised fine-tuning on chat JSONL or saved trajectories')
      .description(
        'Supervised fine-tuning: token-mean NLL on the assistant turns of chat conversations ({"messages": [...]} per line, rendered with the ' +
          'Qwen3 chat template) or on the sampled tokens of saved trajectories (a run\'s trajectories/step-N.jsonl.gz, a folder of them, or a run ' +
          'directory; ids and masks as saved). The data named replaces the config\'s sft.data; without any, sft.data is used.',
      )
      .usage('[options] <data...> <config> [overrides...]')
      .argument('<data-and-config...>', 'data files or folders, then a YAML or JSON config (see examples/sft-tiny.json); key.path=value overrides anywhere'),
  )
    .addHelpText('after', `
Examples:
  swerl sft examples/sft-tiny.json                          the example's own data (sft.data)
  swerl sft conversations.jsonl my.yaml sft.maxLength=16384 --dir runs/sft
  swerl sft runs/a sft.minReward=1 my.yaml --steps 50        solved rollouts of an RL run
Ctrl-C stops cleanly after the running step; --resume continues.`)
    .action(register((words: string[], flags: SftFlags) => sftAction(words, flags)));
}
