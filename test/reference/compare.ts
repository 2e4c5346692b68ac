/** Error measures for comparing native fp32 results with the float64 reference. */
export function relativeL2(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  if (actual.length !== expected.length) throw new Error(`length ${actual.length} != ${expected.length}`);
  let diff = 0;
  let norm = 0;
  for (let i = 0; i < expected.length; i++) {
    diff += (actual[i]! - expected[i]!) ** 2;
    norm += expected[i]! ** 2;
  }
  return norm === 0 ? Math.sqrt(diff) : Math.sqrt(diff / norm);
}

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

export function relativeError(actual: number, expected: number, scale = Math.abs(expected)): number {
  return Math.abs(actual - expected) / Math.max(scale, 1e-30);
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
