/**
 * The policy an SFT (or pretraining) run trains: the last checkpoint when resuming (optimizer
 * state and trainer state with it), else a fresh one from the preset or the model directory;
 * the learning-rate schedule spans run.steps optimizer steps (one per step).
 */
import type { NativePolicy } from '../../model/native-policy.js';
import type { TrainConfig } from '../config.js';
import { loadConfiguredModel } from '../configured-model.js';
import { policyOptions } from '../resume.js';
import type { TrainerState } from '../run-dir.js';
import type { ResumePoint, RunShell } from '../run.js';

export interface SftStart<S extends TrainerState = TrainerState> extends ResumePoint<S> {
  resumed: boolean;
}

/** The last checkpoint when run.resume finds one, else a fresh policy (nothing saved yet). */
export async function sftStartingPoint<S extends TrainerState = TrainerState>(config: Pick<TrainConfig, 'model' | 'optimizer' | 'run'>, shell: RunShell): Promise<SftStart<S>> {
  const resumed = await shell.resumePoint<S>(policyOptions(config, config.run.steps, true));
  if (resumed) return { ...resumed, resumed: true };
  const policy: NativePolicy = await loadConfiguredModel(config.model, policyOptions(config, config.run.steps, false));
  return { policy, state: { step: 0, elapsedSeconds: 0 } as S, metricsRows: [], resumed: false };
}
