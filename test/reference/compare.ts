/** Error measures for comparing native fp32 results with the float64 reference. */
/** max_i |a_i - e_i| / max(|e_i|, floor): relative error, absolute below `floor`. */
export function maxRelativeError(actual: ArrayLike<number>, expected: ArrayLike<number>, floor = 1): number {
  if (actual.length !== expected.length) throw new Error(`length ${actual.length} != ${expected.length}`);
  let worst = 0;
  for (let i = 0; i < expected.length; i++) {
    const err = Math.abs(actual[i]! - expected[i]!) / Math.max(Math.abs(expected[i]!), floor);
    if (!(err <= worst)) worst = err; // NaN propagates as a failure
  }
  return worst;
}

/** max |a - e| / max |e|: no element's error is large next to the biggest entry. */
export function maxErrorOverMax(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  let worst = 0;
  let biggest = 0;
  for (let i = 0; i < expected.length; i++) {
    const err = Math.abs(actual[i]! - expected[i]!);
    if (!(err <= worst)) worst = err;
    biggest = Math.max(biggest, Math.abs(expected[i]!));
  }
  return biggest === 0 ? worst : worst / biggest;
}

/** Central differences of f at x, one coordinate at a time, in float64. */
export function centralDifferences(x: ArrayLike<number>, f: (x: Float64Array) => number, h = 1e-6): Float64Array {
  return Float64Array.from({ length: x.length }, (_, i) => {
    const plus = Float64Array.from(x);
    const minus = Float64Array.from(x);
    plus[i] += h;
    minus[i] -= h;
    return (f(plus) - f(minus)) / (2 * h);
  });
}
