/** `swerl pretrain <config> [key.path=value …]`: reading drills until the model copies, from a config with a `pretrain` section. */
import type { Command } from 'commander';

import { invalidArg } from '../errors.js';
import { loadTrainConfig } from '../train/config-file.js';
import { isPretrainConfig } from '../train/config.js';
import { resolvePretrainConfig } from '../train/pretrain/options.js';
import { pretrain } from '../train/pretrain/pretrain.js';
import { PROBE_KINDS } from '../train/pretrain/probes.js';
import { reportRun, runFlagOverrides, stoppable, withRunFlags, type Register, type RunFlags } from './flags.js';

async function pretrainAction(file: string, overrides: string[], flags: RunFlags): Promise<number> {
  const { config, baseDir } = await loadTrainConfig(file, [...overrides, ...runFlagOverrides(flags)]);
  if (!isPretrainConfig(config)) throw invalidArg('swerl pretrain', `needs a config with a pretrain section, and ${file} has none`, 'see examples/pretrain-swe.json');
  if (flags.printConfig) {
    console.log(JSON.stringify(resolvePretrainConfig(config, baseDir), null, 2));
    return 0;
  }
  const summary = await stoppable('stopping after the running step', (signal) => pretrain(config, { signal, baseDir }));
  const probes = summary.probes;
  return reportRun(summary, probes ? [`copy probes (held-out programs): ${PROBE_KINDS.map((k) => `${k} ${probes[k].toFixed(2)}`).join(', ')}`] : []);
}

export function addPretrainCommand(program: Command, register: Register): void {
  withRunFlags(
    program
      .command('pretrain')
      .summary('teach a model from scratch to read: reading drills, copy probes')
      .description(
        'Pretrains a model (usually a preset with a domain tokenizer: model.tokenizer) on reading drills: synthetic SWE episodes of ' +
          'train-split generated programs whose every token can be had by copying from earlier in the episode (the file the issue names, ' +
          'line K of a view, a line quoted into old_str, an echoed span). Copy probes on held-out programs measure it.',
      )
      .argument('<config>', 'a YAML or JSON config with a pretrain section (see examples/pretrain-swe.json)')
      .argument('[overrides...]', 'key.path=value pairs replacing config fields'),
  )
    .addHelpText('after', `
Examples:
  swerl pretrain examples/pretrain-swe.json --dir runs/reader
  swerl pretrain examples/pretrain-swe.json pretrain.probes.every=100 --steps 200
Ctrl-C stops cleanly after the running step; --resume continues from the last checkpoint.`)
    .action(register(pretrainAction));
}
