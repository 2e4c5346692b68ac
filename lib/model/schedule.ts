/** Learning-rate schedules: linear warmup, then constant or cosine decay to a floor. */
import type { Infer } from '../schema.js';

export const LR_SCHEDULE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    kind: { type: 'string', enum: ['constant', 'cosine'], default: 'constant' },
    /** Steps of linear warmup from lr / warmupSteps up to lr. */
    warmupSteps: { type: 'integer', minimum: 0, default: 0 },
    /** Total optimizer steps (cosine decays over the steps after warmup). */
    totalSteps: { type: 'integer', minimum: 1 },
    /** Cosine's floor as a fraction of lr. */
    minLrRatio: { type: 'number', minimum: 0, maximum: 1, default: 0 },
  },
} as const;
export type LrSchedule = Infer<typeof LR_SCHEDULE_SCHEMA>;

/** The learning rate of optimizer step `step` (0 for the first step). */
export function learningRate(baseLr: number, step: number, schedule: LrSchedule): number {
  if (step < schedule.warmupSteps) return (baseLr * (step + 1)) / schedule.warmupSteps;
  if (schedule.kind === 'constant') return baseLr;
  const total = schedule.totalSteps!;
  const span = Math.max(1, total - schedule.warmupSteps);
  const progress = Math.min(1, (step - schedule.warmupSteps) / span);
  const floor = schedule.minLrRatio;
  return baseLr * (floor + (1 - floor) * 0.5 * (1 + Math.cos(Math.PI * progress)));
}
