// Every bad input is refused in TypeScript, before C++, with a SwerlError naming the field.
import t, { type Test } from 'tap';

import { computeAdvantages } from '../../../lib/math/advantages.js';
import { fusedLinearPolicyLoss, policyLoss, type PolicyLossInputs } from '../../../lib/math/policy-loss.js';
import { compactFilter, overlongPenalty, turnPenalty } from '../../../lib/math/reward-shaping.js';
import { tokenWeights } from '../../../lib/math/token-weights.js';

/** run() throws or rejects with a SwerlError ERR_SWERL_INVALID_ARG whose message matches. */
async function refuses(t: Test, run: () => unknown, message: RegExp, name: string): Promise<void> {
  await t.rejects(async () => run(), { name: 'SwerlError', code: 'ERR_SWERL_INVALID_ARG', message }, name);
}

const T = 3;
const V = 4;
const good = (): PolicyLossInputs => ({
  logits: new Float32Array(T * V).fill(0.5),
  vocabSize: V,
  targets: [0, 1, 3],
  oldLogprobs: [-1, -1, -1],
  advantages: [1, -1, 0],
  weights: [0.3, 0.3, 0.3],
});

t.test('policyLoss inputs', async (t) => {
  await t.resolves(policyLoss(good()), 'the good input passes');
  await refuses(t, () => policyLoss({ ...good(), logits: new Float32Array(T * V - 1) }), /inputs\.logits has 11 elements but must have 12 \(T x vocabSize\)/, 'logits length');
  await refuses(t, () => policyLoss({ ...good(), advantages: [1, 2] }), /inputs\.advantages has 2 elements.*T = targets\.length/, 'advantages length');
  await refuses(t, () => policyLoss({ ...good(), logits: new Float32Array(T * V).fill(NaN) }), /inputs\.logits\[0\] is NaN/, 'NaN logits');
  await refuses(t, () => policyLoss({ ...good(), oldLogprobs: [-1, -Infinity, -1] }), /inputs\.oldLogprobs\[1\] is -Infinity/, 'Inf old logprob');
  await refuses(t, () => policyLoss({ ...good(), weights: [0.1, -0.1, 0] }), /inputs\.weights\[1\] is -0\.1.*>= 0/, 'negative weight');
  await refuses(t, () => policyLoss({ ...good(), targets: [0, 4, 1] }), /inputs\.targets\[1\] is 4.*vocabSize is 4/, 'target >= V');
  await refuses(t, () => policyLoss({ ...good(), targets: [0, -1, 1] }), /inputs\.targets\[1\] is -1/, 'negative target');
  await refuses(t, () => policyLoss({ ...good(), targets: [0, 1.5, 1] }), /inputs\.targets\[1\] is 1\.5.*integers/, 'fractional target');
  await refuses(t, () => policyLoss({ ...good(), targets: [], logits: [], oldLogprobs: [], advantages: [], weights: [] }), /inputs\.targets is empty/, 'no tokens');
  await refuses(t, () => policyLoss({ ...good(), vocabSize: 0 }), /inputs\.vocabSize is 0/, 'vocabSize 0');
  await refuses(t, () => policyLoss({ ...good(), weights: 'x' as unknown as number[] }), /inputs\.weights must be a typed array/, 'not an array');
  await refuses(t, () => policyLoss(null as unknown as PolicyLossInputs), /policyLoss inputs must be an object/, 'null inputs');
  await refuses(t, () => policyLoss(good(), { kl: { coef: 0.1 } }), /inputs\.refLogprobs is required when options\.kl is set/, 'kl without refLogprobs');
  await refuses(t, () => policyLoss({ ...good(), refLogprobs: [0, 0] }, { kl: { coef: 0.1 } }), /inputs\.refLogprobs has 2 elements/, 'refLogprobs length');
});

t.test('policyLoss options', async (t) => {
  await refuses(t, () => policyLoss(good(), { clipLow: 1 }), /options\.clipLow must be < 1/, 'clipLow 1');
  await refuses(t, () => policyLoss(good(), { clipHigh: -0.1 }), /options\.clipHigh must be >= 0/, 'negative clipHigh');
  await refuses(t, () => policyLoss(good(), { dualClip: 0.5 }), /options\.dualClip must be > 1/, 'dual clip <= 1');
  await refuses(t, () => policyLoss(good(), { temperature: 0 }), /options\.temperature must be >= 0\.01/, 'temperature 0');
  await refuses(t, () => policyLoss(good(), { temperature: 1e-300 }), /options\.temperature must be >= 0\.01/, 'a temperature that overflows z / T');
  await refuses(t, () => policyLoss(good(), { temperature: NaN }), /options\.temperature must be a finite number/, 'temperature NaN');
  await refuses(t, () => policyLoss(good(), { kl: { coef: 0.1, kind: 'k4' as 'k1' }, }), /options\.kl\.kind must be one of "k1", "k2", "k3"/, 'unknown KL kind');
  await refuses(t, () => policyLoss(good(), { cliplow: 0.1 } as object), /options\.cliplow is not a known option; known: clipLow, clipHigh/, 'misspelt option');
  await refuses(t, () => policyLoss(good(), { chunkSize: { tokens: 0 } }), /options\.chunkSize\.tokens must be >= 1/, 'chunk size 0');
  await t.resolves(policyLoss(good(), { clipHigh: Infinity, dualClip: null }), 'clipHigh Infinity is allowed');
});

t.test('fusedLinearPolicyLoss inputs', async (t) => {
  const H = 2;
  const fused = { ...good(), hidden: new Float32Array(T * H), hiddenSize: H, weight: new Float32Array(V * H) };
  await t.resolves(fusedLinearPolicyLoss(fused));
  await refuses(t, () => fusedLinearPolicyLoss({ ...fused, hiddenSize: 3 }), /inputs\.hidden has 6 elements but must have 9 \(T x hiddenSize\)/, 'hidden size mismatch');
  await refuses(t, () => fusedLinearPolicyLoss({ ...fused, weight: new Float32Array(V * H + 1) }), /inputs\.weight has 9 elements but must have 8 \(vocabSize x hiddenSize\)/, 'weight shape');
  await refuses(t, () => fusedLinearPolicyLoss({ ...fused, hidden: new Float32Array(T * H).fill(Infinity) }), /inputs\.hidden\[0\] is Infinity/, 'Inf hidden');
});

t.test('advantages, token weights and shaping', async (t) => {
  await refuses(t, () => computeAdvantages([1, 0], [0]), /groups has 1 elements but must have 2/, 'lengths disagree');
  await refuses(t, () => computeAdvantages([1, NaN], [0, 0]), /rewards\[1\] is NaN/, 'NaN reward');
  await refuses(t, () => computeAdvantages([1, 0], [0, 0], { estimator: 'ppo' as 'grpo' }), /estimator must be one of "grpo", "drgrpo", "rloo"/, 'unknown estimator');
  await refuses(t, () => tokenWeights({ mask: [1, 1], seqLengths: [1, 1], aggregation: 'mean' as 'token-mean' }), /tokenWeights\.aggregation must be one of/, 'unknown aggregation');
  await refuses(t, () => tokenWeights({ mask: [1, 1], seqLengths: [1, 1] }), /tokenWeights\.maxLength is required for seq-mean-token-sum-norm/, 'missing maxLength');
  await refuses(t, () => tokenWeights({ mask: [1, 1], seqLengths: [1, 2], aggregation: 'token-mean' }), /seqLengths sums to 3.*number of tokens, 2/, 'lengths do not sum to T');
  await refuses(t, () => tokenWeights({ mask: [1, 2], seqLengths: [2], aggregation: 'token-mean' }), /mask\[1\] is 2/, 'mask value 2');
  await refuses(t, () => tokenWeights({ mask: [1], seqLengths: [1], sequenceIds: [0], aggregation: 'token-mean' }), /give exactly one/, 'both layouts');
  await refuses(t, () => compactFilter({ rewards: [1], terminations: ['crashed' as 'error'] }), /terminations\[0\] is "crashed"; use one of submitted/, 'unknown termination');
  await refuses(t, () => turnPenalty([0], [5], { threshold: 10, maxTurns: 10 }), /maxTurns is 10.*greater than threshold/, 'maxTurns <= threshold');
  await refuses(t, () => overlongPenalty([0], [5], { maxLength: 10, bufferLength: 20 }), /bufferLength is 20.*<= maxLength/, 'buffer > max');
  await refuses(t, () => overlongPenalty([0], [5], {} as { maxLength: number; bufferLength: number }), /options\.maxLength is required/, 'missing option');
});

t.test('logprobs are <= 0; coefficients in range; a non-finite loss is an error, never a number', async (t) => {
  await refuses(t, () => policyLoss({ ...good(), oldLogprobs: [-1, 0.5, -1] }), /inputs\.oldLogprobs\[1\] is 0\.5, which no log-probability can be; logprobs are <= 0/, 'a positive old logprob');
  await refuses(t, () => policyLoss({ ...good(), refLogprobs: [-1, -1, 1e30] }, { kl: { coef: 0.1 } }), /inputs\.refLogprobs\[2\] is 1\.0000000150474662e\+30, which no log-probability/, 'an impossible ref logprob (it made loss = Infinity)');
  await t.resolves(policyLoss({ ...good(), oldLogprobs: [-1, 5e-5, 0] }), 'fp32 rounding just above 0 is taken');
  await refuses(t, () => policyLoss(good(), { kl: { coef: -0.1 } }), /options\.kl\.coef must be >= 0/, 'a negative KL coefficient');
  await refuses(t, () => policyLoss(good(), { entropyCoef: 1e308 }), /options\.entropyCoef must be <= 100/, 'an entropy coefficient that can only be a typo');

  const H = 4;
  const fused = (A: number, dtype: 'float32' | 'float16', w = 1) => fusedLinearPolicyLoss({
    targets: [0, 1, 3], oldLogprobs: [-1, -1, -1], advantages: [A, -A, A], weights: [w, w, w],
    hidden: Float32Array.from({ length: T * H }, (_, i) => Math.sin(i)), hiddenSize: H,
    weight: Float32Array.from({ length: V * H }, (_, i) => Math.cos(i)), vocabSize: V,
  }, { dtype });
  await t.resolves(fused(1e6, 'float32'), 'float32 takes large advantages');
  await t.rejects(fused(1e6, 'float16'), { code: 'ERR_SWERL_NUMERIC', message: /the float16 policy loss's grad\w+\[\d+\] is (-?Infinity|NaN); float16 overflows past 65504: use dtype "bfloat16" or "float32"/ }, 'float16 overflow is an error');
  await t.rejects(fused(1e30, 'float32', 1e30), { code: 'ERR_SWERL_NUMERIC', message: /the float32 policy loss(\'s gradHidden\[\d+\])? is (-?Infinity|NaN); scale the advantages/ }, 'a loss past float32 is an error');
});
