/**
 * Chunked prefill: a prompt longer than prefillChunkTokens is prefilled a chunk at a time, each
 * chunk's queries attending to the positions already in the cache (SWERL_ATTENTION_BLOCK=4
 * splits every chunk into blocks of queries too). What it samples is what a policy that
 * prefills the prompt whole samples, with logprobs equal to a full forward's; alone, beside
 * short prompts prefilled together, and after a prefix-cache hit with a long remainder.
 */
import t from 'tap';

import { presetConfig } from '../../../lib/model/model-config.js';
import { NativePolicy } from '../../../lib/model/native-policy.js';
import { Rng, testSeed } from '../../reference/random.js';

// Read once, at the first forward: before any policy exists.
process.env.SWERL_ATTENTION_BLOCK = '4';

const seed = testSeed();
t.comment(`seed ${seed} (replay with SWERL_TEST_SEED=${seed})`);
const rng = new Rng(seed);
const V = 265;
const CONFIG = presetConfig('qwen3-tiny', V);
const tokens = (n: number) => Array.from({ length: n }, () => rng.int(V));

async function gapToFullForward(policy: NativePolicy, prompt: number[], g: { tokens: Int32Array; logprobs: Float32Array }): Promise<number> {
  const [full] = await policy.logprobs([[...prompt, ...g.tokens]]);
  let worst = 0;
  for (let i = 0; i < g.tokens.length; i++) worst = Math.max(worst, Math.abs(g.logprobs[i]! - full![prompt.length + i]!));
  return worst;
}

t.test('long prompts prefilled in chunks sample what whole prefills sample, with exact logprobs', async (t) => {
  const chunked = await NativePolicy.load(CONFIG, { seed: 3, prefillChunkTokens: 16, prefixCacheBytes: 0 });
  const whole = await NativePolicy.load(CONFIG, { seed: 3, prefixCacheBytes: 0 });
  t.teardown(() => (chunked.dispose(), whole.dispose()));
  // 70 tokens: four full chunks and a partial one; 16: exactly one chunk (prefilled with the
  // short ones); 9 and 3: together, right-padded.
  const prompts = [tokens(70), tokens(9), tokens(16), tokens(41), tokens(3)];
  const run = (policy: NativePolicy) =>
    Promise.all(prompts.map((prompt, i) => policy.generate({ prompt, maxTokens: 10, stopTokens: [], seed: 40 + i })));
  const [a, b] = [await run(chunked), await run(whole)];
  let worst = 0;
  for (const [i, prompt] of prompts.entries()) {
    t.same(Array.from(a[i]!.tokens), Array.from(b[i]!.tokens), `prompt ${i} (${prompt.length} tokens): the same tokens`);
    worst = Math.max(worst, await gapToFullForward(chunked, prompt, a[i]!));
  }
  t.ok(worst <= 1e-5, `sampled logprobs vs full forwards: max |Δ| ${worst.toExponential(2)}`);
});

t.test('a prefix-cache hit whose remainder is longer than a chunk prefills it in chunks', async (t) => {
  const policy = await NativePolicy.load(CONFIG, { seed: 4, prefillChunkTokens: 8 });
  const whole = await NativePolicy.load(CONFIG, { seed: 4, prefixCacheBytes: 0 });
  t.teardown(() => (policy.dispose(), whole.dispose()));
  const first = tokens(20);
  const a = await policy.generate({ prompt: first, maxTokens: 5, stopTokens: [], seed: 1 });
  const second = [...first, ...a.tokens, ...tokens(37)];
  const b = await policy.generate({ prompt: second, maxTokens: 10, stopTokens: [], seed: 2 });
  t.equal(policy.prefixCache.hits, 1, 'the second turn hit the cache');
  t.equal(policy.prefixCache.prefilledTokens, first.length + second.length - policy.prefixCache.reusedTokens, 'every position either reused or prefilled once');
  const b2 = await whole.generate({ prompt: second, maxTokens: 10, stopTokens: [], seed: 2 });
  t.same(Array.from(b.tokens), Array.from(b2.tokens), 'the same tokens as a whole prefill without the cache');
  const gap = await gapToFullForward(policy, second, b);
  t.ok(gap <= 1e-5, `logprobs vs a full forward: max |Δ| ${gap.toExponential(2)}`);
});
