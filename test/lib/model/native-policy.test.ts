import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

import t from 'tap';

import { SwerlError } from '../../../lib/errors.js';
import { presetConfig } from '../../../lib/model/model-config.js';
import { NativePolicy, type TrainSequence } from '../../../lib/model/native-policy.js';
import { native } from '../../../lib/native.js';
import { readCheckpointTensors, readSafetensorsHeader } from '../../../lib/model/safetensors.js';
import { qwen3LogitsF64 } from '../../reference/qwen3.js';
import { Rng, testSeed } from '../../reference/random.js';
import { writeTinyCheckpoint } from '../../support/tiny-checkpoint.js';

const seed = testSeed();
t.comment(`seed ${seed} (replay with SWERL_TEST_SEED=${seed})`);
const rng = new Rng(seed);

const TINY = presetConfig('qwen3-tiny', 265);

function randomTokens(n: number, vocab: number): number[] {
  return Array.from({ length: n }, () => rng.int(vocab));
}

function logSoftmaxRow(logits: Float64Array, row: number, V: number): Float64Array {
  const z = logits.subarray(row * V, (row + 1) * V);
  const max = Math.max(...z);
  const lse = max + Math.log(z.reduce((s, v) => s + Math.exp(v - max), 0));
  return z.map((v) => v - lse);
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; ++i) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

t.test('the native forward matches an independent float64 reference (Qwen3, Qwen2, Llama)', async (t) => {
  for (const modelType of ['qwen3', 'qwen2', 'llama'] as const) {
    const ckpt = await writeTinyCheckpoint(path.join(t.testdir(), modelType), rng, { modelType });
    const policy = await NativePolicy.load(ckpt.dir);
    t.teardown(() => policy.dispose());
    const V = ckpt.reference.vocabSize;
    const sequences = [randomTokens(17, V), randomTokens(9, V), randomTokens(1, V)];
    const native = await policy.logprobs(sequences);
    let worst = 0;
    for (const [i, ids] of sequences.entries()) {
      const logits = qwen3LogitsF64(ckpt.reference, ckpt.weights, ids);
      for (let j = 1; j < ids.length; ++j) {
        const expected = logSoftmaxRow(logits, j - 1, V)[ids[j]!]!;
        worst = Math.max(worst, Math.abs(native[i]![j]! - expected));
      }
      t.equal(native[i]![0], 0, `${modelType}: the first token has no logprob`);
    }
    t.ok(worst < 2e-4, `${modelType}: logprobs of the sampled tokens within 2e-4 of float64 (max |Δ| ${worst.toExponential(2)})`);

    // One whole row: every vocabulary entry as the next token after the same prefix.
    const prefix = randomTokens(6, V);
    const rows = await policy.logprobs(Array.from({ length: V }, (_, v) => [...prefix, v]));
    const expectedRow = logSoftmaxRow(qwen3LogitsF64(ckpt.reference, ckpt.weights, prefix), 5, V);
    const row = rows.map((r) => r[6]!);
    t.ok(maxAbsDiff(row, expectedRow) < 2e-4, `${modelType}: a full row of ${V} logprobs within 2e-4 (max |Δ| ${maxAbsDiff(row, expectedRow).toExponential(2)})`);
  }
});

t.test('long-context rope scaling (YaRN as Qwen3 ships it, Llama 3.1) matches the float64 reference', async (t) => {
  // Original contexts small enough that the tiny head's frequencies fall on every side of the
  // scalings' bands, and positions up to 48 that turn the fast pairs many times.
  const cases = [
    { name: 'yarn', modelType: 'qwen3' as const, hf: { rope_type: 'yarn', factor: 4.0, original_max_position_embeddings: 64 }, reference: { type: 'yarn' as const, factor: 4, originalMaxPositions: 64 }, maxPositions: 256 },
    { name: 'yarn, beta and attention factor given', modelType: 'qwen2' as const, hf: { type: 'yarn', factor: 2.5, original_max_position_embeddings: 100, beta_fast: 16, beta_slow: 2, attention_factor: 1.3 }, reference: { type: 'yarn' as const, factor: 2.5, originalMaxPositions: 100, betaFast: 16, betaSlow: 2, attentionFactor: 1.3 }, maxPositions: 250 },
    { name: 'llama3', modelType: 'llama' as const, hf: { rope_type: 'llama3', factor: 8.0, original_max_position_embeddings: 64, low_freq_factor: 1.0, high_freq_factor: 4.0 }, reference: { type: 'llama3' as const, factor: 8, originalMaxPositions: 64, lowFreqFactor: 1, highFreqFactor: 4 }, maxPositions: 512 },
  ];
  for (const c of cases) {
    const ckpt = await writeTinyCheckpoint(path.join(t.testdir(), c.name.replace(/\W+/g, '-')), rng, { modelType: c.modelType, ropeScaling: { hf: c.hf, reference: c.reference, maxPositions: c.maxPositions } });
    const policy = await NativePolicy.load(ckpt.dir);
    t.teardown(() => policy.dispose());
    const V = ckpt.reference.vocabSize;
    const ids = randomTokens(48, V);
    const [native] = await policy.logprobs([ids]);
    const logits = qwen3LogitsF64(ckpt.reference, ckpt.weights, ids);
    const plain = qwen3LogitsF64({ ...ckpt.reference, ropeScaling: undefined }, ckpt.weights, ids);
    let worst = 0;
    let scalingMatters = 0;
    for (let j = 1; j < ids.length; ++j) {
      const expected = logSoftmaxRow(logits, j - 1, V)[ids[j]!]!;
      worst = Math.max(worst, Math.abs(native![j]! - expected));
      scalingMatters = Math.max(scalingMatters, Math.abs(expected - logSoftmaxRow(plain, j - 1, V)[ids[j]!]!));
    }
    t.ok(scalingMatters > 1e-2, `${c.name}: the scaling changes the logprobs (by up to ${scalingMatters.toFixed(3)})`);
    t.ok(worst < 2e-4, `${c.name}: logprobs within 2e-4 of float64 (max |Δ| ${worst.toExponential(2)})`);
  }
});

t.test('KV-cache sampling logprobs equal a full forward of the same tokens', async (t) => {
  const policy = await NativePolicy.load(TINY, { seed: rng.int(1000), maxBatchSize: 5 });
  t.teardown(() => policy.dispose());
  const prompts = [3, 11, 1, 25, 7, 40, 2].map((n) => randomTokens(n, 265));
  // Staggered: later requests join while earlier ones decode; more than maxBatchSize wait.
  const runs: Promise<{ prompt: number[]; tokens: Int32Array; logprobs: Float32Array }>[] = [];
  let mostRunning = 0;
  const watch = setInterval(() => (mostRunning = Math.max(mostRunning, policy.load.running)), 1);
  for (const [i, prompt] of prompts.entries()) {
    runs.push(policy.generate({ prompt, maxTokens: 60 + i * 3, stopTokens: [], ...(i % 3 === 2 ? { topK: 20 } : {}) }).then((g) => ({ prompt, ...g })));
    await new Promise((r) => setTimeout(r, 3));
  }
  const done = await Promise.all(runs);
  clearInterval(watch);
  t.ok(mostRunning > 1 && mostRunning <= 5, `requests shared decode batches of up to maxBatchSize (saw ${mostRunning})`);
  const full = await policy.logprobs(done.map((d) => [...d.prompt, ...d.tokens]));
  let worst = 0;
  for (const [i, d] of done.entries()) {
    t.equal(d.tokens.length, 60 + i * 3, `request ${i} sampled exactly maxTokens`);
    worst = Math.max(worst, maxAbsDiff(d.logprobs, full[i]!.subarray(d.prompt.length)));
  }
  t.ok(worst <= 1e-5, `sampler logprobs equal the full forward's within 1e-5 (max |Δ| ${worst.toExponential(2)})`);
});

t.test('sampling is seeded per request, whatever shares its batch', async (t) => {
  const policy = await NativePolicy.load(TINY, { seed: 3 });
  t.teardown(() => policy.dispose());
  const prompt = randomTokens(5, 265);
  const alone = await policy.generate({ prompt, maxTokens: 30, stopTokens: [], seed: 42 });
  const [together] = await Promise.all([
    policy.generate({ prompt, maxTokens: 30, stopTokens: [], seed: 42 }),
    policy.generate({ prompt: randomTokens(9, 265), maxTokens: 40, stopTokens: [], seed: 7 }),
    policy.generate({ prompt: randomTokens(2, 265), maxTokens: 10, stopTokens: [], seed: 8 }),
  ]);
  t.same(Array.from(together!.tokens), Array.from(alone.tokens), 'same seed, same tokens, alone or batched');
  const other = await policy.generate({ prompt, maxTokens: 30, stopTokens: [], seed: 43 });
  t.not(Array.from(other.tokens).join(), Array.from(alone.tokens).join(), 'another seed, other tokens');

  // Sampling follows the model's distribution: the most likely first token's frequency, at a
  // temperature that makes it likely enough to count.
  const temperature = 0.2, draws = 400;
  const rows = await policy.logprobs(Array.from({ length: 265 }, (_, v) => [...prompt, v]), { temperature });
  const row = rows.map((r) => r[prompt.length]!);
  const top = row.indexOf(Math.max(...row));
  const firstTokens = await Promise.all(Array.from({ length: draws }, (_, i) => policy.generate({ prompt, maxTokens: 1, temperature, seed: 1000 + i })));
  const expected = draws * Math.exp(row[top]!);
  const count = firstTokens.filter((g) => g.tokens[0] === top).length;
  t.ok(Math.abs(count - expected) < 5 * Math.sqrt(expected) + 2, `the likeliest token drawn ${count} times of ${draws}; expected ${expected.toFixed(1)}`);
  t.ok(firstTokens.every((g) => Math.abs(g.logprobs[0]! - row[g.tokens[0]!]!) < 1e-5), 'each draw reports its token\'s logprob at that temperature');
});

t.test('greedy, stop tokens, limits and cancellation', async (t) => {
  const policy = await NativePolicy.load(TINY, { seed: 5 });
  t.teardown(() => policy.dispose());
  const prompt = randomTokens(6, 265);
  const greedy = await policy.generate({ prompt, maxTokens: 8, temperature: 0, stopTokens: [] });
  const again = await policy.generate({ prompt, maxTokens: 8, temperature: 0, stopTokens: [], seed: 99 });
  t.same(Array.from(greedy.tokens), Array.from(again.tokens), 'greedy ignores the seed');
  const rows = await policy.logprobs(Array.from({ length: 265 }, (_, v) => [...prompt, v]));
  const best = rows.map((r) => r[prompt.length]!).reduce((bi, v, i, all) => (v > all[bi]! ? i : bi), 0);
  t.equal(greedy.tokens[0], best, 'greedy takes the argmax');

  const sampled = await policy.generate({ prompt, maxTokens: 40, stopTokens: [], seed: 11 });
  const stopAt = sampled.tokens[5]!;
  const stopped = await policy.generate({ prompt, maxTokens: 40, stopTokens: [stopAt], seed: 11 });
  t.equal(stopped.finishReason, 'stop');
  t.equal(stopped.tokens.at(-1), stopAt, 'the stop token ends the generation and is kept');
  t.ok(stopped.tokens.length <= 6);
  t.equal(sampled.finishReason, 'length');
  t.equal((await policy.generate({ prompt, maxTokens: 0 })).tokens.length, 0, 'maxTokens 0 samples nothing');

  const controller = new AbortController();
  const long = policy.generate({ prompt, maxTokens: 100000, stopTokens: [], signal: controller.signal });
  await new Promise((r) => setTimeout(r, 30));
  controller.abort();
  const cancelled = await long;
  t.equal(cancelled.finishReason, 'cancelled');
  t.ok(cancelled.tokens.length < 100000 && cancelled.tokens.length === cancelled.logprobs.length, 'keeps what it sampled');
  const after = await policy.generate({ prompt, maxTokens: 3, stopTokens: [] });
  t.equal(after.tokens.length, 3, 'the policy goes on after a cancellation');
});

function batchOf(rng: Rng, sequences: number[][], vocab: number, current?: Float32Array[]): TrainSequence[] {
  return sequences.map((tokens, i) => {
    const weights = tokens.map((_, j) => (j === 0 || rng.uniform() < 0.2 ? 0 : rng.uniform() / tokens.length));
    // Near the policy's own logprobs, so that ratios straddle the clip range.
    const oldLogprobs = tokens.map((_, j) => (current ? current[i]![j]! : -Math.log(vocab)) + 0.3 * rng.normal());
    return { tokens, weights, oldLogprobs, advantage: rng.normal() };
  });
}

function cosine(a: Float32Array, b: Float32Array): number {
  let ab = 0, aa = 0, bb = 0;
  for (let i = 0; i < a.length; ++i) {
    ab += a[i]! * b[i]!;
    aa += a[i]! * a[i]!;
    bb += b[i]! * b[i]!;
  }
  return ab / Math.sqrt(aa * bb);
}

t.test('fused-loss gradients equal plain autograd through materialized logits', async (t) => {
  const cases = [
    { name: 'qwen3 tied, clip-higher', modelType: 'qwen3' as const, loss: {} },
    { name: 'qwen2 untied, entropy + k3 KL + dual clip, temperature 0.7', modelType: 'qwen2' as const, loss: { entropyCoef: 0.01, kl: { coef: 0.05 }, dualClip: 3, temperature: 0.7 } },
    { name: 'llama, no upper clip, small tiles', modelType: 'llama' as const, loss: { clipHigh: null, chunkSize: { tokens: 5, vocab: 64 } } },
    { name: 'qwen3, the NLL objective (SFT) with an entropy bonus', modelType: 'qwen3' as const, loss: { objective: 'nll' as const, entropyCoef: 0.01 } },
  ];
  const root = t.testdir();
  for (const c of cases) {
    const ckpt = await writeTinyCheckpoint(path.join(root, c.name.replace(/\W+/g, '-')), rng, { modelType: c.modelType });
    for (const checkpointing of [false, true]) {
      const policy = await NativePolicy.load(ckpt.dir, { microBatchTokens: 40, activationCheckpointing: checkpointing });
      const V = ckpt.reference.vocabSize;
      const tokens = [randomTokens(13, V), randomTokens(5, V), randomTokens(20, V), randomTokens(2, V)];
      const current = await policy.logprobs(tokens, { temperature: (c.loss as { temperature?: number }).temperature ?? 1 });
      const sequences = batchOf(rng, tokens, V, current);
      const withRef = sequences.map((s, i) => ({ ...s, refLogprobs: Array.from(current[i]!, (v) => v + 0.2 * rng.normal()) }));
      const batch = { sequences: withRef, loss: c.loss };
      const fused = await policy.gradients(batch, { lossPath: 'fused' });
      const plain = await policy.gradients(batch, { lossPath: 'autograd' });
      policy.dispose();
      t.ok(Math.abs(fused.loss - plain.loss) <= 1e-5 * Math.max(1, Math.abs(plain.loss)), `${c.name}${checkpointing ? ', checkpointed' : ''}: loss ${fused.loss} vs ${plain.loss}`);
      let worstCos = 1, worstRel = 0;
      for (const [name, g] of Object.entries(plain.gradients)) {
        const f = fused.gradients[name]!;
        let diff = 0, norm = 0;
        for (let i = 0; i < g.length; ++i) {
          diff += (f[i]! - g[i]!) ** 2;
          norm += g[i]! ** 2;
        }
        if (norm > 0) {
          worstCos = Math.min(worstCos, cosine(f, g));
          worstRel = Math.max(worstRel, Math.sqrt(diff / norm));
        }
      }
      t.ok(worstRel < 1e-4, `${c.name}${checkpointing ? ', checkpointed' : ''}: every parameter's gradient within 1e-4 relative L2 (worst ${worstRel.toExponential(2)}, cosine ${worstCos.toFixed(7)})`);
    }
  }
});

t.test("the NLL objective's loss is the weighted negative log-likelihood of a full forward", async (t) => {
  const policy = await NativePolicy.load(TINY, { seed: 4 });
  t.teardown(() => policy.dispose());
  const corpus = [randomTokens(30, 265), randomTokens(12, 265), randomTokens(45, 265)];
  const masked = corpus.map((tokens) => tokens.map((_, j): number => (j > 0 && rng.uniform() < 0.7 ? 1 : 0)));
  const total = masked.flat().reduce((a, b) => a + b, 0);
  const lps = await policy.logprobs(corpus);
  let expected = 0;
  corpus.forEach((_, i) => masked[i]!.forEach((m, j) => (expected -= (m * lps[i]![j]!) / total)));
  // Advantages of either sign and old logprobs far off: the NLL ignores both.
  const sequences = corpus.map((tokens, i) => ({ tokens, weights: masked[i]!.map((m) => m / total), oldLogprobs: tokens.map(() => -30), advantage: i === 1 ? -2 : 0.5 }));
  const result = await policy.trainStep({ sequences, loss: { objective: 'nll' } });
  t.ok(Math.abs(result.loss - expected) < 1e-5 * Math.max(1, expected), `loss ${result.loss} = token-mean NLL ${expected}`);
  t.equal(result.clipFracLow + result.clipFracHigh, 0, 'nothing is clipped');
  const after = await policy.logprobs(corpus);
  let nllAfter = 0;
  corpus.forEach((_, i) => masked[i]!.forEach((m, j) => (nllAfter -= (m * after[i]![j]!) / total)));
  t.ok(nllAfter < expected, `one step lowers the NLL: ${expected.toFixed(4)} -> ${nllAfter.toFixed(4)}`);
});

t.test('a policy-gradient step with A = +1 on fixed sequences is supervised learning', async (t) => {
  const policy = await NativePolicy.load(TINY, { seed: 9, optimizer: { lr: 3e-3, weightDecay: 0 } });
  t.teardown(() => policy.dispose());
  // A small corpus with structure to learn: repeated phrases.
  const phrase = (n: number) => Array.from({ length: n }, (_, i) => 97 + ((i * 7 + n) % 13));
  const corpus = [phrase(30), phrase(24), phrase(36), phrase(28)];
  const weightsOf = (tokens: number[]) => tokens.map((_, j) => (j === 0 ? 0 : 1 / corpus.reduce((s, c) => s + c.length - 1, 0)));
  const nll = async () => {
    const lps = await policy.logprobs(corpus);
    let total = 0, count = 0;
    for (const lp of lps) for (let j = 1; j < lp.length; ++j) (total -= lp[j]!), ++count;
    return total / count;
  };
  const curve = [await nll()];
  for (let step = 0; step < 25; ++step) {
    const old = await policy.logprobs(corpus);
    const result = await policy.trainStep({ sequences: corpus.map((tokens, i) => ({ tokens, weights: weightsOf(tokens), oldLogprobs: old[i]!, advantage: 1 })) });
    t.ok(Number.isFinite(result.loss) && result.gradNorm > 0, `step ${step}: loss ${result.loss.toFixed(4)}`);
    curve.push(await nll());
  }
  t.comment(`NLL: ${curve.map((v) => v.toFixed(3)).join(' ')}`);
  const falls = curve.slice(1).filter((v, i) => v < curve[i]!).length;
  t.ok(falls >= curve.length - 2, `the loss falls at (nearly) every step: ${falls} of ${curve.length - 1}`);
  t.ok(curve.at(-1)! < 0.5 * curve[0]!, `NLL ${curve[0]!.toFixed(3)} → ${curve.at(-1)!.toFixed(3)}`);
  t.equal(policy.step, 25, 'one optimizer step per trainStep');
});

async function fileBytes(dir: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  for (const name of (await fs.readdir(dir)).sort()) out.set(name, await fs.readFile(path.join(dir, name)));
  return out;
}

async function sameFiles(a: string, b: string): Promise<boolean> {
  const [x, y] = [await fileBytes(a), await fileBytes(b)];
  return x.size === y.size && [...x].every(([name, bytes]) => y.get(name)?.equals(bytes) === true);
}

t.test('save → load is bit-exact, optimizer state included, and training resumes exactly', async (t) => {
  const dir = t.testdir();
  const options = { seed: 21, optimizer: { lr: 1e-2, schedule: { kind: 'cosine' as const, warmupSteps: 2, totalSteps: 10 } } };
  const a = await NativePolicy.load(TINY, options);
  t.teardown(() => a.dispose());
  const corpus = [randomTokens(20, 265), randomTokens(11, 265)];
  const batch = () => ({ sequences: batchOf(new Rng(77), corpus, 265) });
  await a.trainStep(batch());
  await a.trainStep(batch());
  await a.save(path.join(dir, 'step2'));
  await a.save(path.join(dir, 'step2-again'));
  t.ok(await sameFiles(path.join(dir, 'step2'), path.join(dir, 'step2-again')), 'saving twice writes the same bytes');
  const resultA = await a.trainStep(batch());
  await a.save(path.join(dir, 'a3'));

  const b = await NativePolicy.load(path.join(dir, 'step2'), options);
  t.teardown(() => b.dispose());
  t.equal(b.step, 2, 'the optimizer step is restored');
  const resultB = await b.trainStep(batch());
  t.equal(resultB.lr, resultA.lr, 'the schedule continues where it was');
  t.equal(resultB.loss, resultA.loss, 'the same loss, bit for bit');
  await b.save(path.join(dir, 'b3'));
  t.ok(await sameFiles(path.join(dir, 'b3'), path.join(dir, 'a3')), 'the resumed run writes the same bytes as the uninterrupted one');

  const files = [...(await fileBytes(path.join(dir, 'step2'))).keys()];
  t.same(files, ['config.json', 'model.safetensors', 'optimizer.safetensors', 'swerl_state.json', 'tokenizer.json', 'tokenizer_config.json'], 'a Hugging Face directory plus swerl state');
  t.notOk((await fs.readdir(dir)).some((n) => n.includes('.tmp-') || n.includes('.old-')), 'no temporary directories left');
});

t.test('bf16 and sharded saves: HF layout, master weights kept in fp32', async (t) => {
  const dir = t.testdir();
  const a = await NativePolicy.load(TINY, { seed: 4, optimizer: { lr: 1e-2 } });
  t.teardown(() => a.dispose());
  await a.trainStep({ sequences: batchOf(rng, [randomTokens(12, 265)], 265) });
  await a.save(path.join(dir, 'fp32'), { dtype: 'float32' });
  await a.save(path.join(dir, 'bf16'), { dtype: 'bfloat16', maxShardBytes: 20000 });
  const shards = (await fs.readdir(path.join(dir, 'bf16'))).filter((n) => /^model-\d{5}-of-\d{5}\.safetensors$/.test(n));
  t.ok(shards.length >= 3, `sharded into ${shards.length} files with model.safetensors.index.json`);
  t.ok(existsSync(path.join(dir, 'bf16', 'model.safetensors.index.json')));
  const entries = await readCheckpointTensors(path.join(dir, 'bf16'));
  t.ok([...entries.values()].every((e) => e.dtype === 'BF16'), 'model tensors are BF16');
  const config = JSON.parse(await fs.readFile(path.join(dir, 'bf16', 'config.json'), 'utf8'));
  t.equal(config.torch_dtype, 'bfloat16');
  t.same(config.architectures, ['Qwen3ForCausalLM']);
  const optimizer = await readSafetensorsHeader(path.join(dir, 'bf16', 'optimizer.safetensors'));
  t.ok(optimizer.entries.some((e) => e.name === 'master.model.embed_tokens.weight' && e.dtype === 'F32'), 'fp32 master weights are saved');

  const fromBf16 = await NativePolicy.load(path.join(dir, 'bf16'));
  t.teardown(() => fromBf16.dispose());
  await fromBf16.save(path.join(dir, 'roundtrip'), { dtype: 'float32' });
  const original = await fs.readFile(path.join(dir, 'fp32', 'model.safetensors'));
  t.ok(original.equals(await fs.readFile(path.join(dir, 'roundtrip', 'model.safetensors'))), 'bf16 files + master weights restore the fp32 weights exactly');

  const weightsOnly = await NativePolicy.load(path.join(dir, 'bf16'), { loadOptimizerState: false });
  t.teardown(() => weightsOnly.dispose());
  t.equal(weightsOnly.step, 0, 'loadOptimizerState: false starts a fresh optimizer');
});

t.test('a Hugging Face directory with tokenizer.json: its tokenizer is used and saved', async (t) => {
  const root = t.testdir();
  const ckpt = await writeTinyCheckpoint(path.join(root, 'hf'), rng, { dtype: 'BF16', maxShardBytes: 30000 });
  const policy = await NativePolicy.load(ckpt.dir);
  t.teardown(() => policy.dispose());
  t.equal(policy.tokenizer.vocabSize, ckpt.reference.vocabSize - 7, 'the tiny tokenizer is loaded');
  const ids = policy.tokenizer.encode('hello world');
  t.ok(ids.length > 0 && ids.length < 11, 'it merges (not bytes)');
  await policy.save(path.join(root, 'saved'));
  const again = await NativePolicy.load(path.join(root, 'saved'));
  t.teardown(() => again.dispose());
  t.same(again.tokenizer.encode('hello world'), ids, 'the saved tokenizer encodes the same');
  const seqs = [randomTokens(10, ckpt.reference.vocabSize)];
  t.same(await again.logprobs(seqs), await policy.logprobs(seqs), 'the saved model computes the same');
  const config = JSON.parse(await fs.readFile(path.join(root, 'saved', 'config.json'), 'utf8'));
  t.equal(config.torch_dtype, 'bfloat16', 'saved in the dtype it was loaded with');
});

t.test('bad configs, checkpoints and options give clear errors', async (t) => {
  const root = t.testdir();
  const bad = async (fn: () => Promise<unknown>, code: string, pattern: RegExp, label: string) => {
    try {
      await fn();
      t.fail(`${label}: no error`);
    } catch (error) {
      const ok = error instanceof SwerlError && error.code === code && pattern.test(error.message);
      t.ok(ok, `${label}: ${(error as Error).message.split('\n')[0]}`);
    }
  };
  await bad(() => NativePolicy.load({ ...TINY, model_type: 'gpt2' as never }), 'ERR_SWERL_INVALID_ARG', /config\.model_type.*qwen3/, 'unknown model_type');
  await bad(() => NativePolicy.load({ ...TINY, hidden_size: 0 }), 'ERR_SWERL_INVALID_ARG', /config\.hidden_size/, 'zero hidden_size');
  await bad(() => NativePolicy.load({ ...TINY, rope_scaling: { rope_type: 'dynamic', factor: 4 } }), 'ERR_SWERL_INVALID_ARG', /config\.rope_scaling\.rope_type = "dynamic" is not supported.*use "yarn"/, 'an unsupported rope scaling');
  await bad(() => NativePolicy.load({ ...TINY, max_position_embeddings: 40960, rope_scaling: { rope_type: 'yarn', factor: 4, original_max_position_embeddings: 32768 } }), 'ERR_SWERL_INVALID_ARG', /config\.rope_scaling has factor 4 x original_max_position_embeddings 32768 = 131072, but max_position_embeddings is 40960; set max_position_embeddings to 131072/, 'YaRN whose fields disagree');
  await bad(() => NativePolicy.load({ ...TINY, rope_scaling: { rope_type: 'yarn', factor: 0.5 } }), 'ERR_SWERL_INVALID_ARG', /config\.rope_scaling\.factor must be a finite number >= 1/, 'a factor below 1');
  await bad(() => NativePolicy.load({ ...TINY, rope_scaling: { rope_type: 'llama3', factor: 8, original_max_position_embeddings: 8192, low_freq_factor: 4, high_freq_factor: 1 } }), 'ERR_SWERL_INVALID_ARG', /high_freq_factor \(1\) must be > low_freq_factor \(4\)/, 'llama3 bands the wrong way round');
  await bad(() => NativePolicy.load({ ...TINY, rope_scaling: { rope_type: 'yarn', factor: 4, fast: 1 } }), 'ERR_SWERL_INVALID_ARG', /config\.rope_scaling\.fast is not a field of yarn rope scaling/, 'a misspelt field');
  await bad(() => NativePolicy.load({ ...TINY, num_key_value_heads: 3 }), 'ERR_SWERL_INVALID_ARG', /num_key_value_heads/, 'heads not divisible');
  await bad(() => NativePolicy.load({ ...TINY, vocab_size: 100 }), 'ERR_SWERL_INVALID_ARG', /config\.vocab_size.*tokenizer/, 'vocabulary smaller than the tokenizer');
  await bad(() => NativePolicy.load(TINY, { lr: 1 } as never), 'ERR_SWERL_INVALID_ARG', /options\.lr is not a known option/, 'unknown option');
  await bad(() => NativePolicy.load(TINY, { decodeGraphs: 'yes' } as never), 'ERR_SWERL_INVALID_ARG', /options\.decodeGraphs must be of type boolean/, 'decodeGraphs not a boolean');
  await bad(() => NativePolicy.load(TINY, { optimizer: { schedule: { kind: 'cosine' } } } as never), 'ERR_SWERL_INVALID_ARG', /totalSteps/, 'cosine without totalSteps');
  if (!native().buildInfo().cuda) await bad(() => NativePolicy.load(TINY, { device: 'cuda' }), 'ERR_SWERL_INVALID_ARG', /options\.device.*without CUDA/, 'CUDA on a CPU build');
  await bad(() => NativePolicy.load(path.join(root, 'nowhere')), 'ERR_SWERL_CHECKPOINT', /no config\.json/, 'not a model directory');

  const ckpt = await writeTinyCheckpoint(path.join(root, 'ckpt'), rng);
  const config = JSON.parse(await fs.readFile(path.join(ckpt.dir, 'config.json'), 'utf8'));
  await fs.writeFile(path.join(ckpt.dir, 'config.json'), JSON.stringify({ ...config, num_hidden_layers: 3 }));
  await bad(() => NativePolicy.load(ckpt.dir), 'ERR_SWERL_CHECKPOINT', /lacks .*model\.layers\.2\./, 'a missing tensor is named');
  await fs.writeFile(path.join(ckpt.dir, 'config.json'), JSON.stringify({ ...config, intermediate_size: 48 }));
  await bad(() => NativePolicy.load(ckpt.dir), 'ERR_SWERL_CHECKPOINT', /model\.layers\.0\.mlp\.gate_proj\.weight .*shape \[64, 32\].*\[48, 32\]/, 'a wrong shape is named');
  await fs.writeFile(path.join(ckpt.dir, 'config.json'), JSON.stringify({ ...config, num_hidden_layers: 1 }));
  await bad(() => NativePolicy.load(ckpt.dir), 'ERR_SWERL_CHECKPOINT', /has tensor model\.layers\.1\./, 'an unexpected tensor is named');

  const policy = await NativePolicy.load(TINY);
  await bad(() => policy.generate({ prompt: [1, 300], maxTokens: 2 }), 'ERR_SWERL_INVALID_ARG', /request\.prompt\[1\]/, 'a prompt token outside the vocabulary');
  await bad(() => policy.generate({ prompt: [], maxTokens: 2 }), 'ERR_SWERL_INVALID_ARG', /request\.prompt is empty/, 'an empty prompt');
  await bad(() => policy.generate({ prompt: [1], maxTokens: 2, topP: 0 }), 'ERR_SWERL_INVALID_ARG', /request\.topP/, 'top-p 0');
  const seq = { tokens: [1, 2, 3], weights: [0, 1, 1], oldLogprobs: [0, -1, -1], advantage: 1 };
  await bad(() => policy.trainStep({ sequences: [{ ...seq, weights: [1, 1, 1] }] }), 'ERR_SWERL_INVALID_ARG', /weights\[0\] must be 0/, 'weight on the first token');
  await bad(() => policy.trainStep({ sequences: [{ ...seq, oldLogprobs: [0, 1] }] }), 'ERR_SWERL_INVALID_ARG', /sequences\[0\]\.oldLogprobs/, 'a short per-token array');
  await bad(() => policy.trainStep({ sequences: [{ ...seq, advantage: undefined }] }), 'ERR_SWERL_INVALID_ARG', /sequences\[0\]\.advantage/, 'no advantage');
  await bad(() => policy.trainStep({ sequences: [seq], loss: { clipLow: 2 } }), 'ERR_SWERL_INVALID_ARG', /batch\.loss\.clipLow/, 'a bad loss option');
  await bad(() => policy.trainStep({ sequences: [seq], loss: { kl: { coef: 0.1 } } }), 'ERR_SWERL_INVALID_ARG', /refLogprobs/, 'KL without reference logprobs');
  policy.dispose();
  policy.dispose();
  await bad(async () => policy.generate({ prompt: [1], maxTokens: 1 }), 'ERR_SWERL_DISPOSED', /disposed/, 'use after dispose');
});

t.test('weight updates wait for running generations', async (t) => {
  const policy = await NativePolicy.load(TINY, { seed: 8, optimizer: { lr: 0.05 } });
  t.teardown(() => policy.dispose());
  const prompt = randomTokens(4, 265);
  const generation = policy.generate({ prompt, maxTokens: 60, stopTokens: [] });
  await new Promise((r) => setTimeout(r, 5));
  const training = policy.trainStep({ sequences: batchOf(rng, [randomTokens(16, 265)], 265) });
  const g = await generation;
  await training;
  const [lp] = await policy.logprobs([[...prompt, ...g.tokens]]);
  t.ok(maxAbsDiff(g.logprobs, lp!.subarray(prompt.length)) > 1e-3, 'the update came after the generation (its logprobs are the old weights)');
});

t.test('bf16 compute keeps fp32 master weights that take updates too small for bf16', async (t) => {
  const dir = t.testdir();
  const policy = await NativePolicy.load(TINY, { seed: 12, computeDtype: 'bfloat16', optimizer: { lr: 1e-5, weightDecay: 0 } });
  t.teardown(() => policy.dispose());
  const corpus = [randomTokens(24, 265), randomTokens(16, 265)];
  await policy.save(path.join(dir, 'before'), { dtype: 'float32', optimizer: false });
  for (let step = 0; step < 3; ++step) {
    const old = await policy.logprobs(corpus);
    await policy.trainStep({ sequences: batchOf(rng, corpus, 265, old) });
  }
  await policy.save(path.join(dir, 'after'), { dtype: 'float32', optimizer: false });
  const read = async (name: string) => {
    const bytes = await fs.readFile(path.join(dir, name, 'model.safetensors'));
    const headerLength = Number(bytes.readBigUInt64LE(0));
    const data = bytes.subarray(8 + headerLength);
    return new Float32Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
  };
  const [before, after] = [await read('before'), await read('after')];
  // A bf16 weight moves only by at least half its unit in the last place (8 significant bits).
  const halfUlp = (x: number) => (x === 0 ? 0 : 2 ** (Math.floor(Math.log2(Math.abs(x))) - 8));
  let moved = 0, belowBf16 = 0;
  for (let i = 0; i < after.length; ++i) {
    const change = Math.abs(after[i]! - before[i]!);
    if (change > 0) ++moved;
    if (change > 0 && change < halfUlp(before[i]!)) ++belowBf16;
  }
  t.ok(moved > after.length / 2, `most master weights moved (${moved} of ${after.length})`);
  t.ok(belowBf16 > moved / 4, `${belowBf16} of them by less than a bf16 weight could move`);
  const g = await policy.generate({ prompt: corpus[0]!, maxTokens: 5, stopTokens: [] });
  const [lp] = await policy.logprobs([[...corpus[0]!, ...g.tokens]]);
  t.ok(maxAbsDiff(g.logprobs, lp!.subarray(corpus[0]!.length)) < 0.05, 'bf16 sampling and scoring agree to bf16 precision');
});

const cuda = native().buildInfo().cuda;
t.test('on CUDA: the same model samples, scores and trains like on the CPU', { skip: cuda ? false : 'the addon was built without CUDA' }, async (t) => {
  const cpu = await NativePolicy.load(TINY, { seed: 31 });
  const gpu = await NativePolicy.load(TINY, { seed: 31, device: 'cuda', computeDtype: 'float32' });
  t.teardown(() => (cpu.dispose(), gpu.dispose()));
  const prompts = [randomTokens(7, 265), randomTokens(3, 265)];
  const generations = await Promise.all(prompts.map((prompt) => gpu.generate({ prompt, maxTokens: 20, stopTokens: [] })));
  // Decode steps replayed as CUDA graphs (the default) sample what the eager path samples.
  const eager = await NativePolicy.load(TINY, { seed: 31, device: 'cuda', computeDtype: 'float32', decodeGraphs: false });
  const eagerGenerations = await Promise.all(prompts.map((prompt) => eager.generate({ prompt, maxTokens: 20, stopTokens: [] })));
  eager.dispose();
  t.same(eagerGenerations.map((g) => Array.from(g.tokens)), generations.map((g) => Array.from(g.tokens)), 'graphs and the eager decode sample the same tokens');
  t.ok(Math.max(...generations.map((g, i) => maxAbsDiff(g.logprobs, eagerGenerations[i]!.logprobs))) < 1e-4, 'and the same logprobs within 1e-4');
  const sequences = prompts.map((p, i) => [...p, ...generations[i]!.tokens]);
  const [onCpu, onGpu] = [await cpu.logprobs(sequences), await gpu.logprobs(sequences)];
  for (const [i, g] of generations.entries()) {
    t.ok(maxAbsDiff(g.logprobs, onGpu[i]!.subarray(prompts[i]!.length)) < 1e-4, `sampler vs forward on the GPU, request ${i}`);
    t.ok(maxAbsDiff(onCpu[i]!, onGpu[i]!) < 1e-3, `GPU vs CPU logprobs, sequence ${i}`);
  }
  const batch = { sequences: batchOf(new Rng(5), sequences, 265, onCpu) };
  const [a, b] = [await cpu.gradients(batch), await gpu.gradients(batch)];
  let worst = 0;
  for (const [name, g] of Object.entries(a.gradients)) worst = Math.max(worst, 1 - cosine(g, b.gradients[name]!));
  t.ok(worst < 1e-4, `GPU gradients match the CPU's (worst 1 - cosine ${worst.toExponential(2)})`);
});
