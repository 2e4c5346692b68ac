/**
 * Why an episode ended: 'submitted' (the agent finished), 'max_steps', 'max_context' (the token
 * budget), 'timeout' (the episode deadline), 'env_timeout' (one env.step hung past its limit),
 * 'error' (the env failed). The order is the native code (native/src/math/reward_shaping.h).
 */
export const TERMINATION_REASONS = [
  'submitted',
  'max_steps',
  'max_context',
  'timeout',
  'env_timeout',
  'error',
] as const;
export type TerminationReason = (typeof TERMINATION_REASONS)[number];
