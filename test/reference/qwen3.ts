/**
 * An independent float64 reference of the Qwen3-family decoder forward (Qwen3, and Qwen2 /
 * Llama with the switches off), written from Hugging Face transformers' modeling_qwen3.py and
 * modeling_qwen2.py without looking at the native code: plain loops over Float64Arrays, slow,
 * for tiny configs only.
 *
 * Per layer: h += o_proj(attention(rope(qk_norm(q_proj(n))), rope(qk_norm(k_proj(n))), v_proj(n)))
 * with n = input_layernorm(h); then h += down(silu(gate(m)) * up(m)) with
 * m = post_attention_layernorm(h). Logits = norm(h) lm_head^T. Linear: y = x W^T (+ b), W [out, in].
 */
export interface ReferenceConfig {
  vocabSize: number;
  hiddenSize: number;
  intermediateSize: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  ropeTheta: number;
  rmsNormEps: number;
  /** lm_head is model.embed_tokens.weight (no lm_head.weight). */
  tieWordEmbeddings: boolean;
  /** Qwen3: RMSNorm over head_dim on each head of q and k, before rotary. */
  qkNorm: boolean;
  /** Qwen2: biases on q_proj, k_proj, v_proj (never on o_proj). */
  attentionBias: boolean;
  /** Long-context rotary scaling, as config.json's rope_scaling holds it (absent: plain RoPE). */
  ropeScaling?: ReferenceRopeScaling;
}

/** YaRN (Peng et al. 2023, as transformers applies it) or Llama 3.1's frequency bands. */
export type ReferenceRopeScaling =
  | { type: 'yarn'; factor: number; originalMaxPositions: number; betaFast?: number; betaSlow?: number; attentionFactor?: number }
  | { type: 'llama3'; factor: number; originalMaxPositions: number; lowFreqFactor: number; highFreqFactor: number };

/**
 * The rotary inverse frequencies theta^(-2i/d), i < d/2, in float64, under the scaling, and the
 * factor on cos and sin. YaRN: a pair that turns fewer than beta_slow times over the original
 * context is interpolated (frequency / factor), more than beta_fast times kept, linearly
 * blended between (on whole dims); cos and sin are scaled by 0.1 ln(factor) + 1. Llama 3.1:
 * wavelengths above original / low_freq_factor are divided by factor, below original /
 * high_freq_factor kept, blended by (original / wavelength - low) / (high - low) between.
 */
export function rotaryFrequencies(config: ReferenceConfig): { invFreq: Float64Array; scale: number } {
  const d = config.headDim;
  const base = Float64Array.from({ length: d / 2 }, (_, i) => config.ropeTheta ** (-(2 * i) / d));
  const r = config.ropeScaling;
  if (r === undefined) return { invFreq: base, scale: 1 };
  if (r.type === 'yarn') {
    const dimFor = (rotations: number) => (d * Math.log(r.originalMaxPositions / (rotations * 2 * Math.PI))) / (2 * Math.log(config.ropeTheta));
    const low = Math.max(Math.floor(dimFor(r.betaFast ?? 32)), 0);
    let high = Math.min(Math.ceil(dimFor(r.betaSlow ?? 1)), d - 1);
    if (high === low) high += 0.001;
    const invFreq = base.map((f, i) => {
      const kept = 1 - Math.min(1, Math.max(0, (i - low) / (high - low)));  // 1: as trained, 0: interpolated
      return (f / r.factor) * (1 - kept) + f * kept;
    });
    return { invFreq, scale: r.attentionFactor ?? (r.factor > 1 ? 0.1 * Math.log(r.factor) + 1 : 1) };
  }
  const lowWavelength = r.originalMaxPositions / r.lowFreqFactor;
  const highWavelength = r.originalMaxPositions / r.highFreqFactor;
  const invFreq = base.map((f) => {
    const wavelength = (2 * Math.PI) / f;
    if (wavelength < highWavelength) return f;
    if (wavelength > lowWavelength) return f / r.factor;
    const smooth = (r.originalMaxPositions / wavelength - r.lowFreqFactor) / (r.highFreqFactor - r.lowFreqFactor);
    return (1 - smooth) * (f / r.factor) + smooth * f;
  });
  return { invFreq, scale: 1 };
}

type Weights = Map<string, ArrayLike<number>>;

/** Every parameter the forward reads, with its Hugging Face name and shape. */
export function referenceParameterShapes(config: ReferenceConfig): Map<string, number[]> {
  const { vocabSize: V, hiddenSize: H, intermediateSize: I, numHeads, numKvHeads, headDim: D } = config;
  const shapes = new Map<string, number[]>();
  shapes.set('model.embed_tokens.weight', [V, H]);
  for (let i = 0; i < config.numLayers; i++) {
    const p = `model.layers.${i}`;
    shapes.set(`${p}.input_layernorm.weight`, [H]);
    shapes.set(`${p}.self_attn.q_proj.weight`, [numHeads * D, H]);
    shapes.set(`${p}.self_attn.k_proj.weight`, [numKvHeads * D, H]);
    shapes.set(`${p}.self_attn.v_proj.weight`, [numKvHeads * D, H]);
    if (config.attentionBias) {
      shapes.set(`${p}.self_attn.q_proj.bias`, [numHeads * D]);
      shapes.set(`${p}.self_attn.k_proj.bias`, [numKvHeads * D]);
      shapes.set(`${p}.self_attn.v_proj.bias`, [numKvHeads * D]);
    }
    shapes.set(`${p}.self_attn.o_proj.weight`, [H, numHeads * D]);
    if (config.qkNorm) {
      shapes.set(`${p}.self_attn.q_norm.weight`, [D]);
      shapes.set(`${p}.self_attn.k_norm.weight`, [D]);
    }
    shapes.set(`${p}.post_attention_layernorm.weight`, [H]);
    shapes.set(`${p}.mlp.gate_proj.weight`, [I, H]);
    shapes.set(`${p}.mlp.up_proj.weight`, [I, H]);
    shapes.set(`${p}.mlp.down_proj.weight`, [H, I]);
  }
  shapes.set('model.norm.weight', [H]);
  if (!config.tieWordEmbeddings) shapes.set('lm_head.weight', [V, H]);
  return shapes;
}

/** x * 1/sqrt(mean(x^2) + eps) * weight, over one vector. */
export function rmsNorm(x: ArrayLike<number>, weight: ArrayLike<number>, eps: number): Float64Array {
  let sumSquares = 0;
  for (let i = 0; i < x.length; i++) sumSquares += x[i]! * x[i]!;
  const scale = 1 / Math.sqrt(sumSquares / x.length + eps);
  return Float64Array.from({ length: x.length }, (_, i) => x[i]! * scale * weight[i]!);
}

/**
 * Rotary position embedding of one head vector (length d, even) at `position`:
 * x * cos + rotate_half(x) * sin, with angles position * theta^(-2i/d) for i < d/2 repeated
 * as cat(freqs, freqs), and rotate_half(x) = cat(-x[d/2:], x[:d/2]).
 */
export function applyRotary(x: ArrayLike<number>, position: number, rotary: number | { invFreq: Float64Array; scale: number }): Float64Array {
  const d = x.length;
  const half = d / 2;
  const { invFreq, scale } = typeof rotary === 'number' ? { invFreq: Float64Array.from({ length: half }, (_, i) => rotary ** (-(2 * i) / d)), scale: 1 } : rotary;
  const out = new Float64Array(d);
  for (let j = 0; j < d; j++) {
    const angle = position * invFreq[j % half]!;
    const rotated = j < half ? -x[j + half]! : x[j - half]!;
    out[j] = scale * (x[j]! * Math.cos(angle) + rotated * Math.sin(angle));
  }
  return out;
}

/** Logits [T, vocab], row-major, for one sequence. */
export function qwen3LogitsF64(
  config: ReferenceConfig,
  weights: Weights,
  tokenIds: number[],
  positions?: number[],
): Float64Array {
  checkConfig(config);
  checkWeights(config, weights);
  const T = tokenIds.length;
  const pos = positions ?? Array.from({ length: T }, (_, t) => t);
  if (pos.length !== T) throw new Error(`qwen3 reference: ${pos.length} positions for ${T} tokens; give one per token`);
  for (const id of tokenIds) {
    if (!Number.isInteger(id) || id < 0 || id >= config.vocabSize) {
      throw new Error(`qwen3 reference: token id ${id} is outside [0, ${config.vocabSize})`);
    }
  }
  const w = (name: string) => weights.get(name)!;
  const H = config.hiddenSize;

  // hidden[t] : one Float64Array of H per token
  const embed = w('model.embed_tokens.weight');
  let hidden: Float64Array[] = tokenIds.map((id) => Float64Array.from({ length: H }, (_, k) => embed[id * H + k]!));

  for (let layer = 0; layer < config.numLayers; layer++) {
    const p = `model.layers.${layer}`;
    const normed = hidden.map((h) => rmsNorm(h, w(`${p}.input_layernorm.weight`), config.rmsNormEps));
    const attended = attention(config, weights, p, normed, pos);
    hidden = hidden.map((h, t) => add(h, linear(attended[t]!, w(`${p}.self_attn.o_proj.weight`))));

    const normed2 = hidden.map((h) => rmsNorm(h, w(`${p}.post_attention_layernorm.weight`), config.rmsNormEps));
    hidden = hidden.map((h, t) => add(h, mlp(weights, p, normed2[t]!)));
  }

  const lmHead = w(config.tieWordEmbeddings ? 'model.embed_tokens.weight' : 'lm_head.weight');
  const logits = new Float64Array(T * config.vocabSize);
  hidden.forEach((h, t) => {
    logits.set(linear(rmsNorm(h, w('model.norm.weight'), config.rmsNormEps), lmHead), t * config.vocabSize);
  });
  return logits;
}

/** Causal grouped-query attention; returns the concatenated heads [T][numHeads * headDim]. */
function attention(config: ReferenceConfig, weights: Weights, p: string, x: Float64Array[], positions: number[]): Float64Array[] {
  const w = (name: string) => weights.get(name)!;
  const bias = (name: string) => (config.attentionBias ? w(`${p}.self_attn.${name}.bias`) : undefined);
  const D = config.headDim;
  const T = x.length;

  const rotary = rotaryFrequencies(config);
  /** [T][count][D]: the projection of every token, split into heads. */
  const project = (proj: string, count: number): Float64Array[][] =>
    x.map((row) => {
      const flat = linear(row, w(`${p}.self_attn.${proj}.weight`), bias(proj));
      return Array.from({ length: count }, (_, h) => flat.slice(h * D, (h + 1) * D));
    });
  /** Qwen3Attention.forward: q_norm/k_norm on each head first, then rotary (q and k only). */
  const normAndRotate = (heads: Float64Array[][], norm: string): Float64Array[][] =>
    heads.map((row, t) =>
      row.map((head) => {
        const normed = config.qkNorm ? rmsNorm(head, w(`${p}.self_attn.${norm}.weight`), config.rmsNormEps) : head;
        return applyRotary(normed, positions[t]!, rotary);
      }),
    );
  const q = normAndRotate(project('q_proj', config.numHeads), 'q_norm');
  const k = normAndRotate(project('k_proj', config.numKvHeads), 'k_norm');
  const v = project('v_proj', config.numKvHeads);

  const groupSize = config.numHeads / config.numKvHeads;
  const out = Array.from({ length: T }, () => new Float64Array(config.numHeads * D));
  for (let h = 0; h < config.numHeads; h++) {
    const kv = Math.floor(h / groupSize); // repeat_kv: query heads [g*kv, g*(kv+1)) share KV head kv
    for (let t = 0; t < T; t++) {
      const scores = new Float64Array(t + 1);
      for (let s = 0; s <= t; s++) scores[s] = dot(q[t]![h]!, k[s]![kv]!) / Math.sqrt(D);
      const probs = softmax(scores);
      for (let s = 0; s <= t; s++) {
        for (let d = 0; d < D; d++) out[t]![h * D + d] += probs[s]! * v[s]![kv]![d]!;
      }
    }
  }
  return out;
}

function mlp(weights: Weights, p: string, x: Float64Array): Float64Array {
  const gate = linear(x, weights.get(`${p}.mlp.gate_proj.weight`)!);
  const up = linear(x, weights.get(`${p}.mlp.up_proj.weight`)!);
  const act = Float64Array.from(gate, (g, i) => (g / (1 + Math.exp(-g))) * up[i]!); // silu(g) * up
  return linear(act, weights.get(`${p}.mlp.down_proj.weight`)!);
}

/** y = x W^T + b with W [out, in] row-major. */
function linear(x: ArrayLike<number>, weight: ArrayLike<number>, bias?: ArrayLike<number>): Float64Array {
  const inDim = x.length;
  const outDim = weight.length / inDim;
  const y = new Float64Array(outDim);
  for (let o = 0; o < outDim; o++) {
    let sum = bias ? bias[o]! : 0;
    for (let i = 0; i < inDim; i++) sum += weight[o * inDim + i]! * x[i]!;
    y[o] = sum;
  }
  return y;
}

function softmax(scores: Float64Array): Float64Array {
  const max = Math.max(...scores);
  const exps = scores.map((s) => Math.exp(s - max));
  const total = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / total);
}

function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

function add(a: Float64Array, b: Float64Array): Float64Array {
  return a.map((x, i) => x + b[i]!);
}

function checkConfig(config: ReferenceConfig): void {
  const positive = ['vocabSize', 'hiddenSize', 'intermediateSize', 'numHeads', 'numKvHeads', 'headDim'] as const;
  for (const key of positive) {
    if (!Number.isInteger(config[key]) || config[key] <= 0) throw new Error(`qwen3 reference: config.${key} is ${config[key]}; give a positive integer`);
  }
  if (!Number.isInteger(config.numLayers) || config.numLayers < 0) throw new Error(`qwen3 reference: config.numLayers is ${config.numLayers}`);
  if (config.numHeads % config.numKvHeads !== 0) {
    throw new Error(`qwen3 reference: numHeads ${config.numHeads} is not a multiple of numKvHeads ${config.numKvHeads}`);
  }
  if (config.headDim % 2 !== 0) throw new Error(`qwen3 reference: headDim ${config.headDim} must be even for rotary`);
}

function checkWeights(config: ReferenceConfig, weights: Weights): void {
  const shapes = referenceParameterShapes(config);
  for (const [name, shape] of shapes) {
    const weight = weights.get(name);
    const expected = shape.reduce((a, b) => a * b, 1);
    if (!weight) throw new Error(`qwen3 reference: weight ${name} [${shape}] is missing`);
    if (weight.length !== expected) {
      throw new Error(`qwen3 reference: weight ${name} has ${weight.length} values; shape [${shape}] needs ${expected}`);
    }
  }
  for (const name of weights.keys()) {
    if (!shapes.has(name)) {
      throw new Error(
        `qwen3 reference: unexpected weight ${name} for this config (tieWordEmbeddings ${config.tieWordEmbeddings}, qkNorm ${config.qkNorm}, attentionBias ${config.attentionBias}, numLayers ${config.numLayers})`,
      );
    }
  }
}
