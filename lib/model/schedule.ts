/** Learning-rate schedules: linear warmup, then constant or cosine decay to a floor. */
export interface LrSchedule {
  kind: 'constant' | 'cosine';
  /** Steps of linear warmup from lr / warmupSteps up to lr. */
  warmupSteps: number;
  /** Total optimizer steps (cosine decays over the steps after warmup). */
  totalSteps?: number;
  /** Cosine's floor as a fraction of lr. */
  minLrRatio: number;
}

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
