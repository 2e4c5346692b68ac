/** The numbers an evaluation reports (docs/swe-env.md, "Test-time scaling"). */

/**
 * The unbiased pass@k estimator (Chen et al., 2021) for one task with n samples of which c
 * passed: 1 - C(n - c, k) / C(n, k), computed as a product so that large n stays exact.
 */
export function passAtK(n: number, c: number, k: number): number {
  if (!(Number.isInteger(n) && Number.isInteger(c) && Number.isInteger(k)) || n < 1 || c < 0 || c > n || k < 1 || k > n)
    throw new RangeError(`pass@k needs integers 1 <= k <= n and 0 <= c <= n; got n=${n}, c=${c}, k=${k}`);
  if (n - c < k) return 1;
  let allFail = 1;
  for (let i = n - c + 1; i <= n; i++) allFail *= 1 - k / i;
  return 1 - allFail;
}

/** Mean and standard error of the mean (sample std with n - 1, over sqrt n; 0 for one value). */
export function meanAndSem(values: readonly number[]): { mean: number; sem: number } {
  const n = values.length;
  if (n === 0) return { mean: NaN, sem: NaN };
  const mean = values.reduce((a, b) => a + b, 0) / n;
  if (n === 1) return { mean, sem: 0 };
  const variance = values.reduce((a, v) => a + (v - mean) ** 2, 0) / (n - 1);
  return { mean, sem: Math.sqrt(variance / n) };
}
