/**
 * Random inputs for the loss tests: logits or (hidden, weight), and per-token inputs that put
 * ratios inside the clip range, moderately outside it and beyond the log-ratio clamp, with
 * zero advantages and fully masked sequences.
 */
import type { PolicyLossOptions } from '../../lib/math/policy-loss.js';
import { matmulTransposed, referencePolicyLoss, type RefOptions } from './policy-loss.js';
import type { Rng } from './random.js';

export interface OptionCase {
  name: string;
  ref: RefOptions;
  native: PolicyLossOptions;
}

const base = { clipLow: 0.2, clipHigh: 0.28, temperature: 1, entropyCoef: 0 };

export const OPTION_CASES: OptionCase[] = [
  { name: 'GRPO++ defaults', ref: { ...base }, native: {} },
  { name: 'clipHigh=Infinity', ref: { ...base, clipHigh: Infinity }, native: { clipHigh: Infinity } },
  { name: 'dual clip c=3', ref: { ...base, dualClip: 3 }, native: { dualClip: 3 } },
  { name: 'temperature 0.6', ref: { ...base, temperature: 0.6 }, native: { temperature: 0.6 } },
  { name: 'entropy bonus', ref: { ...base, entropyCoef: 0.03 }, native: { entropyCoef: 0.03 } },
  { name: 'kl k1', ref: { ...base, kl: { coef: 0.05, kind: 'k1' } }, native: { kl: { coef: 0.05, kind: 'k1' } } },
  { name: 'kl k2', ref: { ...base, kl: { coef: 0.05, kind: 'k2' } }, native: { kl: { coef: 0.05, kind: 'k2' } } },
  { name: 'kl k3', ref: { ...base, kl: { coef: 0.05, kind: 'k3' } }, native: { kl: { coef: 0.05 } } },
  { name: 'nll (SFT)', ref: { ...base, objective: 'nll' }, native: { objective: 'nll' } },
  {
    name: 'nll with T=0.8, entropy bonus and k2 KL',
    ref: { ...base, objective: 'nll', temperature: 0.8, entropyCoef: 0.01, kl: { coef: 0.05, kind: 'k2' } },
    native: { objective: 'nll', temperature: 0.8, entropyCoef: 0.01, kl: { coef: 0.05, kind: 'k2' } },
  },
  {
    name: 'everything on (clipHigh=Inf, dual clip, T=1.3, entropy, k3)',
    ref: { clipLow: 0.1, clipHigh: Infinity, dualClip: 2.5, temperature: 1.3, entropyCoef: 0.02, kl: { coef: 0.1, kind: 'k3' } },
    native: { clipLow: 0.1, clipHigh: Infinity, dualClip: 2.5, temperature: 1.3, entropyCoef: 0.02, kl: { coef: 0.1, kind: 'k3' } },
  },
];

export interface TokenCase {
  targets: Int32Array;
  oldLogprobs: Float32Array;
  advantages: Float32Array;
  weights: Float32Array;
  refLogprobs: Float32Array;
}

/** The targets' logprobs under the logits at a temperature, in float64 (the reference loss's). */
export function trueLogprobs(logits: ArrayLike<number>, targets: Int32Array, V: number, temperature: number): Float64Array {
  const zeros = new Float32Array(targets.length);
  return referencePolicyLoss(
    { logits, vocabSize: V, targets, oldLogprobs: zeros, advantages: zeros, weights: zeros },
    { clipLow: 0.2, clipHigh: 0.28, temperature, entropyCoef: 0 },
  ).logprobs;
}

/** Per-token inputs around the true logprobs (computed in float64 from the logits). */
export function tokenCase(rng: Rng, logits: ArrayLike<number>, T: number, V: number, temperature: number): TokenCase {
  const targets = Int32Array.from({ length: T }, () => rng.int(V));
  const truth = trueLogprobs(logits, targets, V, temperature);

  const oldLogprobs = new Float32Array(T);
  const advantages = new Float32Array(T);
  const refLogprobs = new Float32Array(T);
  for (let t = 0; t < T; t++) {
    const u = rng.uniform();
    const shift =
      u < 0.5 ? rng.normal() * 0.1 // ratio inside [1 - eps, 1 + eps] mostly
      : u < 0.85 ? (rng.uniform() < 0.5 ? -1 : 1) * (0.5 + 2.5 * rng.uniform()) // outside the clip range
      : (rng.uniform() < 0.5 ? -1 : 1) * (21 + 5 * rng.uniform()); // beyond the log-ratio clamp
    // Logprobs are <= 0 (the API refuses others), so "old far above new" is capped at 0.
    oldLogprobs[t] = Math.min(0, truth[t]! - shift);
    advantages[t] = rng.uniform() < 0.1 ? 0 : rng.normal();
    refLogprobs[t] = Math.min(0, truth[t]! + rng.normal() * 0.5);
  }

  // Sequences of random length; about one in four fully masked; the rest weighted m / (B n_i).
  const weights = new Float32Array(T);
  const bounds: number[] = [0];
  while (bounds[bounds.length - 1]! < T) bounds.push(Math.min(T, bounds[bounds.length - 1]! + 1 + rng.int(8)));
  const B = bounds.length - 1;
  for (let s = 0; s < B; s++) {
    if (T > 1 && rng.uniform() < 0.25) continue;
    for (let t = bounds[s]!; t < bounds[s + 1]!; t++) weights[t] = 1 / (B * (bounds[s + 1]! - bounds[s]!));
  }
  return { targets, oldLogprobs, advantages, weights, refLogprobs };
}

export function logitsCase(rng: Rng, T: number, V: number): Float32Array {
  return rng.normals(T * V, 2);
}

/** hidden [T, H] and weight [V, H] with logits of a useful spread, and those logits in float64. */
export function linearCase(rng: Rng, T: number, H: number, V: number) {
  const hidden = rng.normals(T * H, 1);
  const weight = rng.normals(V * H, 2 / Math.sqrt(H));
  return { hidden, weight, logits: matmulTransposed(hidden, weight, T, H, V) };
}
