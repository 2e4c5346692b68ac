/**
 * A step's metrics (a metrics.jsonl row) as scalar tags: swerl's own paths (`reward/mean`,
 * `loss/entropy`, `terminations/submitted`), and beside them the names verl and TRL log the
 * same quantity under, so their users find their curves. ALIASES is the one home of that mapping.
 */

export const ALIAS_PROJECTS = ['verl', 'trl'] as const;
export type AliasProject = (typeof ALIAS_PROJECTS)[number];

/**
 * swerl tag -> the name each project gives the same quantity. Where they come from:
 *   verl: verl/trainer/ppo/metric_utils.py (critic/score, critic/rewards, response_length,
 *     prompt_length, num_turns, timing_s), verl/workers/actor/dp_actor.py (actor/pg_loss,
 *     actor/pg_clipfrac, actor/ppo_kl, actor/grad_norm), verl/trainer/ppo/ray_trainer.py
 *     (actor/entropy), verl/workers/fsdp_workers.py (actor/lr).
 *   trl: trl/trainer/grpo_trainer.py (reward, reward_std, entropy, completions/*, clip_ratio/*);
 *     loss, grad_norm and learning_rate come from transformers' Trainer, which GRPOTrainer extends.
 * Left out on purpose: TRL's `kl` is the KL to the reference policy (logged when beta != 0),
 * not loss/approxKl (old policy vs new, verl's ppo_kl); verl's `actor/pg_clipfrac_lower` is
 * the dual-clip fraction, not loss/clipFracLow.
 */
export const ALIASES: Readonly<Record<string, Readonly<Partial<Record<AliasProject, string>>>>> = {
  'reward/mean': { verl: 'critic/score/mean', trl: 'reward' },
  // The reward after the truncation policy and penalties, the one advantages are computed from.
  'reward/shapedMean': { verl: 'critic/rewards/mean' },
  // swerl's is the population std; TRL's torch.std divides by n - 1.
  'reward/std': { trl: 'reward_std' },
  // The whole objective: verl's pg_loss exactly when entropyCoef is 0 and kl is off (the presets' default).
  'loss/value': { verl: 'actor/pg_loss', trl: 'loss' },
  'loss/entropy': { verl: 'actor/entropy', trl: 'entropy' },
  'loss/approxKl': { verl: 'actor/ppo_kl' },
  // Both count tokens with A < 0 and r < 1 - eps_low (low), A > 0 and r > 1 + eps_high (high).
  'loss/clipFracLow': { trl: 'clip_ratio/low_mean' },
  'loss/clipFracHigh': { trl: 'clip_ratio/high_mean' },
  'loss/clipFrac': { verl: 'actor/pg_clipfrac', trl: 'clip_ratio/region_mean' },
  'loss/gradNorm': { verl: 'actor/grad_norm', trl: 'grad_norm' },
  'loss/lr': { verl: 'actor/lr', trl: 'learning_rate' },
  'length/responseMean': { verl: 'response_length/mean', trl: 'completions/mean_length' },
  'length/responseMax': { verl: 'response_length/max', trl: 'completions/max_length' },
  'length/promptMean': { verl: 'prompt_length/mean' },
  'turns/mean': { verl: 'num_turns/mean' },
  'turns/max': { verl: 'num_turns/max' },
  'time/stepSeconds': { verl: 'timing_s/step' },
};

/**
 * Every finite number in a row, by its path (`{ loss: { entropy } }` -> `loss/entropy`);
 * strings, booleans, arrays and non-finite numbers are skipped, and so is `step` (the
 * step is the event's, not a curve).
 */
export function flattenMetrics(metrics: Record<string, unknown>): Map<string, number> {
  const tags = new Map<string, number>();
  const visit = (value: unknown, tag: string) => {
    if (typeof value === 'number') {
      if (Number.isFinite(value)) tags.set(tag, value);
    } else if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      for (const [key, inner] of Object.entries(value)) visit(inner, `${tag}/${key}`);
    }
  };
  for (const [key, value] of Object.entries(metrics)) if (key !== 'step') visit(value, key);
  return tags;
}

/** A row's tags, the ones verl and TRL read under (for `projects`) after swerl's own. */
export function scalarTags(metrics: Record<string, unknown>, projects: readonly AliasProject[]): Map<string, number> {
  const tags = flattenMetrics(metrics);
  const low = tags.get('loss/clipFracLow');
  const high = tags.get('loss/clipFracHigh');
  // The two regions are disjoint (opposite signs of A), so their sum is the fraction clipped.
  if (low !== undefined && high !== undefined && !tags.has('loss/clipFrac')) tags.set('loss/clipFrac', low + high);
  for (const [tag, names] of Object.entries(ALIASES)) {
    const value = tags.get(tag);
    if (value === undefined) continue;
    for (const project of projects) {
      const alias = names[project];
      // A tag of swerl's own is never overwritten by an alias.
      if (alias !== undefined && !tags.has(alias)) tags.set(alias, value);
    }
  }
  return tags;
}
