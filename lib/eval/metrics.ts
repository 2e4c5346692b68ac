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

/**
 * Wilson's score interval for a proportion of k successes in n trials (z = 1.96: 95%). Unlike
 * the normal approximation it stays inside [0, 1] and is honest at 0 or n successes.
 */
export function wilsonInterval(k: number, n: number, z = 1.959963984540054): { low: number; high: number } {
  if (!(Number.isInteger(k) && Number.isInteger(n)) || n < 1 || k < 0 || k > n) throw new RangeError(`a Wilson interval needs integers 0 <= k <= n, n >= 1; got k=${k}, n=${n}`);
  const p = k / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
  // At 0 or n successes the bound is exactly 0 or 1; rounding would leave it a hair inside.
  return { low: k === 0 ? 0 : Math.max(0, centre - half), high: k === n ? 1 : Math.min(1, centre + half) };
}

/**
 * McNemar's exact test of paired outcomes: `b` tasks only A solved, `c` only B solved (the
 * tasks both or neither solved say nothing about which is better). Two-sided p-value: twice the
 * binomial(b + c, 1/2) tail at min(b, c), capped at 1.
 */
export function mcnemarExact(b: number, c: number): number {
  if (!(Number.isInteger(b) && Number.isInteger(c)) || b < 0 || c < 0) throw new RangeError(`McNemar's test needs counts b, c >= 0; got b=${b}, c=${c}`);
  const n = b + c;
  if (n === 0) return 1;
  const k = Math.min(b, c);
  // P(X <= k) for X ~ Binomial(n, 1/2), summed in log space so that n in the thousands stays finite.
  let logTerm = -n * Math.LN2;  // log C(n, 0) / 2^n
  let tail = Math.exp(logTerm);
  for (let i = 1; i <= k; i++) {
    logTerm += Math.log((n - i + 1) / i);
    tail += Math.exp(logTerm);
  }
  return Math.min(1, 2 * tail);
}
