/**
 * The model through the blockwise causal attention (libtorch 1.x; SWERL_ATTENTION_BLOCK=8 puts
 * 40-token sequences over five blocks: more than four take the blockwise path) against the float64 reference, and its train step
 * against the dense path's (one block): the same loss and gradient norm, with and without
 * activation checkpointing. The kernel check compares the attention alone with its gradients.
 */
import path from 'node:path';

import t from 'tap';

import { qwen3LogitsF64 } from '../reference/qwen3.js';
import { Rng, testSeed } from '../reference/random.js';
import { spawnTs } from '../support/child-process.js';
import { writeTinyCheckpoint } from '../support/tiny-checkpoint.js';

const seed = testSeed();
t.comment(`seed ${seed} (replay with SWERL_TEST_SEED=${seed})`);
const rng = new Rng(seed);

interface ChildResult { logprobs: number[][]; loss: number; gradNorm: number; checkpointedGradNorm: number }

async function run(dir: string, sequences: number[][], block: number): Promise<ChildResult> {
  const child = spawnTs(path.join(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), '../support/attention-block-child.ts'), {
    SWERL_ATTENTION_BLOCK: String(block),
    SWERL_CHILD_INPUT: JSON.stringify({ dir, sequences }),
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`child exited ${code}: ${err}`);
  return JSON.parse(out.trim().split('\n').at(-1)!) as ChildResult;
}

t.test('blockwise causal attention in the model: logprobs vs float64, the train step vs the dense path', async (t) => {
  const ckpt = await writeTinyCheckpoint(path.join(t.testdir(), 'model'), rng, { modelType: 'qwen3' });
  const V = ckpt.reference.vocabSize;
  const sequences = [40, 23, 9].map((n) => Array.from({ length: n }, () => rng.int(V)));
  const [blocked, dense] = await Promise.all([run(ckpt.dir, sequences, 8), run(ckpt.dir, sequences, 1_000_000)]);
  let worst = 0;
  for (const [i, ids] of sequences.entries()) {
    const logits = qwen3LogitsF64(ckpt.reference, ckpt.weights, ids);
    for (let j = 1; j < ids.length; j++) {
      const row = logits.subarray((j - 1) * V, j * V);
      const max = Math.max(...row);
      const lse = max + Math.log(row.reduce((s, x) => s + Math.exp(x - max), 0));
      worst = Math.max(worst, Math.abs(blocked.logprobs[i]![j]! - (row[ids[j]!]! - lse)));
    }
  }
  t.ok(worst < 2e-4, `blockwise logprobs within 2e-4 of float64 (max |Δ| ${worst.toExponential(2)})`);
  const rel = (a: number, b: number) => Math.abs(a - b) / Math.max(1e-12, Math.abs(b));
  t.ok(rel(blocked.loss, dense.loss) < 1e-5, `loss ${blocked.loss} vs dense ${dense.loss}`);
  t.ok(rel(blocked.gradNorm, dense.gradNorm) < 1e-4, `gradient norm ${blocked.gradNorm} vs dense ${dense.gradNorm}`);
  t.ok(rel(blocked.checkpointedGradNorm, dense.gradNorm) < 1e-4, `with activation checkpointing ${blocked.checkpointedGradNorm}`);
  t.ok(dense.gradNorm > 0, 'a gradient to compare');
});
