/**
 * Packed micro-batches (several sequences end to end in one row, block-diagonal causal
 * attention, positions restarting per sequence) against the padded path (a row each, padded
 * to the longest) and against the float64 reference. SWERL_ATTENTION_BLOCK=8 sends every
 * sequence over 32 tokens through the blockwise attention, so packed rows mix both paths.
 * The two paths multiply matrices of different shapes, so fp32 rounding differs: measured
 * over 12 seeds, logprobs within 1e-5 and gradients within 1.1e-5 relative L2 of each other;
 * a sequence that sees its neighbour moves them by 1 or more. (Positions that failed to
 * restart would go unseen here: rotary attention depends on relative positions only.)
 */
import path from 'node:path';

import t from 'tap';

import { NativePolicy, type TrainSequence } from '../../../lib/model/native-policy.js';
import { qwen3LogitsF64 } from '../../reference/qwen3.js';
import { Rng, testSeed } from '../../reference/random.js';
import { writeTinyCheckpoint } from '../../support/tiny-checkpoint.js';

// Read once, at the first forward: before any policy exists.
process.env.SWERL_ATTENTION_BLOCK = '8';

const seed = testSeed();
t.comment(`seed ${seed} (replay with SWERL_TEST_SEED=${seed})`);
const rng = new Rng(seed);

const LENGTHS = [70, 3, 41, 12, 2, 33, 1, 25];

function relativeL2(a: Float32Array, b: Float32Array): number {
  let diff = 0, norm = 0;
  for (let i = 0; i < a.length; ++i) {
    diff += (a[i]! - b[i]!) ** 2;
    norm += b[i]! ** 2;
  }
  return norm === 0 ? (diff === 0 ? 0 : Infinity) : Math.sqrt(diff / norm);
}

function batchOf(sequences: number[][], current: Float32Array[]): TrainSequence[] {
  return sequences.map((tokens, i) => ({
    tokens,
    weights: tokens.map((_, j) => (j === 0 || rng.uniform() < 0.2 ? 0 : rng.uniform() / tokens.length)),
    oldLogprobs: Array.from(current[i]!, (v) => v + 0.3 * rng.normal()),
    advantage: rng.normal(),
  }));
}

t.test('packed logprobs are each sequence alone: the float64 reference, and the padded path', async (t) => {
  const ckpt = await writeTinyCheckpoint(path.join(t.testdir(), 'model'), rng, { modelType: 'qwen3' });
  const V = ckpt.reference.vocabSize;
  const sequences = LENGTHS.map((n) => Array.from({ length: n }, () => rng.int(V)));
  const packed = await NativePolicy.load(ckpt.dir, { microBatchTokens: 96 });
  const padded = await NativePolicy.load(ckpt.dir, { microBatchTokens: 96, packSequences: false });
  t.teardown(() => (packed.dispose(), padded.dispose()));
  t.equal(packed.options.packSequences, true, 'packing is the default');
  const [a, b] = [await packed.logprobs(sequences), await padded.logprobs(sequences)];
  let worstReference = 0, worstPadded = 0;
  for (const [i, ids] of sequences.entries()) {
    const logits = qwen3LogitsF64(ckpt.reference, ckpt.weights, ids);
    for (let j = 1; j < ids.length; ++j) {
      const row = logits.subarray((j - 1) * V, j * V);
      const max = Math.max(...row);
      const lse = max + Math.log(row.reduce((s, x) => s + Math.exp(x - max), 0));
      worstReference = Math.max(worstReference, Math.abs(a[i]![j]! - (row[ids[j]!]! - lse)));
      worstPadded = Math.max(worstPadded, Math.abs(a[i]![j]! - b[i]![j]!));
    }
    t.equal(a[i]![0], 0, `sequence ${i}: the first token has no logprob`);
  }
  t.ok(worstReference < 2e-4, `packed within 2e-4 of float64 (max |Δ| ${worstReference.toExponential(2)})`);
  t.ok(worstPadded < 5e-5, `packed within 5e-5 of padded (max |Δ| ${worstPadded.toExponential(2)})`);
});

t.test('packed gradients equal the padded path\'s, with and without activation checkpointing', async (t) => {
  const ckpt = await writeTinyCheckpoint(path.join(t.testdir(), 'model'), rng, { modelType: 'qwen2' });
  const V = ckpt.reference.vocabSize;
  const sequences = LENGTHS.map((n) => Array.from({ length: n }, () => rng.int(V)));
  for (const activationCheckpointing of [false, true]) {
    const packed = await NativePolicy.load(ckpt.dir, { microBatchTokens: 96, activationCheckpointing });
    const padded = await NativePolicy.load(ckpt.dir, { microBatchTokens: 96, activationCheckpointing, packSequences: false });
    const batch = { sequences: batchOf(sequences, await padded.logprobs(sequences)), loss: { entropyCoef: 0.01 } };
    const [p, q] = [await packed.gradients(batch), await padded.gradients(batch)];
    packed.dispose();
    padded.dispose();
    const label = activationCheckpointing ? 'checkpointed' : 'plain';
    t.ok(Math.abs(p.loss - q.loss) <= 1e-5 * Math.max(1, Math.abs(q.loss)), `${label}: loss ${p.loss} vs ${q.loss}`);
    let worst = 0, nonzero = 0;
    for (const [name, g] of Object.entries(q.gradients)) {
      worst = Math.max(worst, relativeL2(p.gradients[name]!, g));
      if (g.some((v) => v !== 0)) ++nonzero;
    }
    t.equal(nonzero, Object.keys(q.gradients).length, `${label}: every parameter has a gradient`);
    t.ok(worst < 5e-5, `${label}: every parameter's gradient within 5e-5 relative L2 (worst ${worst.toExponential(2)})`);
  }
});

t.test('packed micro-batches fill the token budget: fewer forwards than padded rows', async (t) => {
  const ckpt = await writeTinyCheckpoint(path.join(t.testdir(), 'model'), rng, { modelType: 'llama' });
  const V = ckpt.reference.vocabSize;
  // Budget 40: packed, first fit longest first: {30, 10}, {20, 5}; padded (rows x longest):
  // {30}, {20, 10}, {5}.
  const sequences = [10, 30, 5, 20].map((n) => Array.from({ length: n }, () => rng.int(V)));
  const counts: number[] = [];
  for (const packSequences of [true, false]) {
    const policy = await NativePolicy.load(ckpt.dir, { microBatchTokens: 40, packSequences });
    // Every token after the first weighted: a micro-batch with nothing weighted is skipped
    // (no forward), and batchOf's random zeros left the 5-token one so once in ~600 draws.
    const batch = batchOf(sequences, await policy.logprobs(sequences)).map((s) => ({ ...s, weights: Array.from(s.tokens, (_, j) => (j === 0 ? 0 : 1 / s.tokens.length)) }));
    const result = await policy.trainStep({ sequences: batch });
    policy.dispose();
    counts.push(result.microBatches);
  }
  t.same(counts, [2, 3], 'packed: 2 micro-batches; padded: 3');
});
