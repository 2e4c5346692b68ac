/** `swerl train-verifier`: the execution-free verifier (a YES/NO judge) fine-tuned on labeled candidates. */
import { InvalidArgumentError, Option, type Command } from 'commander';

import { MODEL_PRESETS } from '../model/model-config.js';
import type { VerifierEpochRow, VerifierSummary } from '../train/verifier/train-verifier.js';
import { integerArg, positiveNumberArg, stoppable, type Register } from './flags.js';

interface TrainVerifierFlags {
  data: string[];
  tasks?: string;
  model?: string;
  preset?: string;
  out: string;
  epochs?: number;
  lr?: number;
  batch?: number;
  seed?: number;
  heldOut?: number;
  budget?: number;
  device?: string;
  threads?: number;
  overwrite?: boolean;
}

const fixed = (x: number | undefined, digits: number) => (x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(digits));

function tableRow(row: VerifierEpochRow): string {
  // The widths of the header's columns.
  return [String(row.epoch).padStart(5), String(row.step).padStart(7), fixed(row.trainNll, 4).padStart(11), fixed(row.heldOut?.accuracy, 3).padStart(14), fixed(row.heldOut?.auc, 3).padStart(14), fixed(row.seconds, 1).padStart(8)].join('');
}

function dataLines(summary: VerifierSummary): string[] {
  const { data } = summary;
  const from = Object.entries(data.issueFrom).filter(([, n]) => n > 0).map(([source, n]) => `${n} from ${source === 'record' ? 'the records' : source === 'tasks' ? '--tasks' : 'the first user message'}`);
  return [
    `data: ${data.labeled.yes} resolved and ${data.labeled.no} unresolved record(s) in ${data.files.length} file(s); issues: ${from.join(', ')}`,
    `balanced: train ${data.train.records} (${data.train.tasks} tasks), held out ${data.heldOut.records} (${data.heldOut.tasks} tasks), ${data.droppedByBalancing} left out`,
    `prompts: ${data.prompts.meanTokens.toFixed(0)} tokens on average, ${data.prompts.maxTokens} at most (budget ${data.prompts.tokenBudget})`,
  ];
}

async function trainVerifierAction(flags: TrainVerifierFlags): Promise<number> {
  const { trainVerifier } = await import('../train/verifier/train-verifier.js');
  const options = {
    data: flags.data,
    out: flags.out,
    ...(flags.tasks !== undefined ? { tasks: flags.tasks } : {}),
    ...(flags.model !== undefined ? { model: flags.model } : {}),
    ...(flags.preset !== undefined ? { preset: flags.preset } : {}),
    ...(flags.epochs !== undefined ? { epochs: flags.epochs } : {}),
    ...(flags.lr !== undefined ? { lr: flags.lr } : {}),
    ...(flags.batch !== undefined ? { batchSize: flags.batch } : {}),
    ...(flags.seed !== undefined ? { seed: flags.seed } : {}),
    ...(flags.heldOut !== undefined ? { heldOutFraction: flags.heldOut } : {}),
    ...(flags.budget !== undefined ? { tokenBudget: flags.budget } : {}),
    ...(flags.device !== undefined ? { device: flags.device } : {}),
    ...(flags.threads !== undefined ? { threads: flags.threads } : {}),
    ...(flags.overwrite ? { overwrite: true } : {}),
  };
  console.log('epoch  steps  train nll  held-out acc  held-out AUC       s');
  const summary = await stoppable('stopping after the running step', (signal) => trainVerifier(options, { signal, onEpoch: (row) => console.log(tableRow(row)) }));
  for (const line of dataLines(summary)) console.log(line);
  const saved = summary.metrics.length > 1;
  console.log(`${summary.stopped ? 'stopped' : 'done'}: ${summary.training.steps} step(s) in ${summary.seconds.toFixed(1)} s${saved ? `, judge in ${summary.out}` : ', no epoch finished: nothing saved'}`);
  return summary.stopped ? 130 : 0;
}

const unitFraction = (flag: string) => (value: string) => {
  const x = Number(value);
  if (value.trim() === '' || !(x >= 0 && x < 1)) throw new InvalidArgumentError(`${flag} is ${JSON.stringify(value)}; give a number in [0, 1)`);
  return x;
};

export function addTrainVerifierCommand(program: Command, register: Register): void {
  program
    .command('train-verifier')
    .summary('fine-tune a YES/NO judge on labeled candidates: held-out accuracy and AUC')
    .description(
      'The execution-free verifier: a judge reads the issue, a candidate\'s patch and its condensed trajectory and answers YES or NO; its score is ' +
        'p(YES) / (p(YES) + p(NO)). Trained on labeled candidates (reward > 0: YES) from swerl eval\'s candidates.jsonl and training runs\' ' +
        'trajectories/step-N.jsonl.gz, classes balanced, tasks held out whole, NLL on the answer tokens only. Reports held-out accuracy at 0.5 and ' +
        'AUC before training and after each epoch; the judge is saved after each epoch as a model directory (--out), with ' +
        'train-verifier-metrics.jsonl and train-verifier.json beside its weights.',
    )
    .requiredOption('--data <path...>', 'candidates.jsonl files, trajectories files, eval output folders or run directories')
    .requiredOption('--out <dir>', 'the trained judge: a model directory (swerl eval --judge-model DIR)')
    .option('--model <dir>', 'the judge to start from: a Hugging Face model directory')
    .addOption(new Option('--preset <name>', 'or a preset trained from scratch (byte tokenizer)').choices(Object.keys(MODEL_PRESETS)))
    .option('--tasks <path>', 'the task file or folder: problem statements of trajectories, by task id (else the episode\'s first user message)')
    .option('--epochs <n>', 'passes over the training set (default 2, as DeepSWE)', integerArg('--epochs'))
    .option('--lr <x>', 'AdamW learning rate (default 1e-5)', positiveNumberArg('--lr'))
    .option('--batch <n>', 'examples per optimizer step (default 8)', integerArg('--batch'))
    .option('--seed <n>', 'seeds the split, the balancing and the order (default 0)', integerArg('--seed', 0))
    .option('--held-out <fraction>', 'the share of records held out, whole tasks (default 0.2; 0: none)', unitFraction('--held-out'))
    .option('--budget <n>', 'tokens of a judge prompt at most; longest thoughts are cut first (default 8192)', integerArg('--budget'))
    .option('--device <device>', 'cpu, cuda or cuda:N (default cpu)')
    .option('--threads <n>', 'libtorch threads (0: every core)', integerArg('--threads', 0))
    .option('--overwrite', 'replace --out when it already holds files')
    .addHelpText('after', `
Examples:
  swerl train-verifier --data runs/eval-1/candidates.jsonl --model ./qwen3-0.6b --out runs/verifier
  swerl train-verifier --data runs/a runs/b --tasks rows.jsonl --model ./qwen3-0.6b --out runs/verifier --epochs 2 --lr 1e-5
Then: swerl eval ... --samples 8 --select judge,hybrid --judge-model runs/verifier`)
    .action(register((flags: TrainVerifierFlags) => trainVerifierAction(flags)));
}
