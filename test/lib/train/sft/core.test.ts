/**
 * The SFT core on examples in memory: the order of examples (epochs of seeded permutations),
 * the token weights (a token mean over the batch), and training: a tiny model from scratch
 * drives the NLL of a small corpus down, and the NLL a step reports is the one recomputed
 * independently from policy.logprobs of the trained tokens.
 */
import t from 'tap';

import { ByteTokenizer } from '../../../../lib/model/byte-tokenizer.js';
import { presetConfig } from '../../../../lib/model/model-config.js';
import { NativePolicy } from '../../../../lib/model/native-policy.js';
import { chatExample } from '../../../../lib/train/sft/chat.js';
import { heldOutNll, sftLoop, sftSequences, sftStep, stepExamples } from '../../../../lib/train/sft/core.js';
import type { SftExample } from '../../../../lib/train/sft/example.js';
import { smallCorpus } from './fixtures.js';

const tokenizer = new ByteTokenizer();

/** -sum(mask * logprob) / sum(mask), from a forward pass of the policy as it is. */
async function recomputedNll(policy: NativePolicy, batch: readonly SftExample[]): Promise<number> {
  const logprobs = await policy.logprobs(batch.map((e) => e.tokens));
  let sum = 0;
  let n = 0;
  batch.forEach((e, k) => e.mask.forEach((m, i) => {
    if (m) {
      sum -= logprobs[k]![i]!;
      n++;
    }
  }));
  return sum / n;
}

t.test('each epoch visits every example once, in an order drawn from the seed and the epoch', async (t) => {
  const items = Array.from({ length: 12 }, (_, i) => i);
  const epoch = (seed: number, e: number) => [1, 2, 3].flatMap((k) => stepExamples(items, 4, seed, e * 3 + k));
  t.same([...epoch(7, 0)].sort((a, b) => a - b), items, 'epoch 0 is a permutation');
  t.same([...epoch(7, 1)].sort((a, b) => a - b), items, 'epoch 1 too');
  t.notSame(epoch(7, 0), epoch(7, 1), 'a fresh order each epoch');
  t.same(epoch(7, 1), epoch(7, 1), 'a pure function of seed and step');
  t.notSame(epoch(7, 0), epoch(8, 0), 'another seed, another order');
  t.same(stepExamples(items, 5, 7, 3), [...epoch(7, 0), ...epoch(7, 1)].slice(10, 15), 'steps straddle epochs in the same stream');
});

t.test('weights: each trained token 1 / (trained tokens of the batch), 0 elsewhere', async (t) => {
  const batch = smallCorpus().slice(0, 3).map((c, i) => chatExample(c, { tokenizer, enableThinking: false }, `c:${i + 1}`, 'c'));
  const sequences = sftSequences(batch);
  const total = batch.reduce((s, e) => s + e.mask.reduce((a, b) => a + b, 0), 0);
  const sum = sequences.reduce((s, q) => s + Array.from(q.weights).reduce((a, b) => a + b, 0), 0);
  t.ok(Math.abs(sum - 1) < 1e-5, `weights sum to 1 (${sum})`);
  sequences.forEach((q, k) => Array.from(q.weights).forEach((w, i) => {
    if (w !== (batch[k]!.mask[i] ? Math.fround(1 / total) : 0)) t.fail(`sequence ${k} token ${i}: weight ${w}`);
  }));
  t.ok(sequences.every((q) => q.advantage === 1 && q.weights[0] === 0));
});

t.test('SFT on a small corpus drives the NLL down; the reported NLL is the recomputed one', async (t) => {
  const examples = smallCorpus().map((c, i) => chatExample(c, { tokenizer, enableThinking: false }, `c:${i + 1}`, 'c'));
  const policy = await NativePolicy.load(presetConfig('qwen3-tiny', tokenizer.vocabSize), { seed: 5, threads: 1, maxGradNorm: 1, optimizer: { lr: 0.01, weightDecay: 0 } });
  t.teardown(() => policy.dispose());
  const before = await recomputedNll(policy, examples);
  t.ok(Math.abs(before - Math.log(tokenizer.vocabSize)) < 0.3, `from scratch the NLL is about ln V (${before.toFixed(3)})`);

  const started = performance.now();
  const rows: number[] = [];
  const result = await sftLoop(policy, examples, { sequencesPerStep: 4, seed: 1, steps: 40, onStep: (row) => void rows.push(row.loss.nll) });
  t.equal(result.step, 40);
  t.equal(result.stopped, false);
  const after = await recomputedNll(policy, examples);
  t.ok(after < 0.5 * before, `the corpus NLL fell from ${before.toFixed(3)} to ${after.toFixed(3)} in 40 steps (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  t.ok(rows.at(-1)! < rows[0]! - 1, `the step NLL fell from ${rows[0]!.toFixed(3)} to ${rows.at(-1)!.toFixed(3)}`);

  // The next step's loss is computed before its update: the NLL of its batch under the weights now.
  const batch = stepExamples(examples, 4, 1, 41);
  const expected = await recomputedNll(policy, batch);
  const step = await sftStep(policy, batch);
  t.ok(Math.abs(step.nll - expected) < 1e-4 * Math.max(1, expected), `step NLL ${step.nll} = recomputed ${expected}`);
  t.equal(step.trainedTokens, batch.reduce((s, e) => s + e.mask.reduce((a, b) => a + b, 0), 0), 'every trained token reached the loss');
  t.ok(step.gradNorm > 0 && Number.isFinite(step.gradNorm));
  const held = await heldOutNll(policy, examples.slice(0, 5), 2);
  t.ok(Math.abs(held.nll - (await recomputedNll(policy, examples.slice(0, 5)))) < 1e-6, 'held-out NLL in chunks is the token mean over all of them');
});

t.test('the loop stops at an aborted signal and goes on from startStep', async (t) => {
  const examples = smallCorpus().slice(0, 4).map((c, i) => chatExample(c, { tokenizer, enableThinking: false }, `c:${i + 1}`, 'c'));
  const policy = await NativePolicy.load(presetConfig('qwen3-tiny', tokenizer.vocabSize), { seed: 5, threads: 1 });
  t.teardown(() => policy.dispose());
  const stop = new AbortController();
  const first = await sftLoop(policy, examples, { sequencesPerStep: 2, seed: 1, steps: 5, signal: stop.signal, onStep: (row) => void (row.step === 2 && stop.abort()) });
  t.match(first, { step: 2, stopped: true, last: { step: 2 } });
  const steps: number[] = [];
  const rest = await sftLoop(policy, examples, { sequencesPerStep: 2, seed: 1, steps: 5, startStep: 2, heldOut: examples.slice(0, 1), heldOutEvery: 2, onStep: (row) => void steps.push(row.heldOut ? -row.step : row.step) });
  t.match(rest, { step: 5, stopped: false });
  t.same(steps, [3, -4, -5], 'steps 3..5; held-out NLL at step 4 (every 2) and at the last');
});
