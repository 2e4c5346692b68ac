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
import { rankShare, type ParallelRun } from './parallel.js';

export async function learn(
  config: TrainConfig,
  policy: NativePolicy,
  reference: NativePolicy | undefined,
  trajectories: Trajectory[],
  shaped: ShapedBatch,
  step: number,
  loss: ResolvedLossOptions,
  parallel?: ParallelRun,
): Promise<TrainStepResult[]> {
  const { algorithm, rollout, run } = config;
  const results: TrainStepResult[] = [];
  for (let epoch = 0; epoch < algorithm.epochs; epoch++) {
    const order = permutation(trajectories.length, mixSeed(run.seed, step, epoch, 0xba7c4));
    for (const batch of miniBatches(trajectories, shaped, algorithm, order, algorithm.miniBatches)) {
      // Data parallel: this rank's share, weighted within the whole mini-batch; the train step
      // sums the ranks' gradients (a rank with no share still takes part).
      const sequences = rankShare(batch.sequences, parallel);
      if (reference && sequences.length > 0) {
        const refLogprobs = await reference.logprobs(sequences.map((s) => s.tokens), { temperature: rollout.temperature });
        sequences.forEach((s, i) => (s.refLogprobs = refLogprobs[i]));
      }
      const result = await policy.trainStep({ sequences, loss });
      if (!Number.isFinite(result.loss)) throw new SwerlError('ERR_SWERL_NUMERIC', `the loss is ${result.loss}`);
      results.push(result);
    }
  }
  return results;
}

