/**
 * trainVerifier(options): the execution-free verifier's training (`swerl train-verifier`).
 * Labeled candidates (records.ts) are held out by task and balanced (split.ts), rendered with
 * the judge's own prompt (lib/tts/judge.ts, so training and scoring see identical ids), and
 * the judge is fine-tuned on the answer alone: token-mean NLL on "YES" or "NO" and the
 * <|im_end|> after it (the mask is 1 exactly there), which is the quantity the score reads.
 * Before training and after each epoch the held-out candidates are scored as the judge scores
 * them, p(YES) / (p(YES) + p(NO)), for accuracy at 0.5 and AUC. Everything is checked (data,
 * classes, split, prompts) before a model is loaded or anything written; the judge is saved
 * after every epoch as a model directory, its metrics and summary beside the weights.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

import { invalidArg } from '../../errors.js';
import { loadTasks } from '../../env/tasks/load.js';
import { ByteTokenizer } from '../../model/byte-tokenizer.js';
import { loadTokenizer } from '../../model/hf-tokenizer.js';
import { presetConfig } from '../../model/model-config.js';
import { NativePolicy } from '../../model/native-policy.js';
import { answerIds, judgePrompt, judgeSequence, scoreJudgePrompts } from '../../tts/judge.js';
import type { Tokenizer } from '../../types/tokenizer.js';
import { writeFileAtomic, writeJsonAtomic } from '../../util/atomic.js';
import { mixSeed, permutation } from '../../util/random.js';
import { mean } from '../../util/stats.js';
import { isRequestedStop } from '../run.js';
import { sftStep } from '../sft/core.js';
import { assertFitsVocabulary, type SftExample } from '../sft/example.js';
import { accuracyAt, rocAuc } from './metrics.js';
import { loadVerifierData, type LabeledRecord, type VerifierData } from './records.js';
import { parseTrainVerifierOptions, type TrainVerifierOptions } from './options.js';
import { balanceClasses, classCounts, splitByTask, type ClassCounts } from './split.js';

export const METRICS_FILE = 'train-verifier-metrics.jsonl';
export const SUMMARY_FILE = 'train-verifier.json';

export interface HeldOutMetrics {
  /** YES when p(YES) / (p(YES) + p(NO)) > 0.5. */
  accuracy: number;
  auc: number;
  /** Mean score of the resolved and of the unresolved candidates. */
  meanScore: { yes: number; no: number };
}

export interface VerifierEpochRow {
  /** 0: before training. */
  epoch: number;
  /** Optimizer steps so far. */
  step: number;
  /** Mean NLL (nats per answer token) of the epoch's steps; absent before training. */
  trainNll?: number;
  heldOut?: HeldOutMetrics;
  seconds: number;
}

interface SideSummary extends ClassCounts {
  records: number;
  tasks: number;
}

export interface VerifierSummary {
  out: string;
  startedFrom: string;
  stopped: boolean;
  seconds: number;
  data: {
    files: VerifierData['files'];
    issueFrom: VerifierData['issueFrom'];
    labeled: ClassCounts;
    train: SideSummary;
    /** The held-out tasks' ids too: score them with the saved judge to compare. */
    heldOut: SideSummary & { taskIds: string[] };
    /** Records the balancing left out (the larger class's excess on each side). */
    droppedByBalancing: number;
    prompts: { tokenBudget: number; meanTokens: number; maxTokens: number; thoughtsCut: number; observationsCut: number; turnsDropped: number; patchesCut: number; issuesCut: number };
  };
  training: { epochs: number; steps: number; lr: number; batchSize: number; seed: number; answerIds: { yes: number[]; no: number[] } };
  metrics: VerifierEpochRow[];
  /** The last epoch's held-out metrics. */
  heldOut?: HeldOutMetrics;
}

export interface TrainVerifierHooks {
  /** Before training (epoch 0) and after each epoch. */
  onEpoch?: (row: VerifierEpochRow) => void;
  /** Checked between steps: the epoch running is dropped, the last saved judge stays. */
  signal?: AbortSignal;
}

async function judgeTokenizer(options: TrainVerifierOptions): Promise<Tokenizer> {
  // As NativePolicy.load decides it: the directory's tokenizer.json, else bytes.
  if (options.preset !== undefined || !existsSync(path.join(options.model!, 'tokenizer.json'))) return new ByteTokenizer();
  return loadTokenizer(options.model!);
}

async function problemStatements(tasks: string | undefined): Promise<Map<string, string> | undefined> {
  if (tasks === undefined) return undefined;
  const loaded = await loadTasks(tasks);
  return new Map(loaded.tasks.map((t) => [t.id, t.problemStatement]));
}

const sideSummary = (items: readonly LabeledRecord[]): SideSummary => ({ records: items.length, tasks: new Set(items.map((r) => r.taskId)).size, ...classCounts(items) });

interface Rendered {
  record: LabeledRecord;
  prompt: Int32Array;
}

async function heldOutMetrics(policy: NativePolicy, heldOut: readonly Rendered[], batchSize: number): Promise<HeldOutMetrics | undefined> {
  if (heldOut.length === 0) return undefined;
  const scores = await scoreJudgePrompts(policy, heldOut.map((h) => h.prompt), { batchSize });
  const labels = heldOut.map((h) => h.record.resolved);
  return {
    accuracy: accuracyAt(scores, labels, 0.5),
    auc: rocAuc(scores, labels),
    meanScore: { yes: mean(scores.filter((_, i) => labels[i])), no: mean(scores.filter((_, i) => !labels[i])) },
  };
}

function assertWritable(out: string, overwrite: boolean): void {
  if (!existsSync(out) || overwrite) return;
  if (readdirSync(out).length > 0) throw invalidArg('out', `(${out}) already holds files`, 'choose a new directory, or pass --overwrite to replace it');
}

/** Trains a judge on labeled candidates; resolves with the summary also written to out/train-verifier.json. */
export async function trainVerifier(raw: unknown, hooks: TrainVerifierHooks = {}): Promise<VerifierSummary> {
  const options = parseTrainVerifierOptions(raw);
  const started = performance.now();
  const out = path.resolve(options.out);
  assertWritable(out, options.overwrite);

  // The data, its classes, the split and the prompts are all checked before a model loads.
  const data = await loadVerifierData({ paths: options.data, ...(options.tasks !== undefined ? { issues: await problemStatements(options.tasks) } : {}) });
  const labeled = classCounts(data.records);
  if (labeled.yes === 0 || labeled.no === 0)
    throw invalidArg('--data', `has ${labeled.yes} resolved (reward > 0) and ${labeled.no} unresolved record(s)`, 'a judge learns to tell the two apart: give data with both (swerl eval --samples k on tasks the policy sometimes solves)');
  const split = splitByTask(data.records, options.heldOutFraction, options.seed);
  const train = balanceClasses(split.train, mixSeed(options.seed, 1));
  const heldOut = balanceClasses(split.heldOut, mixSeed(options.seed, 2));
  if (train.length === 0) throw invalidArg('--data', `leaves no balanced training record: the training tasks have ${JSON.stringify(classCounts(split.train))}`, 'add data with both classes, or lower --held-out');

  const tokenizer = await judgeTokenizer(options);
  const render = (record: LabeledRecord): Rendered & { cut: ReturnType<typeof judgePrompt>['cut'] } => {
    const prompt = judgePrompt(tokenizer, record, { tokenBudget: options.tokenBudget }, record.where);
    return { record, prompt: prompt.ids, cut: prompt.cut };
  };
  const trainRendered = train.map(render);
  const heldOutRendered = heldOut.map(render);
  const all = [...trainRendered, ...heldOutRendered];
  const examples: SftExample[] = trainRendered.map(({ record, prompt }) => ({ ...judgeSequence(tokenizer, prompt, record.resolved), source: record.where, id: record.where }));

  const summary: VerifierSummary = {
    out,
    startedFrom: options.model !== undefined ? path.resolve(options.model) : `preset ${options.preset}`,
    stopped: false,
    seconds: 0,
    data: {
      files: data.files,
      issueFrom: data.issueFrom,
      labeled,
      train: sideSummary(train),
      heldOut: { ...sideSummary(heldOut), taskIds: [...new Set(heldOut.map((r) => r.taskId))] },
      droppedByBalancing: data.records.length - train.length - heldOut.length,
      prompts: {
        tokenBudget: options.tokenBudget,
        meanTokens: mean(all.map((r) => r.prompt.length)),
        maxTokens: Math.max(...all.map((r) => r.prompt.length)),
        thoughtsCut: all.reduce((s, r) => s + r.cut.thoughts, 0),
        observationsCut: all.reduce((s, r) => s + r.cut.observations, 0),
        turnsDropped: all.reduce((s, r) => s + r.cut.turnsDropped, 0),
        patchesCut: all.filter((r) => r.cut.patchTokens > 0).length,
        issuesCut: all.filter((r) => r.cut.issueTokens > 0).length,
      },
    },
    training: {
      epochs: options.epochs,
      steps: 0,
      lr: options.lr,
      batchSize: options.batchSize,
      seed: options.seed,
      answerIds: { yes: Array.from(answerIds(tokenizer, true)), no: Array.from(answerIds(tokenizer, false)) },
    },
    metrics: [],
  };

  const loadOptions = { seed: options.seed, device: options.device, loadOptimizerState: false, optimizer: { lr: options.lr }, ...(options.threads !== undefined ? { threads: options.threads } : {}) };
  const policy = options.preset !== undefined ? await NativePolicy.load(presetConfig(options.preset, tokenizer.vocabSize), loadOptions) : await NativePolicy.load(options.model!, loadOptions);
  try {
    assertFitsVocabulary(examples, policy.config.native.vocabSize);
    const record = (row: VerifierEpochRow) => {
      summary.metrics.push(row);
      if (row.heldOut) summary.heldOut = row.heldOut;
      hooks.onEpoch?.(row);
    };
    const evalStarted = performance.now();
    record({ epoch: 0, step: 0, ...opt('heldOut', await heldOutMetrics(policy, heldOutRendered, options.batchSize)), seconds: (performance.now() - evalStarted) / 1000 });

    for (let epoch = 1; epoch <= options.epochs; epoch++) {
      const epochStarted = performance.now();
      const order = permutation(examples.length, mixSeed(options.seed, 0xe0c, epoch));
      const nlls: number[] = [];
      for (let at = 0; at < order.length; at += options.batchSize) {
        if (hooks.signal?.aborted) {
          summary.stopped = true;
          break;
        }
        const result = await sftStep(policy, order.slice(at, at + options.batchSize).map((i) => examples[i]!));
        nlls.push(result.nll);
        summary.training.steps++;
      }
      if (summary.stopped) break;
      const row: VerifierEpochRow = { epoch, step: summary.training.steps, trainNll: mean(nlls), ...opt('heldOut', await heldOutMetrics(policy, heldOutRendered, options.batchSize)), seconds: 0 };
      row.seconds = (performance.now() - epochStarted) / 1000;
      // The weights first: saving replaces the whole directory, the metrics go in after.
      await policy.save(out, { optimizer: false });
      record(row);
      await writeFileAtomic(path.join(out, METRICS_FILE), summary.metrics.map((r) => JSON.stringify(r)).join('\n') + '\n');
      summary.seconds = (performance.now() - started) / 1000;
      await writeJsonAtomic(path.join(out, SUMMARY_FILE), summary);
    }
  } catch (error) {
    if (isRequestedStop(error, hooks.signal)) summary.stopped = true;
    else throw error;
  } finally {
    policy.dispose();
  }
  summary.seconds = (performance.now() - started) / 1000;
  if (existsSync(out)) await writeJsonAtomic(path.join(out, SUMMARY_FILE), summary);
  return summary;
}

/** `{key: value}` when the value is defined, else nothing (optional fields stay absent, not undefined). */
function opt<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
