/** Shared assertions: a native loss result against the float64 reference, fp32 tolerances. */
import type { Test } from 'tap';

import type { PolicyLossResult } from '../../lib/math/policy-loss.js';
import { maxErrorOverMax, maxRelativeError, relativeError, relativeL2 } from './compare.js';
import type { RefResult } from './policy-loss.js';

/** fp32 agreement target of the issue: relative error <= 1e-5. */
export const FP32_RTOL = 1e-5;

export function assertLossMatches(t: Test, actual: PolicyLossResult, ref: RefResult, label: string): void {
  // The loss is a sum of signed terms; its rounding is relative to the sum of their sizes.
  t.ok(
    relativeError(actual.loss, ref.loss, Math.max(Math.abs(ref.loss), ref.lossScale)) <= FP32_RTOL,
    `${label}: loss ${actual.loss} vs ${ref.loss}`,
  );
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

export function assertGradMatches(t: Test, actual: ArrayLike<number>, expected: ArrayLike<number>, label: string): void {
  const l2 = relativeL2(actual, expected);
  const worst = maxErrorOverMax(actual, expected);
  t.ok(l2 <= FP32_RTOL && worst <= FP32_RTOL, `${label}: relative L2 ${l2.toExponential(2)}, max ${worst.toExponential(2)}`);
}
