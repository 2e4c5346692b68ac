/**
 * The policy an SFT (or pretraining) run trains: the last checkpoint
 * when resuming (optimizer state and trainer state with it), else a fresh one from the preset
 * or the model directory; the learning-rate schedule spans run.steps optimizer steps.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

import { NativePolicy } from '../../model/native-policy.js';
import type { NativePolicyLoadOptions } from '../../model/native-policy-options.js';
import { policyOptions as trainPolicyOptions } from '../resume.js';
import type { PretrainTrainConfig, SftTrainConfig } from '../config.js';
import { loadConfiguredModel } from '../configured-model.js';
import type { RunDirectory, TrainerState } from '../run-dir.js';

/** One optimizer step per SFT step: the schedule spans run.steps. */
function policyOptions(config: SftTrainConfig | PretrainTrainConfig, loadOptimizerState: boolean): NativePolicyLoadOptions {
  return trainPolicyOptions(config, config.run.steps, loadOptimizerState);
}

export interface SftStart {
  policy: NativePolicy;
  state: TrainerState;
  /** metrics.jsonl's rows up to the state's step. */
  metricsRows: Record<string, unknown>[];
  resumed: boolean;
}

/** The last checkpoint when run.resume finds one, else a fresh policy (nothing saved yet). */
export async function sftStartingPoint(config: SftTrainConfig | PretrainTrainConfig, dir: RunDirectory): Promise<SftStart> {
  const { run } = config;
  await dir.pruneCheckpoints(run.keepCheckpoints + 1);
  const checkpoints = run.resume ? await dir.checkpointSteps() : [];
  if (checkpoints.length > 0) {
    const step = checkpoints.at(-1)!;
    const policy = await NativePolicy.load(dir.checkpointDir(step), policyOptions(config, true));
    const saved = await fs.readFile(path.join(dir.checkpointDir(step), 'swerl_state.json'), 'utf8');
    const state = (JSON.parse(saved) as { extra?: { trainer?: TrainerState } }).extra?.trainer ?? { step, elapsedSeconds: 0 };
    return { policy, state, metricsRows: await dir.truncateTo(state.step), resumed: true };
  }
  await dir.truncateTo(0);
  const policy = await loadConfiguredModel(config.model, policyOptions(config, false));
  return { policy, state: { step: 0, elapsedSeconds: 0 }, metricsRows: [], resumed: false };
}
