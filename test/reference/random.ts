/**
 * Seeded randomness for tests: a fresh seed every run (printed, so a failure can be replayed
 * with SWERL_TEST_SEED=<seed>).
 */
export function testSeed(): number {
  const fixed = process.env.SWERL_TEST_SEED;
  return fixed ? Number(fixed) : Math.floor(Math.random() * 2 ** 31);
}

/** mulberry32: small, fast, good enough for test data. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  uniform(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  normal(): number {
    const u = Math.max(this.uniform(), 1e-12);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.uniform());
  }
  int(n: number): number {
    return Math.floor(this.uniform() * n);
  }
  normals(n: number, scale = 1): Float32Array {
    return Float32Array.from({ length: n }, () => this.normal() * scale);
  }
}
