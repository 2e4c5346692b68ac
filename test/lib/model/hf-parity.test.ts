// NativePolicy against Hugging Face transformers itself: tiny random Qwen3, Qwen3-with-YaRN,
// Qwen2 and Llama (llama3 rotary) checkpoints written by transformers' save_pretrained
// (test/reference/hf_models.py), loaded from their folders and scored on every device the
// addon has, against transformers' float64 forward. Runs where python3 has torch and
// transformers (the GPU machine: scripts/gpu-check.sh); skipped elsewhere, since neither can
// be installed on CI's Debian (test/reference/qwen3.ts is the float64 reference there).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import { native, packageRoot } from '../../../lib/native.js';
import { NativePolicy } from '../../../lib/model/native-policy.js';

const python = process.env.SWERL_PYTHON ?? 'python3';
const probe = spawnSync(python, ['-c', 'import torch, transformers'], { encoding: 'utf8' });
const skip = probe.status === 0 ? false : `${python} has no torch and transformers`;

interface Reference {
  transformers: string;
  torch: string;
  models: { name: string; dir: string; sequences: number[][]; float64: number[][]; cuda_float32?: number[][]; cuda_bfloat16?: number[][] }[];
}

/**
 * Largest |a - b| and the mean, against the reference's rows (positions 1.. of each sequence);
 * `offset` is where those positions start in `ours` (1 for swerl's rows, which hold position 0).
 */
function gap(ours: ArrayLike<number>[], theirs: number[][], offset = 1): { max: number; mean: number } {
  let max = 0, sum = 0, n = 0;
  for (const [i, row] of theirs.entries())
    for (const [j, value] of row.entries()) {
      const d = Math.abs(ours[i]![j + offset]! - value);
      if (!(d <= max)) max = d; // NaN sticks
      sum += d;
      ++n;
    }
  return { max, mean: sum / n };
}

t.test('NativePolicy scores transformers\' own checkpoints as transformers does', { skip }, async (t) => {
  const dir = t.testdir({});
  const made = spawnSync(python, [path.join(packageRoot(), 'test', 'reference', 'hf_models.py'), dir], { encoding: 'utf8', timeout: 600_000 });
  t.equal(made.status, 0, `hf_models.py ran (stderr: ${made.stderr.slice(-2000)})`);
  const reference = JSON.parse(readFileSync(path.join(dir, 'reference.json'), 'utf8')) as Reference;
  t.comment(`transformers ${reference.transformers}, torch ${reference.torch}`);
  const devices = native().buildInfo().cuda ? (['cpu', 'cuda'] as const) : (['cpu'] as const);
  for (const model of reference.models) {
    for (const device of devices) {
      const policy = await NativePolicy.load(model.dir, { device, computeDtype: 'float32', seed: 3 });
      const fp32 = gap(await policy.logprobs(model.sequences), model.float64);
      t.ok(fp32.max <= 1e-4, `${model.name} on ${device}, float32: max |Δ logprob| ${fp32.max.toExponential(2)} <= 1e-4 (mean ${fp32.mean.toExponential(2)})`);
      // The sampler's logprobs are the ones training compares against: they must be the full forward's.
      const prompt = model.sequences[0]!.slice(0, 24);
      const g = await policy.generate({ prompt, maxTokens: 16, stopTokens: [], temperature: 1, seed: 9 });
      const [full] = await policy.logprobs([[...prompt, ...g.tokens]]);
      let worst = 0;
      for (const [i, lp] of g.logprobs.entries()) worst = Math.max(worst, Math.abs(lp - full![prompt.length + i]!));
      t.ok(worst <= 1e-4, `${model.name} on ${device}: sampler logprobs = full forward's (max |Δ| ${worst.toExponential(2)})`);
      policy.dispose();
      if (device !== 'cuda') continue;
      const bf16Policy = await NativePolicy.load(model.dir, { device, computeDtype: 'bfloat16', seed: 3 });
      const bf16 = gap(await bf16Policy.logprobs(model.sequences), model.float64);
      bf16Policy.dispose();
      const theirs = model.cuda_bfloat16 ? gap(model.cuda_bfloat16, model.float64, 0) : undefined;
      // bf16 keeps 8 significant bits: the gap is reported next to transformers' own bf16 gap,
      // and bounded only loosely (a wrong weight or a broken kernel is far outside it).
      t.ok(bf16.max < 0.25, `${model.name} on cuda, bfloat16: max |Δ| ${bf16.max.toExponential(2)}, mean ${bf16.mean.toExponential(2)}` +
        (theirs ? ` (transformers' own bf16: max ${theirs.max.toExponential(2)}, mean ${theirs.mean.toExponential(2)})` : ''));
    }
  }
});
