/** Shared assertions: a native loss result against the float64 reference, fp32 tolerances. */
import type { Test } from 'tap';

import type { PolicyLossResult } from '../../lib/math/policy-loss.js';
import { maxRelativeError } from './compare.js';
import type { RefResult } from './policy-loss.js';

/** fp32 agreement target of the issue: relative error <= 1e-5. */
export const FP32_RTOL = 1e-5;
/**
 * On top of that, 16 fp32 roundings (2^-24 each) of the logprob l_t, times the result's
 * sensitivity to l_t: what an fp32 computation cannot avoid where the math is ill-conditioned.
 */
export const LOGPROB_ROUNDING = 16 * 2 ** -24;

export function assertLossMatches(t: Test, actual: PolicyLossResult, ref: RefResult, label: string): void {
  // The loss is a sum of signed terms; its rounding is relative to the sum of their sizes.
  const lossTolerance = FP32_RTOL * Math.max(Math.abs(ref.loss), ref.lossScale) + LOGPROB_ROUNDING * ref.lossSensitivity;
  t.ok(Math.abs(actual.loss - ref.loss) <= lossTolerance, `${label}: loss ${actual.loss} vs ${ref.loss}`);
  t.ok(maxRelativeError(actual.logprobs, ref.logprobs) <= FP32_RTOL, `${label}: logprobs`);
  t.ok(maxRelativeError(actual.entropy, ref.entropy) <= FP32_RTOL, `${label}: entropy`);
  t.equal(actual.stats.maskedTokens, ref.stats.maskedTokens, `${label}: masked tokens`);
  for (const key of ['approxKl', 'clipFracLow', 'clipFracHigh', 'ratioMean', 'ratioMax', 'entropyMean'] as const) {
    t.ok(
      maxRelativeError([actual.stats[key]], [ref.stats[key]]) <= FP32_RTOL,
      `${label}: stats.${key} ${actual.stats[key]} vs ${ref.stats[key]}`,
    );
  }
}

/**
 * ||actual - expected|| <= 1e-5 ||expected|| + LOGPROB_ROUNDING ||sensitivity|| (L2, and the
 * same for the largest element), with sensitivity = RefResult.gradSensitivity carried through
 * the same linear maps as the gradient. The gradient under test is float32, so the float64
 * reference is taken as float32 holds it: a reference element below float32's range (4.9e-91
 * from logits of 1e4, seed 135622339) can only be 0 there, and is 0 here too.
 */
export function assertGradMatches(
  t: Test,
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  sensitivity: ArrayLike<number>,
  label: string,
): void {
  let diff = 0;
  let norm = 0;
  let sensNorm = 0;
  let worst = 0;
  let biggest = 0;
  let biggestSens = 0;
  for (let i = 0; i < expected.length; i++) {
    const want = Math.fround(expected[i]!);
    const d = Math.abs(actual[i]! - want);
    diff += d * d;
    norm += want ** 2;
    sensNorm += sensitivity[i]! ** 2;
    if (!(d <= worst)) worst = d;
    biggest = Math.max(biggest, Math.abs(want));
    biggestSens = Math.max(biggestSens, sensitivity[i]!);
  }
  const l2Ok = Math.sqrt(diff) <= FP32_RTOL * Math.sqrt(norm) + LOGPROB_ROUNDING * Math.sqrt(sensNorm);
  const maxOk = worst <= FP32_RTOL * biggest + LOGPROB_ROUNDING * biggestSens;
  const rel = (x: number, y: number) => (x / Math.max(y, 1e-300)).toExponential(2);
  t.ok(l2Ok && maxOk, `${label}: relative L2 ${rel(Math.sqrt(diff), Math.sqrt(norm))}, max ${rel(worst, biggest)}`);
}
