// Every bad input is refused in TypeScript, before C++, with a SwerlError naming the field.
import t, { type Test } from 'tap';

import { computeAdvantages } from '../../../lib/math/advantages.js';
import { fusedLinearPolicyLoss, policyLoss, type PolicyLossInputs } from '../../../lib/math/policy-loss.js';
import { LOGPROB_SLACK } from '../../../lib/math/validate.js';
import { native } from '../../../lib/native.js';
import { compactFilter, overlongPenalty, turnPenalty } from '../../../lib/math/reward-shaping.js';
import { tokenWeights } from '../../../lib/math/token-weights.js';
import { roundToFloat16 } from '../../reference/compare.js';
import { abs, matmul, matmulTransposed, referencePolicyLoss } from '../../reference/policy-loss.js';

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
  await refuses(t, () => policyLoss(good(), { cliplow: 0.1 } as object), /options\.cliplow is not a known option \(did you mean clipLow\?\); known: objective, clipLow, clipHigh/, 'misspelt option');
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

  await refuses(t, () => policyLoss(good(), { chunkSize: { vocab: 2 ** 31 } }), /options\.chunkSize\.vocab must be <= 2147483647/, 'a tile side past int32');
  await refuses(t, () => policyLoss(good(), { temperature: () => 1 } as unknown as object), /policyLoss options holds something that is not plain data/, 'a function in the options');
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  await refuses(t, () => policyLoss(good(), cyclic), /policyLoss options nests more than 64 levels deep/, 'a cycle in the options');
  let deep: unknown = 1;
  for (let i = 0; i < 100_000; i++) deep = { kl: deep };
  await refuses(t, () => policyLoss(good(), deep as object), /policyLoss options nests more than 64 levels deep/, 'options 100,000 levels deep (a RangeError in structuredClone before)');
});

t.test('the logprob slack is the same in TypeScript and in the native core, to the float32', async (t) => {
  // The float32 at the slack (or just below it) and the next one up, stepped through the bits.
  const above = new Float32Array([LOGPROB_SLACK]);
  const bits = new Int32Array(above.buffer);
  if (above[0]! > LOGPROB_SLACK) bits[0] = bits[0]! - 1;
  const at = above[0]!;
  bits[0] = bits[0]! + 1;
  const raw = native() as unknown as { policyLoss: (inputs: object, options: object) => Promise<{ loss: number }> };
  const { resolveLossOptions } = await import('../../../lib/math/policy-loss.js');
  const inputs = (old: number) => ({ ...good(), targets: Int32Array.from([0, 1, 3]), logits: new Float32Array(T * V).fill(0.5), oldLogprobs: Float32Array.from([-1, old, -1]), advantages: Float32Array.from([1, -1, 0]), weights: Float32Array.from([0.3, 0.3, 0.3]) });
  await t.resolves(policyLoss(inputs(at)), `TypeScript takes ${at}`);
  await t.resolves(raw.policyLoss(inputs(at), resolveLossOptions()), `the native core takes ${at}`);
  await refuses(t, () => policyLoss(inputs(above[0]!)), /oldLogprobs\[1\] is 0\.0001000000\d+, which no log-probability can be/, `TypeScript refuses ${above[0]}`);
  await refuses(t, () => raw.policyLoss(inputs(above[0]!), resolveLossOptions()), /^oldLogprobs\[1\] is 0\.000100000\d+, which no log-probability can be/, `the native core refuses ${above[0]}`);
});

t.test('float16 overflow is ERR_SWERL_NUMERIC exactly where the float64 reference passes 65504', async (t) => {
  const H = 4;
  // Operands already float16 values, so the reference sees what the core computes with.
  const hidden = Float32Array.from({ length: T * H }, (_, i) => roundToFloat16(3 * Math.sin(i + 1)));
  const weight = Float32Array.from({ length: V * H }, (_, i) => roundToFloat16(Math.cos(i)));
  const logits = matmulTransposed(hidden, weight, T, H, V);
  const targets = Int32Array.from([0, 1, 3]);
  const opts = { clipLow: 0.2, clipHigh: 0.28, temperature: 1, entropyCoef: 0 };
  const zeros = new Float64Array(T);
  // Old logprobs at the current ones: every ratio is 1, every token active.
  const oldLogprobs = Float32Array.from(referencePolicyLoss({ logits, vocabSize: V, targets, oldLogprobs: zeros, advantages: zeros, weights: zeros }, opts).logprobs);
  const FP16_MAX = 65504;
  let refused = 0;
  let taken = 0;
  for (let e = 0; e <= 7; e += 0.25) {
    const A = 10 ** e;
    const tokens = { targets, oldLogprobs, advantages: Float32Array.from([A, -A, A]), weights: Float32Array.from([1, 1, 1]) };
    const ref = referencePolicyLoss({ logits, vocabSize: V, ...tokens }, opts);
    // float16 holds dZ (the logits' gradient tile) and gradHidden = dZ W; gradWeight is float32.
    const peak = Math.max(...abs(ref.gradLogits), ...abs(matmul(ref.gradLogits, weight, T, V, H)));
    const run = (dtype: 'float16' | 'bfloat16' | 'float32') => fusedLinearPolicyLoss({ ...tokens, hidden, hiddenSize: H, weight, vocabSize: V }, { dtype });
    if (peak > 2 * FP16_MAX) {
      await t.rejects(run('float16'), { code: 'ERR_SWERL_NUMERIC', message: /^fusedLinearPolicyLoss: gradHidden\[\d+\] is (-?Infinity|NaN) in float16; float16 overflows past 65504: use dtype "bfloat16"/ }, `A = ${A.toExponential(1)}: peak ${peak.toExponential(2)}, refused`);
      refused++;
    } else if (peak < FP16_MAX / 2) {
      const out = await run('float16');
      t.ok([out.loss, ...out.gradHidden, ...out.gradWeight].every(Number.isFinite), `A = ${A.toExponential(1)}: peak ${peak.toExponential(2)}, finite`);
      taken++;
    }
    for (const dtype of ['bfloat16', 'float32'] as const) {
      const out = await run(dtype);
      if (![out.loss, ...out.gradHidden, ...out.gradWeight].every(Number.isFinite)) t.fail(`${dtype} at A = ${A}`);
    }
  }
  t.ok(refused >= 4 && taken >= 4, `${taken} taken, ${refused} refused in float16; bfloat16 and float32 took all`);
  await refuses(t, () => run16({ hidden: Float32Array.from(hidden, (x, i) => (i === 5 ? 7e4 : x)) }), /inputs\.hidden\[5\] is 70000, past float16's largest value 65504; use dtype "bfloat16" or "float32"/, 'an operand float16 cannot hold');
  await refuses(t, () => run16({ weight: Float32Array.from(weight, (x, i) => (i === 2 ? -3.4e38 : x)) }, 'bfloat16'), /inputs\.weight\[2\] is -3\.3\d+e\+38, past bfloat16's largest value/, 'an operand bfloat16 rounds to -Infinity');

  function run16(over: object, dtype: 'float16' | 'bfloat16' = 'float16') {
    return fusedLinearPolicyLoss({ targets, oldLogprobs, advantages: [1, 1, 1], weights: [1, 1, 1], hidden, hiddenSize: H, weight, vocabSize: V, ...over }, { dtype });
  }
});

t.test('float32: gradWeight is looked at when its bound cannot rule out an overflow', async (t) => {
  // x_t0 = 3e38 with a tiny W column keeps the logits, dZ and dX = dZ W finite, while
  // dW = dZ^T X passes float32: the bound T max|dZ| max|X| sends the core to look.
  const H = 2;
  const hidden = Float32Array.from([3e38, 0.5, 3e38, -0.5, 3e38, 1]);
  const weight = Float32Array.from([1e-38, 1, -1e-38, 0.5, 2e-38, -1, 0, 2]);
  const inputs = { targets: [0, 1, 3], oldLogprobs: [-1.5, -1.5, -1.5], advantages: [50, -50, 50], weights: [1, 1, 1], hidden, hiddenSize: H, weight, vocabSize: V };
  // The rows' terms of dW have both signs: a BLAS that overflows term by term meets +Infinity and
  // -Infinity and sums NaN (seen on an Intel Xeon), one that overflows the running sum first
  // stops at one Infinity (AMD EPYC). Both are the overflow, and both are refused.
  await t.rejects(fusedLinearPolicyLoss(inputs), { code: 'ERR_SWERL_NUMERIC', message: /^fusedLinearPolicyLoss: gradWeight\[\d+\] is (NaN|-?Infinity) in float32; the inputs are past float32's range/ });
  const small = await fusedLinearPolicyLoss({ ...inputs, hidden: Float32Array.from(hidden, (x) => (x > 1 ? 3 : x)) });
  t.ok([small.loss, ...small.gradWeight].every(Number.isFinite), 'the same with x_t0 = 3: finite');
});
