/**
 * Experiment tracking, the one entry point the trainer calls: TensorBoard events files under
 * <run dir>/tensorboard/ (on by default: `tensorboard --logdir <run dir>`), and Weights &
 * Biases when config.tracking.wandb names a project. Each step's metrics row goes to every
 * sink as scalar tags (metric-names.ts); on resume the kept rows are written again first, so
 * every sink shows each step once, as metrics.jsonl holds it.
 */
import path from 'node:path';

import { SwerlError } from '../../errors.js';
import { optionsParser, type Infer } from '../../schema.js';
import { ALIAS_PROJECTS, scalarTags } from './metric-names.js';
import { TensorBoardWriter, type StepScalars } from './tensorboard.js';
import { WANDB_SCHEMA, importWandbSdk, openWandb, type WandbLoader, type WandbSink } from './wandb.js';

export type { AliasProject } from './metric-names.js';
export type { WandbLoader, WandbOptions } from './wandb.js';

const TRACKING_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    /** Write <run dir>/tensorboard/events.out.tfevents.* (default true). */
    tensorboard: { type: 'boolean', default: true },
    /** Also log each metric under the names these projects use for it (default both). */
    aliases: { type: 'array', items: { enum: ALIAS_PROJECTS }, uniqueItems: true, default: [...ALIAS_PROJECTS] },
    /** A W&B run per process, in this project (default null: no W&B). Needs @wandb/sdk installed. */
    wandb: { ...WANDB_SCHEMA, type: ['object', 'null'], default: null },
  },
} as const;
export type TrackingOptions = Infer<typeof TRACKING_SCHEMA>;

export const parseTrackingOptions = optionsParser(TRACKING_SCHEMA);

export interface Tracker {
  /** Logs a step's final metrics row; the events file holds it when this resolves. */
  log(step: number, metrics: Record<string, unknown>): Promise<void>;
  /** Closes the events file and finishes the W&B run; later calls do nothing. */
  close(): Promise<void>;
}

export interface TrackingContext {
  /** The resolved config (W&B shows it beside the run). */
  config: unknown;
  /** metrics.jsonl's rows as the run starts: none for a fresh run, the kept ones on resume. */
  rows?: readonly Record<string, unknown>[];
}

export async function openTracker(runDir: string, options: TrackingOptions, context: TrackingContext, loadWandb: WandbLoader = importWandbSdk): Promise<Tracker> {
  const tags = (metrics: Record<string, unknown>) => scalarTags(metrics, options.aliases);
  const history: StepScalars[] = (context.rows ?? []).flatMap((row) => (typeof row.step === 'number' ? [{ step: row.step, scalars: tags(row) }] : []));
  // W&B first: a missing SDK or key fails before any file is touched.
  const wandb: WandbSink | null = options.wandb ? await openWandb(options.wandb, { name: path.basename(path.resolve(runDir)), config: context.config, history }, loadWandb) : null;
  let tensorboard: TensorBoardWriter | null = null;
  try {
    if (options.tensorboard) tensorboard = await TensorBoardWriter.open(path.join(runDir, 'tensorboard'), history);
  } catch (error) {
    await wandb?.close();
    throw error;
  }
  let closed = false;
  return {
    async log(step, metrics) {
      if (closed) throw new SwerlError('ERR_SWERL_DISPOSED', 'the tracker was closed; open a new one with openTracker');
      const entry = { step, scalars: tags(metrics) };
      await tensorboard?.write(entry);
      wandb?.log(entry);
    },
    async close() {
      if (closed) return;
      closed = true;
      const results = await Promise.allSettled([tensorboard?.close(), wandb?.close()]);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    },
  };
}
