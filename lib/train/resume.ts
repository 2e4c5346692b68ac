/**
 * Where a run starts and how its state is kept: the last checkpoint when resuming (its trainer
 * state and metrics rows with it), else a fresh policy, warmed up when asked, saved as step 0
 * (the KL reference and the first resume point); and the stop that a non-finite loss makes,
 * naming the last good checkpoint.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

import { SwerlError } from '../errors.js';
import { assertWithinContext } from '../model/rope-scaling.js';
import { NativePolicy } from '../model/native-policy.js';
import type { NativePolicyLoadOptions } from '../model/native-policy-options.js';
import { agentOptions } from './collect.js';
import { loadConfiguredModel } from './configured-model.js';
import type { TrainConfig } from './config.js';
import { formatWarmup } from './format-warmup.js';
import type { TrainEvent } from './progress.js';
import type { RunDirectory, TrainerState } from './run-dir.js';
import type { TaskSource } from './task-source.js';
import type { TrainSummary } from './trainer.js';

/**
 * NativePolicy's options from a config's model and optimizer sections (RL or SFT); a cosine
 * schedule spans `totalSteps` optimizer steps.
 */
export function policyOptions(config: Pick<TrainConfig, 'model' | 'optimizer' | 'run'>, totalSteps: number, loadOptimizerState: boolean): NativePolicyLoadOptions {
  const m = config.model;
  const o = config.optimizer;
  return {
    device: m.device,
    ...(m.computeDtype ? { computeDtype: m.computeDtype } : {}),
    seed: config.run.seed,
    initStd: m.initStd,
    microBatchTokens: m.microBatchTokens,
    packSequences: m.packSequences,
    maxBatchSize: m.maxBatchSize,
    prefixCacheBytes: m.prefixCacheBytes,
    prefillChunkTokens: m.prefillChunkTokens,
    decodeGraphs: m.decodeGraphs,
    activationCheckpointing: m.activationCheckpointing,
    ...(m.threads !== undefined ? { threads: m.threads } : {}),
    maxGradNorm: o.maxGradNorm,
    loadOptimizerState,
    optimizer: {
      lr: o.lr,
      betas: o.betas,
      eps: o.eps,
      weightDecay: o.weightDecay,
      schedule: { kind: o.schedule, warmupSteps: o.warmupSteps, ...(o.schedule === 'cosine' ? { totalSteps } : {}) },
    },
  };
}

export interface StartingPoint {
  policy: NativePolicy;
  state: TrainerState;
  /** metrics.jsonl's rows up to the state's step (the rows of steps never saved are dropped). */
  metricsRows: Record<string, unknown>[];
  resumed: boolean;
}

/**
 * The last checkpoint when run.resume finds one, else a fresh policy saved as step 0. A stop
 * during the warm-up rejects with ERR_SWERL_ABORTED, having saved nothing.
 */
export async function startingPoint(
  config: TrainConfig,
  source: TaskSource,
  dir: RunDirectory,
  optimizerSteps: number,
  emit: (e: TrainEvent) => void,
  signal: AbortSignal | undefined,
): Promise<StartingPoint> {
  const { run } = config;
  await dir.pruneCheckpoints(run.keepCheckpoints + 1);
  const checkpoints = run.resume ? await dir.checkpointSteps() : [];
  if (checkpoints.length > 0) {
    const step = checkpoints.at(-1)!;
    const policy = await NativePolicy.load(dir.checkpointDir(step), policyOptions(config, optimizerSteps, true));
    const saved = await fs.readFile(path.join(dir.checkpointDir(step), 'swerl_state.json'), 'utf8');
    const state = (JSON.parse(saved) as { extra?: { trainer?: TrainerState } }).extra?.trainer ?? { step, elapsedSeconds: 0 };
    return { policy, state, metricsRows: await dir.truncateTo(state.step), resumed: true };
  }
  await dir.truncateTo(0);
  const policy = await initialPolicy(config, source, dir, optimizerSteps, emit, signal);
  return { policy, state: { step: 0, elapsedSeconds: 0 }, metricsRows: [], resumed: false };
}

/** The KL term's reference, when the algorithm has one: the step-0 policy, never updated. */
export async function referencePolicy(config: TrainConfig, dir: RunDirectory, optimizerSteps: number): Promise<NativePolicy | undefined> {
  return config.algorithm.kl ? NativePolicy.load(dir.checkpointDir(0), policyOptions(config, optimizerSteps, false)) : undefined;
}

/** Saves a step's checkpoint with the trainer's state; keeps the newest run.keepCheckpoints. */
export async function saveCheckpoint(policy: NativePolicy, dir: RunDirectory, state: TrainerState, keep: number): Promise<string> {
  await policy.save(dir.checkpointDir(state.step), { extra: { trainer: state } });
  await dir.pruneCheckpoints(keep);
  return dir.checkpointDir(state.step);
}


/**
 * A data-parallel rank other than 0: the config's model, whose weights and optimizer state
 * joining the group replaces with rank 0's (resumed or fresh, warmed up or not).
 */
export function followerPolicy(config: TrainConfig, optimizerSteps: number): Promise<NativePolicy> {
  return loadConfiguredModel(config.model, policyOptions(config, optimizerSteps, false));
}

/** A fresh policy: from a preset or a model directory, warmed up when asked, saved as step 0. */
async function initialPolicy(config: TrainConfig, source: TaskSource, dir: RunDirectory, optimizerSteps: number, emit: (e: TrainEvent) => void, signal: AbortSignal | undefined): Promise<NativePolicy> {
  const options = policyOptions(config, optimizerSteps, false);
  const fresh = await loadConfiguredModel(config.model, options);
  if (config.model.path !== undefined) {
    // A checkpoint's context is what it was trained (or rope-scaled) for; presets from scratch have none.
    try {
      assertWithinContext(
        config.rollout.promptBudget + config.rollout.responseBudget,
        fresh.config.hf.max_position_embeddings,
        'config.rollout.promptBudget + responseBudget',
        'lower the budgets, or give the model a longer context (rope_scaling: yarn in its config.json, as Qwen3 does for 131072)',
      );
    } catch (error) {
      fresh.dispose();
      throw error;
    }
  }
  const tasks = config.tasks;
  if (tasks.kind === 'frozenlake' && tasks.formatWarmupSteps > 0) {
    await formatWarmup(fresh, source, {
      ...(signal ? { signal } : {}),
      steps: tasks.formatWarmupSteps,
      lr: tasks.formatWarmupLr,
      episodes: 16,
      seed: config.run.seed,
      agent: agentOptions(config, source),
      onStep: (step, nll) => emit({ type: 'warmup', step, steps: tasks.formatWarmupSteps, nll }),
    }).catch((error: unknown) => {
      fresh.dispose();
      throw error;
    });
  }
  // Step 0 is the starting point of RL: the reference of a KL term, and a resume point. The
  // warm-up's optimizer state is not carried into RL.
  await fresh.save(dir.checkpointDir(0), { optimizer: false, extra: { trainer: { step: 0, elapsedSeconds: 0 } } });
  fresh.dispose();
  return NativePolicy.load(dir.checkpointDir(0), options);
}

/**
 * A non-finite loss or gradient ends the run: the step is not saved, so the last checkpoint is
 * the last good state, and the error says where it is and what to change before resuming.
 */
export async function numericStop(error: unknown, step: number, dir: RunDirectory, knobs = 'optimizer.lr or algorithm.entropyCoef', ownsRunDir = true): Promise<unknown> {
  if (!(error instanceof SwerlError) || error.code !== 'ERR_SWERL_NUMERIC') return error;
  // A data-parallel follower does not read the run directory (rank 0's, maybe on another node).
  const last = ownsRunDir ? (await dir.checkpointSteps()).at(-1) : undefined;
  const where = !ownsRunDir ? 'rank 0 names the last good checkpoint' : last === undefined ? 'no checkpoint was saved yet' : `the last good checkpoint is ${dir.checkpointDir(last)} (step ${last})`;
  return new SwerlError(
    'ERR_SWERL_NUMERIC',
    `step ${step}: ${error.message}; the run stopped and this step was not saved; ${where}. ` +
      `Lower ${knobs}, keep optimizer.maxGradNorm on, or use computeDtype bfloat16 instead of float16; then resume with run.resume: true`,
  );
}

/**
 * The end of a run that trains without rollouts (SFT, pretraining): says whether it stopped or
 * finished, then writes its summary with its last checkpoint, and returns it.
 */
export async function finishRun<S extends TrainSummary>(dir: RunDirectory, emit: (event: TrainEvent) => void, stopReason: string, summary: Omit<S, 'checkpoint'>): Promise<S> {
  emit(summary.stopped ? { type: 'stopped', step: summary.steps, reason: stopReason } : { type: 'done', step: summary.steps });
  const checkpoints = await dir.checkpointSteps();
  const full = { ...summary, ...(checkpoints.length ? { checkpoint: dir.checkpointDir(checkpoints.at(-1)!) } : {}) } as S;
  await dir.writeSummary(full);
  return full;
}
