/**
 * The generator's prefix cache: a prompt that extends a finished sequence (an agent's next
 * turn) prefills only its new tokens, and what it samples is exactly what a policy without the
 * cache samples, with logprobs equal to a full forward's; concurrent episodes share it; a
 * weight change empties it (a stale key or value never reaches a later turn); the byte budget
 * holds.
 */
import t from 'tap';

import { presetConfig } from '../../../lib/model/model-config.js';
import { NativePolicy } from '../../../lib/model/native-policy.js';
import { Rng, testSeed } from '../../reference/random.js';

const seed = testSeed();
t.comment(`seed ${seed} (replay with SWERL_TEST_SEED=${seed})`);
const rng = new Rng(seed);
const V = 265;
const CONFIG = presetConfig('qwen3-tiny', V);
const tokens = (n: number) => Array.from({ length: n }, () => rng.int(V));

/** The largest |sampled logprob - full forward logprob| over a generation that followed `prompt`. */
async function gapToFullForward(policy: NativePolicy, prompt: number[], g: { tokens: Int32Array; logprobs: Float32Array }, temperature = 1): Promise<number> {
  const [full] = await policy.logprobs([[...prompt, ...g.tokens]], { temperature });
  let worst = 0;
  for (let i = 0; i < g.tokens.length; i++) worst = Math.max(worst, Math.abs(g.logprobs[i]! - full![prompt.length + i]!));
  return worst;
}

/** An episode of `turns` turns: each prompt is the last one, its reply and an observation. */
async function episode(policy: NativePolicy, turns: number, genSeed: number) {
  let prompt = tokens(30 + rng.int(20));
  const replies: { prompt: number[]; tokens: number[]; logprobs: number[]; gap: number }[] = [];
  for (let turn = 0; turn < turns; turn++) {
    const g = await policy.generate({ prompt, maxTokens: 6 + rng.int(6), stopTokens: [], seed: genSeed + turn });
    replies.push({ prompt, tokens: Array.from(g.tokens), logprobs: Array.from(g.logprobs), gap: await gapToFullForward(policy, prompt, g) });
    prompt = [...prompt, ...g.tokens, ...tokens(10 + rng.int(30))];
  }
  return replies;
}

t.test('a next turn reuses the last one: only its new tokens are prefilled, and the samples and logprobs are exact', async (t) => {
  const cached = await NativePolicy.load(CONFIG, { seed: 5, prefixCacheBytes: 64 * 2 ** 20 });
  const plain = await NativePolicy.load(CONFIG, { seed: 5, prefixCacheBytes: 0 });
  t.teardown(() => (cached.dispose(), plain.dispose()));

  const first = tokens(40);
  const a = await cached.generate({ prompt: first, maxTokens: 8, stopTokens: [], seed: 11 });
  const second = [...first, ...a.tokens, ...tokens(25)];
  const before = cached.prefixCache;
  t.match(before, { lookups: 1, hits: 0 }, 'the first prompt found nothing');
  const b = await cached.generate({ prompt: second, maxTokens: 8, stopTokens: [], seed: 12 });
  const after = cached.prefixCache;
  t.equal(after.hits, 1, 'the second turn hit');
  // The cache held the prompt and every sampled token but the last (it never entered it).
  t.equal(after.reusedTokens, first.length + a.tokens.length - 1, 'reused: the first prompt and its reply');
  t.equal(after.prefilledTokens - before.prefilledTokens, second.length - (first.length + a.tokens.length - 1), 'prefilled: the rest only');
  t.ok(after.entries >= 1 && after.bytes > 0, `stored: ${after.entries} entr(ies), ${after.bytes} bytes`);

  const gap = await gapToFullForward(cached, second, b);
  t.ok(gap <= 1e-5, `second turn's logprobs vs a full forward: max |Δ| ${gap.toExponential(2)}`);
  const a2 = await plain.generate({ prompt: first, maxTokens: 8, stopTokens: [], seed: 11 });
  const b2 = await plain.generate({ prompt: second, maxTokens: 8, stopTokens: [], seed: 12 });
  t.same(Array.from(a2.tokens), Array.from(a.tokens));
  t.same(Array.from(b2.tokens), Array.from(b.tokens), 'the same tokens as a policy without the cache, for the same seed');
  t.ok(Math.max(...b.logprobs.map((l, i) => Math.abs(l - b2.logprobs[i]!))) <= 1e-5, 'and the same logprobs');
  t.match(plain.prefixCache, { lookups: 0, hits: 0, entries: 0 }, 'prefixCacheBytes 0: off');
});

t.test('concurrent multi-turn episodes share batches and the cache; every turn exact', async (t) => {
  const policy = await NativePolicy.load(CONFIG, { seed: 9, maxBatchSize: 4 });
  t.teardown(() => policy.dispose());
  const episodes = await Promise.all(Array.from({ length: 6 }, (_, i) => episode(policy, 4, 100 * i)));
  const worst = Math.max(...episodes.flat().map((r) => r.gap));
  t.ok(worst <= 1e-5, `24 turns of 6 concurrent episodes: sampled logprobs vs full forwards, max |Δ| ${worst.toExponential(2)}`);
  const stats = policy.prefixCache;
  t.equal(stats.lookups, 24);
  t.ok(stats.hits >= 18, `every turn after the first hits (${stats.hits} of 24)`);
  t.ok(stats.reusedTokens > stats.prefilledTokens, `more reused (${stats.reusedTokens}) than prefilled (${stats.prefilledTokens})`);
});

t.test('a weight change empties the cache: the next turn is computed with the new weights', async (t) => {
  const policy = await NativePolicy.load(CONFIG, { seed: 3, optimizer: { lr: 0.05 } });
  t.teardown(() => policy.dispose());
  const first = tokens(40);
  const a = await policy.generate({ prompt: first, maxTokens: 8, stopTokens: [], seed: 1 });
  t.ok(policy.prefixCache.entries === 0, 'nothing stored until the sequence is released');
  const warm = await policy.generate({ prompt: tokens(20), maxTokens: 2, stopTokens: [], seed: 2 });  // releases the first
  t.ok(warm.tokens.length === 2 && policy.prefixCache.entries >= 1, 'the first turn is stored');
  const [old] = await policy.logprobs([[...first, ...a.tokens]]);
  await policy.trainStep({ sequences: [{ tokens: [...first, ...a.tokens], weights: [0, ...first.slice(1).map(() => 1), ...Array.from(a.tokens, () => 1)], oldLogprobs: Array.from(old!), advantage: 1 }] });
  const [fresh] = await policy.logprobs([[...first, ...a.tokens]]);
  const moved = Math.max(...fresh!.map((l, i) => Math.abs(l - old![i]!)));
  t.ok(moved > 1e-3, `the step moved the logprobs (by up to ${moved.toFixed(4)}): a stale prefix would show`);
  const { hits, lookups } = policy.prefixCache;
  const second = [...first, ...a.tokens, ...tokens(20)];
  const b = await policy.generate({ prompt: second, maxTokens: 8, stopTokens: [], seed: 3 });
  t.match(policy.prefixCache, { lookups: lookups + 1, hits }, 'the train step emptied the cache: no stale prefix reused');
  const gap = await gapToFullForward(policy, second, b);
  t.ok(gap <= 1e-5, `logprobs are the new weights' (max |Δ| ${gap.toExponential(2)} vs a full forward)`);
});

t.test('the byte budget holds: least recently used entries go first', async (t) => {
  const probe = await NativePolicy.load(CONFIG, { seed: 4 });
  const p = tokens(60);
  await probe.generate({ prompt: p, maxTokens: 4, stopTokens: [], seed: 1 });
  await probe.generate({ prompt: tokens(5), maxTokens: 1, stopTokens: [], seed: 1 });
  const oneEntry = probe.prefixCache.bytes;  // 63 positions' keys and values
  probe.dispose();
  const budget = Math.floor(oneEntry * 2.5);
  const policy = await NativePolicy.load(CONFIG, { seed: 4, prefixCacheBytes: budget });
  t.teardown(() => policy.dispose());
  for (let i = 0; i < 6; i++) await policy.generate({ prompt: tokens(60), maxTokens: 4, stopTokens: [], seed: i });
  await policy.generate({ prompt: tokens(5), maxTokens: 1, stopTokens: [], seed: 9 });
  const stats = policy.prefixCache;
  t.ok(stats.bytes <= budget, `${stats.bytes} bytes stored within the budget of ${budget}`);
  t.ok(stats.evictions >= 3, `${stats.evictions} evictions`);
  t.ok(stats.entries <= 2, `${stats.entries} entries`);
});
