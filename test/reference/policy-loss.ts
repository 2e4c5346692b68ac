/**
 * An independent float64 reference of docs/loss.md, written from the spec without looking at
 * the native code: plain loops, the loss as the spec's formula, and the gradient by
 * differentiating that formula branch by branch (itself checked against finite differences).
 */
export interface RefOptions {
  /** 'nll': the per-token loss is -l (SFT); default the clipped surrogate. */
  objective?: 'policy-gradient' | 'nll';
  clipLow: number;
  clipHigh: number; // may be Infinity
  dualClip?: number; // c > 1, or undefined
  temperature: number;
  entropyCoef: number;
  kl?: { coef: number; kind: 'k1' | 'k2' | 'k3' };
}

export interface RefInputs {
  logits: ArrayLike<number>; // [T, V]
  vocabSize: number;
  targets: ArrayLike<number>;
  oldLogprobs: ArrayLike<number>;
  advantages: ArrayLike<number>;
  weights: ArrayLike<number>;
  refLogprobs?: ArrayLike<number>;
}

export interface RefResult {
  loss: number;
  /** sum_t |w_t| (|L_t| + |eta H_t| + |beta KL_t|): the scale fp32 rounding is relative to. */
  lossScale: number;
  /** sum_t |w_t dLoss_t/dl_t| max(1, |lse_t|): how far the loss moves per unit rounding of l. */
  lossSensitivity: number;
  logprobs: Float64Array;
  entropy: Float64Array;
  gradLogits: Float64Array;
  /**
   * (|w_t d2Loss_t/dl_t2| |[j = y_t] - p_tj| + |w_t dLoss_t/dl_t| p_tj) max(1, |lse_t|) / tau:
   * how far dLoss/dz moves per unit rounding of the logits, through l_t and through p_tj.
   * Ill-conditioned tokens (a KL term near its minimum, a nearly certain target) legitimately
   * differ from the reference by more than 1e-5 of the gradient itself.
   */
  gradSensitivity: Float64Array;
  stats: {
    approxKl: number;
    clipFracLow: number;
    clipFracHigh: number;
    ratioMean: number;
    ratioMax: number;
    entropyMean: number;
    maskedTokens: number;
  };
}

const CLAMP = 20;

/** The clipped surrogate L(l) for one token, as the spec writes it. */
export function surrogate(logprob: number, old: number, adv: number, o: RefOptions): number {
  const r = Math.exp(Math.min(Math.max(logprob - old, -CLAMP), CLAMP));
  const clipped = Math.min(Math.max(r, 1 - o.clipLow), 1 + o.clipHigh);
  let L = Math.max(-adv * r, -adv * clipped);
  if (o.dualClip !== undefined && adv < 0) L = Math.min(L, -adv * o.dualClip);
  return L;
}

/** dL/dl by following whichever branch of max/min/clip/clamp the value came from. */
function surrogateDerivative(logprob: number, old: number, adv: number, o: RefOptions): number {
  const d = logprob - old;
  const dr = Math.abs(d) < CLAMP ? Math.exp(d) : 0; // dr/dl
  const r = Math.exp(Math.min(Math.max(d, -CLAMP), CLAMP));
  const lo = 1 - o.clipLow;
  const hi = 1 + o.clipHigh;
  const clipped = Math.min(Math.max(r, lo), hi);
  const dclipped = r > lo && r < hi ? dr : 0;
  const a = -adv * r;
  const b = -adv * clipped;
  let value = a >= b ? a : b;
  let deriv = a >= b ? -adv * dr : -adv * dclipped;
  if (o.dualClip !== undefined && adv < 0 && -adv * o.dualClip < value) {
    value = -adv * o.dualClip;
    deriv = 0;
  }
  return deriv;
}

export function klValue(logprob: number, ref: number, kind: 'k1' | 'k2' | 'k3'): number {
  const d = logprob - ref;
  if (kind === 'k1') return d;
  if (kind === 'k2') return 0.5 * d * d;
  return Math.exp(ref - logprob) - (ref - logprob) - 1;
}

function klDerivative(logprob: number, ref: number, kind: 'k1' | 'k2' | 'k3'): number {
  if (kind === 'k1') return 1;
  if (kind === 'k2') return logprob - ref;
  return -Math.exp(ref - logprob) + 1;
}

function klSecondDerivative(logprob: number, ref: number, kind: 'k1' | 'k2' | 'k3'): number {
  if (kind === 'k1') return 0;
  if (kind === 'k2') return 1;
  return Math.exp(ref - logprob);
}

/** Only the loss (used by finite differences). */
export function referenceLossValue(inputs: RefInputs, o: RefOptions): number {
  return referencePolicyLoss(inputs, o).loss;
}

export function referencePolicyLoss(inputs: RefInputs, o: RefOptions): RefResult {
  const V = inputs.vocabSize;
  const T = inputs.targets.length;
  const logprobs = new Float64Array(T);
  const entropy = new Float64Array(T);
  const grad = new Float64Array(T * V);
  const sensitivity = new Float64Array(T * V);
  let loss = 0;
  let lossScale = 0;
  let lossSensitivity = 0;
  let masked = 0;
  let klSum = 0;
  let ratioSum = 0;
  let ratioMax = 0;
  let entSum = 0;
  let low = 0;
  let high = 0;
  const s = new Float64Array(V);
  const p = new Float64Array(V);
  for (let t = 0; t < T; t++) {
    let max = -Infinity;
    for (let j = 0; j < V; j++) {
      s[j] = inputs.logits[t * V + j]! / o.temperature;
      max = Math.max(max, s[j]!);
    }
    let sum = 0;
    for (let j = 0; j < V; j++) sum += Math.exp(s[j]! - max);
    const lse = max + Math.log(sum);
    let H = 0;
    for (let j = 0; j < V; j++) {
      p[j] = Math.exp(s[j]! - lse);
      H -= p[j]! * (s[j]! - lse);
    }
    const y = inputs.targets[t]!;
    const l = s[y]! - lse;
    logprobs[t] = l;
    entropy[t] = H;

    const w = inputs.weights[t]!;
    const adv = inputs.advantages[t]!;
    const old = inputs.oldLogprobs[t]!;
    const nll = o.objective === 'nll';
    const L = nll ? -l : surrogate(l, old, adv, o);
    let dl = nll ? -1 : surrogateDerivative(l, old, adv, o); // d(per-token loss)/dl
    let d2l = nll ? 0 : dl; // where the surrogate is active, d(-A r)/dl = -A r
    let tokenLoss = L - o.entropyCoef * H;
    lossScale += Math.abs(w) * (Math.abs(L) + Math.abs(o.entropyCoef * H));
    if (o.kl) {
      const kl = klValue(l, inputs.refLogprobs![t]!, o.kl.kind);
      tokenLoss += o.kl.coef * kl;
      lossScale += Math.abs(w * o.kl.coef * kl);
      dl += o.kl.coef * klDerivative(l, inputs.refLogprobs![t]!, o.kl.kind);
      d2l += o.kl.coef * klSecondDerivative(l, inputs.refLogprobs![t]!, o.kl.kind);
    }
    loss += w * tokenLoss;
    const magnitude = Math.max(1, Math.abs(lse));
    lossSensitivity += Math.abs(w * dl) * magnitude;

    // d l / d z_j = ([j = y] - p_j) / tau;  d H / d z_j = -p_j (log p_j + H) / tau.
    for (let j = 0; j < V; j++) {
      const dlogprob = ((j === y ? 1 : 0) - p[j]!) / o.temperature;
      const dH = (-p[j]! * (s[j]! - lse + H)) / o.temperature;
      grad[t * V + j] = w * (dl * dlogprob - o.entropyCoef * dH);
      // Rounding of the logits (relative to their magnitude) moves the result two ways: through
      // l_t, into dl (the first term), and through p_j, into dlogprob itself. The second
      // dominates when the target is nearly certain: 1 - p_y then cancels (seen: p_y = 1 - 2e-5).
      sensitivity[t * V + j] = (Math.abs(w * d2l * dlogprob) + Math.abs((w * dl * p[j]!) / o.temperature)) * magnitude;
    }

    if (w > 0) {
      const r = Math.exp(Math.min(Math.max(l - old, -CLAMP), CLAMP));
      masked++;
      klSum += old - l;
      ratioSum += r;
      ratioMax = Math.max(ratioMax, r);
      entSum += H;
      if (!nll && adv < 0 && r < 1 - o.clipLow) low++;
      if (!nll && adv > 0 && r > 1 + o.clipHigh) high++;
    }
  }
  const mean = (x: number) => (masked > 0 ? x / masked : 0);
  return {
    loss,
    lossScale,
    lossSensitivity,
    logprobs,
    entropy,
    gradLogits: grad,
    gradSensitivity: sensitivity,
    stats: {
      approxKl: mean(klSum),
      clipFracLow: mean(low),
      clipFracHigh: mean(high),
      ratioMean: mean(ratioSum),
      ratioMax: masked > 0 ? ratioMax : 0,
      entropyMean: mean(entSum),
      maskedTokens: masked,
    },
  };
}

/** logits = hidden weight^T in float64. */
export function matmulTransposed(a: ArrayLike<number>, b: ArrayLike<number>, rows: number, inner: number, cols: number): Float64Array {
  const out = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      let acc = 0;
      for (let k = 0; k < inner; k++) acc += a[i * inner + k]! * b[j * inner + k]!;
      out[i * cols + j] = acc;
    }
  }
  return out;
}

/** out[i, j] = sum_k a[k, i] b[k, j] (a^T b), a [K, rows], b [K, cols]. */
export function transposedMatmul(a: ArrayLike<number>, b: ArrayLike<number>, K: number, rows: number, cols: number): Float64Array {
  const out = new Float64Array(rows * cols);
  for (let k = 0; k < K; k++) {
    for (let i = 0; i < rows; i++) {
      const aki = a[k * rows + i]!;
      if (aki === 0) continue;
      for (let j = 0; j < cols; j++) out[i * cols + j] += aki * b[k * cols + j]!;
    }
  }
  return out;
}

/** out = a b, a [rows, K], b [K, cols]. */
export function matmul(a: ArrayLike<number>, b: ArrayLike<number>, rows: number, K: number, cols: number): Float64Array {
  const out = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    for (let k = 0; k < K; k++) {
      const aik = a[i * K + k]!;
      if (aik === 0) continue;
      for (let j = 0; j < cols; j++) out[i * cols + j] += aik * b[k * cols + j]!;
    }
  }
  return out;
}

export function abs(values: ArrayLike<number>): Float64Array {
  return Float64Array.from(values as ArrayLike<number>, Math.abs);
}
