/**
 * Tests of the float64 Qwen3 reference itself, so that native code can be checked against it:
 * hand-computed pieces, the invariances the architecture guarantees, and equivalent configs.
 */
import t from 'tap';

import { maxErrorOverMax } from './compare.js';
import { applyRotary, qwen3LogitsF64, referenceParameterShapes, rmsNorm, type ReferenceConfig } from './qwen3.js';
import { Rng, testSeed } from './random.js';

const seed = testSeed();
t.comment(`seed ${seed} (replay with SWERL_TEST_SEED=${seed})`);
const rng = new Rng(seed);

const TINY: ReferenceConfig = {
  vocabSize: 300,
  hiddenSize: 32,
  intermediateSize: 64,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  headDim: 8,
  ropeTheta: 10000,
  rmsNormEps: 1e-6,
  tieWordEmbeddings: false,
  qkNorm: true,
  attentionBias: false,
};

/** Random weights at scales that keep activations O(1): norms near 1, projections ~1/sqrt(in). */
function randomWeights(config: ReferenceConfig): Map<string, Float64Array> {
  const weights = new Map<string, Float64Array>();
  for (const [name, shape] of referenceParameterShapes(config)) {
    const size = shape.reduce((a, b) => a * b, 1);
    const isNorm = name.endsWith('norm.weight');
    const scale = isNorm ? 0.2 : name.endsWith('.bias') ? 0.5 : name.includes('embed') ? 1 : 1 / Math.sqrt(shape[1]!);
    weights.set(name, Float64Array.from({ length: size }, () => (isNorm ? 1 : 0) + scale * rng.normal()));
  }
  return weights;
}

function randomTokens(T: number, vocab: number): number[] {
  return Array.from({ length: T }, () => rng.int(vocab));
}

function row(logits: Float64Array, t: number, V: number): Float64Array {
  return logits.slice(t * V, (t + 1) * V);
}

t.test('parameter names and shapes are Hugging Face Qwen3 / Qwen2 names', async (t) => {
  const shapes = referenceParameterShapes({ ...TINY, numLayers: 1 });
  t.same(Object.fromEntries(shapes), {
    'model.embed_tokens.weight': [300, 32],
    'model.layers.0.input_layernorm.weight': [32],
    'model.layers.0.self_attn.q_proj.weight': [32, 32],
    'model.layers.0.self_attn.k_proj.weight': [16, 32],
    'model.layers.0.self_attn.v_proj.weight': [16, 32],
    'model.layers.0.self_attn.o_proj.weight': [32, 32],
    'model.layers.0.self_attn.q_norm.weight': [8],
    'model.layers.0.self_attn.k_norm.weight': [8],
    'model.layers.0.post_attention_layernorm.weight': [32],
    'model.layers.0.mlp.gate_proj.weight': [64, 32],
    'model.layers.0.mlp.up_proj.weight': [64, 32],
    'model.layers.0.mlp.down_proj.weight': [32, 64],
    'model.norm.weight': [32],
    'lm_head.weight': [300, 32],
  });

  const qwen2 = referenceParameterShapes({ ...TINY, numHeads: 6, headDim: 4, qkNorm: false, attentionBias: true, tieWordEmbeddings: true });
  t.same(qwen2.get('model.layers.1.self_attn.q_proj.weight'), [24, 32], 'q_proj rows = numHeads * headDim (not hidden)');
  t.same(qwen2.get('model.layers.1.self_attn.o_proj.weight'), [32, 24]);
  t.same(qwen2.get('model.layers.1.self_attn.q_proj.bias'), [24]);
  t.same(qwen2.get('model.layers.1.self_attn.k_proj.bias'), [8]);
  t.same(qwen2.get('model.layers.1.self_attn.v_proj.bias'), [8]);
  t.notOk(qwen2.has('model.layers.1.self_attn.o_proj.bias'), 'Qwen2 has no o_proj bias');
  t.notOk(qwen2.has('model.layers.1.self_attn.q_norm.weight'), 'no q_norm without qkNorm');
  t.notOk(qwen2.has('lm_head.weight'), 'tied: no lm_head.weight');
  t.equal(qwen2.size, 1 + 2 * 12 + 1, 'twelve tensors per layer, embeddings and final norm');
});

t.test('RMSNorm against hand-computed values', async (t) => {
  // mean(x^2) = (9 + 16) / 2 = 12.5
  const out = rmsNorm([3, 4], [1, 2], 0);
  t.ok(Math.abs(out[0]! - 3 / Math.sqrt(12.5)) < 1e-15 && Math.abs(out[1]! - 8 / Math.sqrt(12.5)) < 1e-15, `${out}`);
  // mean(x^2) = 30 / 4 = 7.5, eps inside the square root
  const eps = 0.5;
  const out2 = rmsNorm([1, -2, 3, -4], [1, 1, 2, 0.5], eps);
  const s = 1 / Math.sqrt(7.5 + eps);
  t.same(Array.from(out2).map((x) => x.toFixed(14)), [s, -2 * s, 6 * s, -2 * s].map((x) => x.toFixed(14)));
  t.same(Array.from(rmsNorm([0, 0], [1, 1], 1e-6)), [0, 0], 'zero stays zero');
});

t.test('rotary: identity at 0, hand-computed rotation, relative positions only', async (t) => {
  const q = [0.3, -1.2, 2.5, 0.7];
  t.same(Array.from(applyRotary(q, 0, 10000)), q, 'position 0 is the identity');

  // d = 4, theta = 100: inv_freq = [1, 1/10]; pairs (0, 2) at angle p, (1, 3) at angle p/10.
  const [a, b, c, d] = q;
  const p = 3;
  const expected = [
    a! * Math.cos(p) - c! * Math.sin(p),
    b! * Math.cos(p / 10) - d! * Math.sin(p / 10),
    c! * Math.cos(p) + a! * Math.sin(p),
    d! * Math.cos(p / 10) + b! * Math.sin(p / 10),
  ];
  const got = applyRotary(q, p, 100);
  t.ok(expected.every((e, i) => Math.abs(got[i]! - e) < 1e-14), `${got} vs ${expected}`);

  for (let trial = 0; trial < 20; trial++) {
    const x = Array.from({ length: 8 }, () => rng.normal());
    const y = Array.from({ length: 8 }, () => rng.normal());
    const [m, n, shift] = [rng.int(50), rng.int(50), rng.int(1000)];
    const dot = (u: ArrayLike<number>, v: ArrayLike<number>) => Array.from(u).reduce((acc, ui, i) => acc + ui * v[i]!, 0);
    const base = dot(applyRotary(x, m, 10000), applyRotary(y, n, 10000));
    const shifted = dot(applyRotary(x, m + shift, 10000), applyRotary(y, n + shift, 10000));
    t.ok(Math.abs(base - shifted) < 1e-12, `q.k at (${m}, ${n}) = at (${m + shift}, ${n + shift})`);
    t.ok(Math.abs(Math.hypot(...applyRotary(x, m, 10000)) - Math.hypot(...x)) < 1e-12, 'norm preserved');
  }
});

t.test('causal: logits at t do not depend on later tokens', async (t) => {
  const weights = randomWeights(TINY);
  const T = 16;
  const V = TINY.vocabSize;
  const tokens = randomTokens(T, V);
  const logits = qwen3LogitsF64(TINY, weights, tokens);
  t.equal(logits.length, T * V);
  const cut = 9;
  const changed = [...tokens.slice(0, cut), ...tokens.slice(cut).map((x) => (x + 1 + rng.int(V - 1)) % V)];
  const after = qwen3LogitsF64(TINY, weights, changed);
  for (let s = 0; s < cut; s++) t.equal(maxErrorOverMax(row(after, s, V), row(logits, s, V)), 0, `row ${s} unchanged`);
  for (let s = cut; s < T; s++) t.ok(maxErrorOverMax(row(after, s, V), row(logits, s, V)) > 1e-6, `row ${s} changed`);
});

t.test('attention sees only relative positions: shifting every position leaves the logits', async (t) => {
  for (const qkNorm of [true, false]) {
    const config = { ...TINY, qkNorm, attentionBias: !qkNorm };
    const weights = randomWeights(config);
    const tokens = randomTokens(12, config.vocabSize);
    const base = qwen3LogitsF64(config, weights, tokens);
    const shifted = qwen3LogitsF64(config, weights, tokens, tokens.map((_, i) => 500 + i));
    t.ok(maxErrorOverMax(shifted, base) < 1e-11, `qkNorm ${qkNorm}: ${maxErrorOverMax(shifted, base)}`);
    // ...while non-uniform positions do matter.
    const gapped = qwen3LogitsF64(config, weights, tokens, tokens.map((_, i) => (i < 6 ? i : i + 7)));
    t.ok(maxErrorOverMax(gapped, base) > 1e-6, `qkNorm ${qkNorm}: positions matter`);
  }
});

t.test('no layers: logits = norm(embedding) @ lm_head^T, by hand', async (t) => {
  for (const tieWordEmbeddings of [false, true]) {
    const config = { ...TINY, numLayers: 0, tieWordEmbeddings, rmsNormEps: 1e-3 };
    const weights = randomWeights(config);
    const tokens = randomTokens(5, config.vocabSize);
    const logits = qwen3LogitsF64(config, weights, tokens);
    const { hiddenSize: H, vocabSize: V } = config;
    const embed = weights.get('model.embed_tokens.weight')!;
    const head = weights.get(tieWordEmbeddings ? 'model.embed_tokens.weight' : 'lm_head.weight')!;
    const norm = weights.get('model.norm.weight')!;
    const expected = new Float64Array(tokens.length * V);
    tokens.forEach((id, s) => {
      const e = embed.subarray(id * H, (id + 1) * H);
      const rms = Math.sqrt(e.reduce((acc, x) => acc + x * x, 0) / H + 1e-3);
      for (let v = 0; v < V; v++) {
        let sum = 0;
        for (let k = 0; k < H; k++) sum += (e[k]! / rms) * norm[k]! * head[v * H + k]!;
        expected[s * V + v] = sum;
      }
    });
    t.ok(maxErrorOverMax(logits, expected) < 1e-13, `tied ${tieWordEmbeddings}`);
  }
});

/**
 * One layer over two tokens, by hand: token 0 attends only to itself (its output is v_0 of its
 * KV head); token 1 mixes v_0 and v_1 with weights sigmoid(+-(s_1 - s_0)), the two-key softmax.
 */
function twoTokensByHand(config: ReferenceConfig, weights: Map<string, Float64Array>, ids: number[], positions: number[]): number[] {
  const w = (name: string) => weights.get(name)!;
  const { hiddenSize: H, vocabSize: V, intermediateSize: I, headDim: D } = config;
  const matVec = (m: ArrayLike<number>, x: ArrayLike<number>, rows: number) =>
    Array.from({ length: rows }, (_, r) => Array.from(x).reduce((acc, xi, c) => acc + m[r * x.length + c]! * xi, 0));
  const proj = (name: string, x: ArrayLike<number>, rows: number) =>
    matVec(w(`model.layers.0.self_attn.${name}.weight`), x, rows).map((y, i) => y + w(`model.layers.0.self_attn.${name}.bias`)[i]!);
  const head = (flat: number[], h: number) => flat.slice(h * D, (h + 1) * D);
  const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => Array.from(a).reduce((acc, ai, i) => acc + ai * b[i]!, 0);

  const e = ids.map((id) => Array.from(w('model.embed_tokens.weight').subarray(id * H, (id + 1) * H)));
  const n1 = e.map((x) => rmsNorm(x, w('model.layers.0.input_layernorm.weight'), config.rmsNormEps));
  const q = n1.map((x, t) => {
    const flat = proj('q_proj', x, config.numHeads * D);
    return Array.from({ length: config.numHeads }, (_, h) =>
      applyRotary(rmsNorm(head(flat, h), w('model.layers.0.self_attn.q_norm.weight'), config.rmsNormEps), positions[t]!, config.ropeTheta));
  });
  const k = n1.map((x, t) => {
    const flat = proj('k_proj', x, config.numKvHeads * D);
    return Array.from({ length: config.numKvHeads }, (_, h) =>
      applyRotary(rmsNorm(head(flat, h), w('model.layers.0.self_attn.k_norm.weight'), config.rmsNormEps), positions[t]!, config.ropeTheta));
  });
  const v = n1.map((x) => {
    const flat = proj('v_proj', x, config.numKvHeads * D);
    return Array.from({ length: config.numKvHeads }, (_, h) => head(flat, h));
  });

  const group = config.numHeads / config.numKvHeads;
  const logits: number[] = [];
  for (let t = 0; t < ids.length; t++) {
    const attn: number[] = [];
    for (let h = 0; h < config.numHeads; h++) {
      const kv = Math.floor(h / group);
      if (t === 0) {
        attn.push(...v[0]![kv]!);
      } else {
        const s0 = dot(q[1]![h]!, k[0]![kv]!) / Math.sqrt(D);
        const s1 = dot(q[1]![h]!, k[1]![kv]!) / Math.sqrt(D);
        const p1 = 1 / (1 + Math.exp(s0 - s1));
        attn.push(...v[0]![kv]!.map((v0, d) => (1 - p1) * v0 + p1 * v[1]![kv]![d]!));
      }
    }
    const h1 = matVec(w('model.layers.0.self_attn.o_proj.weight'), attn, H).map((x, i) => x + e[t]![i]!);
    const n2 = rmsNorm(h1, w('model.layers.0.post_attention_layernorm.weight'), config.rmsNormEps);
    const gate = matVec(w('model.layers.0.mlp.gate_proj.weight'), n2, I);
    const up = matVec(w('model.layers.0.mlp.up_proj.weight'), n2, I);
    const act = gate.map((g, i) => (g / (1 + Math.exp(-g))) * up[i]!);
    const h2 = matVec(w('model.layers.0.mlp.down_proj.weight'), act, H).map((x, i) => x + h1[i]!);
    logits.push(...matVec(w('lm_head.weight'), rmsNorm(h2, w('model.norm.weight'), config.rmsNormEps), V));
  }
  return logits;
}

t.test('one layer over two tokens, by hand: q/k norm, rotary, scaled two-key softmax, o_proj, SwiGLU', async (t) => {
  const config = { ...TINY, numLayers: 1, attentionBias: true, qkNorm: true };
  const weights = randomWeights(config);
  const ids = [17, 230];
  const positions = [5, 9];
  const expected = twoTokensByHand(config, weights, ids, positions);
  const logits = qwen3LogitsF64(config, weights, ids, positions);
  t.ok(maxErrorOverMax(logits, expected) < 1e-13, `${maxErrorOverMax(logits, expected)}`);

  // One token: its single key makes q and k irrelevant.
  const one = expected.slice(0, config.vocabSize);
  for (const name of ['q_proj.weight', 'k_proj.weight', 'q_norm.weight', 'k_norm.weight']) {
    const scrambled = new Map(weights);
    scrambled.set(`model.layers.0.self_attn.${name}`, weights.get(`model.layers.0.self_attn.${name}`)!.map(() => rng.normal()));
    t.ok(maxErrorOverMax(qwen3LogitsF64(config, scrambled, [ids[0]!], [5]), one) < 1e-13, `${name} irrelevant for one token`);
  }
});

t.test('GQA equals MHA with each KV head repeated for its group of query heads', async (t) => {
  for (const [numHeads, numKvHeads] of [[4, 2], [4, 1], [6, 3]] as const) {
    const gqa = { ...TINY, numHeads, numKvHeads, attentionBias: true };
    const mha = { ...gqa, numKvHeads: numHeads };
    const weights = randomWeights(gqa);
    const D = gqa.headDim;
    const group = numHeads / numKvHeads;
    const mhaWeights = new Map(weights);
    for (let layer = 0; layer < gqa.numLayers; layer++) {
      for (const proj of ['k_proj', 'v_proj']) {
        for (const [suffix, width] of [['weight', gqa.hiddenSize], ['bias', 1]] as const) {
          const name = `model.layers.${layer}.self_attn.${proj}.${suffix}`;
          const src = weights.get(name)!;
          const dst = new Float64Array(numHeads * D * width);
          // HF repeat_kv (repeat_interleave): MHA head h takes GQA KV head floor(h / group).
          for (let h = 0; h < numHeads; h++) dst.set(src.subarray(Math.floor(h / group) * D * width, (Math.floor(h / group) + 1) * D * width), h * D * width);
          mhaWeights.set(name, dst);
        }
      }
    }
    const tokens = randomTokens(10, gqa.vocabSize);
    const a = qwen3LogitsF64(gqa, weights, tokens);
    const b = qwen3LogitsF64(mha, mhaWeights, tokens);
    t.ok(maxErrorOverMax(a, b) < 1e-13, `${numHeads} heads / ${numKvHeads} KV heads: ${maxErrorOverMax(a, b)}`);
  }
});

t.test('zero biases equal no biases; tied equals untied with lm_head = embed_tokens', async (t) => {
  const weights = randomWeights(TINY);
  const tokens = randomTokens(8, TINY.vocabSize);
  const base = qwen3LogitsF64(TINY, weights, tokens);

  const biased = new Map(weights);
  for (const [name, shape] of referenceParameterShapes({ ...TINY, attentionBias: true })) {
    if (name.endsWith('.bias')) biased.set(name, new Float64Array(shape[0]!));
  }
  t.equal(maxErrorOverMax(qwen3LogitsF64({ ...TINY, attentionBias: true }, biased, tokens), base), 0);

  const tied = new Map(weights);
  tied.set('model.embed_tokens.weight', weights.get('lm_head.weight')!);
  tied.delete('lm_head.weight');
  const untied = new Map(tied);
  untied.set('lm_head.weight', weights.get('lm_head.weight')!);
  t.equal(maxErrorOverMax(qwen3LogitsF64({ ...TINY, tieWordEmbeddings: true }, tied, tokens), qwen3LogitsF64(TINY, untied, tokens)), 0);
});

t.test('bad weights and inputs throw errors that name them', async (t) => {
  const weights = randomWeights(TINY);
  const missing = new Map(weights);
  missing.delete('model.layers.1.self_attn.k_norm.weight');
  t.throws(() => qwen3LogitsF64(TINY, missing, [1]), /model\.layers\.1\.self_attn\.k_norm\.weight \[8\] is missing/);
  const short = new Map(weights);
  short.set('model.layers.0.mlp.up_proj.weight', new Float64Array(10));
  t.throws(() => qwen3LogitsF64(TINY, short, [1]), /model\.layers\.0\.mlp\.up_proj\.weight has 10 values; shape \[64,32\] needs 2048/);
  t.throws(() => qwen3LogitsF64({ ...TINY, tieWordEmbeddings: true }, weights, [1]), /unexpected weight lm_head\.weight/);
  t.throws(() => qwen3LogitsF64(TINY, weights, [300]), /token id 300/);
  t.throws(() => qwen3LogitsF64(TINY, weights, [1, 2], [0]), /1 positions for 2 tokens/);
  t.throws(() => qwen3LogitsF64({ ...TINY, numKvHeads: 3 }, weights, [1]), /not a multiple of numKvHeads/);
});
