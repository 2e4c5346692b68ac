/**
 * The optimizer steps of one training step: the step's shaped trajectories in mini-batches, in a
 * seeded order, epochs times, each one NativePolicy.trainStep with the loss options resolved
 * once for the run.
 */
import type { Trajectory } from '../agent/trajectory.js';
import { SwerlError } from '../errors.js';
import type { ResolvedLossOptions } from '../math/policy-loss.js';
import type { NativePolicy, TrainStepResult } from '../model/native-policy.js';
import { mixSeed, permutation } from '../util/random.js';
import { miniBatches, type ShapedBatch } from './batch.js';
import type { TrainConfig } from './config.js';

export async function learn(
  config: TrainConfig,
  policy: NativePolicy,
  reference: NativePolicy | undefined,
  trajectories: Trajectory[],
  shaped: ShapedBatch,
  step: number,
  loss: ResolvedLossOptions,
): Promise<TrainStepResult[]> {
  const { algorithm, rollout, run } = config;
  const results: TrainStepResult[] = [];
  for (let epoch = 0; epoch < algorithm.epochs; epoch++) {
    const order = permutation(trajectories.length, mixSeed(run.seed, step, epoch, 0xba7c4));
    for (const batch of miniBatches(trajectories, shaped, algorithm, order, algorithm.miniBatches)) {
      if (reference) {
        const refLogprobs = await reference.logprobs(batch.sequences.map((s) => s.tokens), { temperature: rollout.temperature });
        batch.sequences.forEach((s, i) => (s.refLogprobs = refLogprobs[i]));
      }
      const result = await policy.trainStep({ sequences: batch.sequences, loss });
      if (!Number.isFinite(result.loss)) throw new SwerlError('ERR_SWERL_NUMERIC', `the loss is ${result.loss}`);
      results.push(result);
    }
  }
  return results;
}

