/**
 * Where a run starts and how its state is kept: the last checkpoint when resuming (its trainer
 * state and metrics rows with it), else a fresh policy, warmed up when asked, saved as step 0
 * (the KL reference and the first resume point).
 */
import { assertWithinContext } from '../model/rope-scaling.js';
import { NativePolicy } from '../model/native-policy.js';
import type { NativePolicyLoadOptions } from '../model/native-policy-options.js';
import { agentOptions } from './collect.js';
import { loadConfiguredModel } from './configured-model.js';
import type { TrainConfig } from './config.js';
import { formatWarmup } from './format-warmup.js';
import type { RunDirectory } from './run-dir.js';
import type { RunShell, ResumePoint } from './run.js';
import type { TaskSource } from './task-source.js';

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

export interface StartingPoint extends ResumePoint {
  resumed: boolean;
}

/**
 * The last checkpoint when run.resume finds one, else a fresh policy saved as step 0. A stop
 * during the warm-up rejects with ERR_SWERL_ABORTED, having saved nothing.
 */
export async function startingPoint(config: TrainConfig, source: TaskSource, shell: RunShell, optimizerSteps: number, signal: AbortSignal | undefined): Promise<StartingPoint> {
  const resumed = await shell.resumePoint(policyOptions(config, optimizerSteps, true));
  if (resumed) return { ...resumed, resumed: true };
  const policy = await initialPolicy(config, source, shell, optimizerSteps, signal);
  return { policy, state: { step: 0, elapsedSeconds: 0 }, metricsRows: [], resumed: false };
}

/** The KL term's reference, when the algorithm has one: the step-0 policy, never updated. */
export async function referencePolicy(config: TrainConfig, dir: RunDirectory, optimizerSteps: number): Promise<NativePolicy | undefined> {
  return config.algorithm.kl ? NativePolicy.load(dir.checkpointDir(0), policyOptions(config, optimizerSteps, false)) : undefined;
}

/**
 * A data-parallel rank other than 0: the config's model, whose weights and optimizer state
 * joining the group replaces with rank 0's (resumed or fresh, warmed up or not).
 */
export function followerPolicy(config: TrainConfig, optimizerSteps: number): Promise<NativePolicy> {
  return loadConfiguredModel(config.model, policyOptions(config, optimizerSteps, false));
}

/** A fresh policy: from a preset or a model directory, warmed up when asked, saved as step 0. */
async function initialPolicy(config: TrainConfig, source: TaskSource, shell: RunShell, optimizerSteps: number, signal: AbortSignal | undefined): Promise<NativePolicy> {
  const { dir, emit } = shell;
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
