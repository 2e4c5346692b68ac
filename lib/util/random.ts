/**
 * Seeded randomness that is a pure function of its seed, so a resumed run draws exactly what
 * the interrupted one would have: no generator state needs saving.
 */

/** mulberry32: a 32-bit state PRNG, uniform floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 0x100000000;
  };
}

/** A 32-bit seed mixed from several integers (murmur3's finalizer over each). */
export function mixSeed(...parts: number[]): number {
  let h = 0x811c9dc5;
  for (const part of parts) {
    let k = Math.imul(part >>> 0, 0xcc9e2d51);
    k = Math.imul((k << 15) | (k >>> 17), 0x1b873593);
    h ^= k ^ Math.floor(part / 0x100000000);
    h = Math.imul((h << 13) | (h >>> 19), 5) + 0xe6546b64;
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A permutation of 0..n-1 (Fisher-Yates) drawn from seed. */
export function permutation(n: number, seed: number): number[] {
  const rng = mulberry32(seed);
  const out = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/**
 * The task indexes of training step `step` (0-based), `perStep` at a time, walking through a
 * fresh permutation of the n tasks each epoch. A pure function of (n, perStep, seed, step).
 */
export function tasksForStep(n: number, perStep: number, seed: number, step: number): number[] {
  const out: number[] = [];
  for (let k = 0; k < perStep; k++) {
    const position = step * perStep + k;
    const epoch = Math.floor(position / n);
    out.push(permutation(n, mixSeed(seed, epoch))[position % n]!);
  }
  return out;
}
