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

/** x rounded to the nearest bfloat16 (ties to even), as a number: what the native core rounds to. */
export function roundToBfloat16(x: number): number {
  const f = new Float32Array([x]);
  const bits = new Uint32Array(f.buffer);
  bits[0] = (bits[0]! + 0x7fff + ((bits[0]! >>> 16) & 1)) & 0xffff0000;
  return f[0]!;
}

/** x rounded to the nearest IEEE half (ties to even), for finite x inside half's range. */
export function roundToFloat16(x: number): number {
  if (x === 0 || !Number.isFinite(x)) return x;
  const exponent = Math.max(Math.floor(Math.log2(Math.abs(x))), -14);
  const ulp = 2 ** (exponent - 10);
  const q = x / ulp;
  const r = Math.round(q);
  const tie = Math.abs(q - Math.trunc(q)) === 0.5;
  return (tie && r % 2 !== 0 ? r - Math.sign(q) : r) * ulp;
}

/** Cosine similarity and relative L2 error of actual against expected. */
export function cosineAndRelativeL2(actual: ArrayLike<number>, expected: ArrayLike<number>): { cosine: number; relL2: number } {
  let dot = 0, na = 0, ne = 0, diff = 0;
  for (let i = 0; i < expected.length; i++) {
    dot += actual[i]! * expected[i]!;
    na += actual[i]! ** 2;
    ne += expected[i]! ** 2;
    diff += (actual[i]! - expected[i]!) ** 2;
  }
  const cosine = na === 0 && ne === 0 ? 1 : dot / Math.sqrt(na * ne);
  return { cosine, relL2: Math.sqrt(diff) / Math.max(Math.sqrt(ne), 1e-300) };
}
