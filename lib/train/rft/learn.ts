/**
 * One step of rejection fine-tuning (the rft preset): the step's resolved trajectories, their
 * format-error turns masked (select.ts), fine-tuned on by token-mean NLL, `sequencesPerStep`
 * to an optimizer step, `epochs` passes in a seeded order. A step where nothing resolved
 * takes no optimizer step (the trainer warns).
 */
import type { Trajectory } from '../../agent/trajectory.js';
import type { NativePolicy, TrainStepResult } from '../../model/native-policy.js';
import { mixSeed } from '../../util/random.js';
import { rankShare, type ParallelRun } from '../parallel.js';
import type { AlgorithmConfig } from '../algorithms.js';
import { sftSequences, stepExamples } from '../sft/core.js';
import type { SftExample } from '../sft/example.js';
import { selectResolved, type RejectionRound } from './select.js';

export interface RejectionStep {
  results: TrainStepResult[];
  /** What the filter kept and masked (metrics.rejection). */
  round: Omit<RejectionRound, 'examples'> & { examples: number };
}

export async function rejectionLearn(
  policy: NativePolicy,
  trajectories: readonly Trajectory[],
  rejection: NonNullable<AlgorithmConfig['rejection']>,
  seed: number,
  step: number,
  parallel?: ParallelRun,
): Promise<RejectionStep> {
  const { examples: kept, ...counts } = selectResolved(trajectories, { distinct: rejection.distinct });
  const examples: SftExample[] = kept.map((e) => ({ ...e, source: `step ${step}` }));
  const results: TrainStepResult[] = [];
  // Fewer kept than a step holds: one step of them all, each once (not repeated to fill it).
  const perStep = Math.min(rejection.sequencesPerStep, examples.length);
  const optimizerSteps = examples.length === 0 ? 0 : Math.ceil((examples.length * rejection.epochs) / perStep);
  for (let k = 1; k <= optimizerSteps; k++) {
    const batch = stepExamples(examples, perStep, mixSeed(seed, step, 0x4f7), k);
    // Data parallel: every rank selected the same batch; each trains its share, weighted by the
    // whole batch's token count, and the train step sums the ranks' gradients.
    results.push(await policy.trainStep({ sequences: rankShare(sftSequences(batch), parallel), loss: { objective: 'nll' } }));
  }
  return { results, round: { ...counts, examples: examples.length } };
}
