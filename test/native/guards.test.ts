// The C++ entries defend themselves too: calling the raw addon with bad arguments (what the
// TypeScript wrappers never send) gives a SwerlError, never a crash.
import t from 'tap';

import { native } from '../../lib/native.js';

const addon = native() as unknown as Record<string, (...args: unknown[]) => unknown>;
const options = { objective: 'policy-gradient', clipLow: 0.2, clipHigh: 0.28, dualClip: 0, temperature: 1, entropyCoef: 0, klCoef: 0, klKind: 'k3', chunkTokens: 4, chunkVocab: 4, deterministic: true, dtype: 'float32', device: 'cpu' };
const tokens = { targets: new Int32Array([0, 1]), oldLogprobs: new Float32Array(2), advantages: new Float32Array([1, -1]), weights: new Float32Array([0.5, 0.5]) };

const isSwerl = (code: string, message: RegExp) => ({ name: 'SwerlError', code, message });

t.test('synchronous entries', async (t) => {
  t.throws(() => addon.computeAdvantages!(), isSwerl('ERR_SWERL_INVALID_ARG', /arguments must be an object/));
  t.throws(() => addon.computeAdvantages!({ rewards: [1], groups: new Int32Array(1), estimator: 'rloo' }), isSwerl('ERR_SWERL_INVALID_ARG', /rewards must be a Float32Array/));
  t.throws(() => addon.computeAdvantages!({ rewards: new Float32Array(1), groups: new Int32Array(1), estimator: 'x' }), isSwerl('ERR_SWERL_INVALID_ARG', /estimator must be/));
  t.throws(() => addon.tokenWeights!({ mask: new Uint8Array(2), sequenceIds: new Int32Array([0, 5]), numSequences: 1, aggregation: 'token-mean', maxLength: 0, globalSequences: 0, globalMaskedTokens: 0 }), isSwerl('ERR_SWERL_INVALID_ARG', /sequence id out of range/));
  t.throws(() => addon.compactFilter!({ rewards: new Float32Array(1), terminations: new Uint8Array([9]) }), isSwerl('ERR_SWERL_INVALID_ARG', /termination reason code/));
  t.throws(() => addon.setNumThreads!('many'), isSwerl('ERR_SWERL_INVALID_ARG', /threads/));
});

t.test('asynchronous entries reject', async (t) => {
  await t.rejects(async () => addon.policyLoss!({ ...tokens, logits: new Float32Array(3), vocabSize: 2 }, options) as Promise<unknown>, isSwerl('ERR_SWERL_INVALID_ARG', /logits must have 4 elements/));
  await t.rejects(async () => addon.policyLoss!({ ...tokens, targets: new Int32Array([0, 7]), logits: new Float32Array(4), vocabSize: 2 }, options) as Promise<unknown>, isSwerl('ERR_SWERL_INVALID_ARG', /targets must lie in \[0, 2\)/), 'target out of range is caught in C++ as well');
  await t.rejects(async () => addon.policyLoss!({ ...tokens, logits: new Float32Array(4), vocabSize: 2 }, { ...options, temperature: 0 }) as Promise<unknown>, isSwerl('ERR_SWERL_INVALID_ARG', /temperature/));
  await t.rejects(async () => addon.fusedLinearPolicyLoss!({ ...tokens, hidden: new Float32Array(4), weight: new Float32Array(4), hiddenSize: 2, vocabSize: 2 }, { ...options, chunkVocab: 0 }) as Promise<unknown>, isSwerl('ERR_SWERL_INVALID_ARG', /chunkVocab must be an integer in \[1, 2\^31\)/));
  t.throws(() => addon.policyLoss!({ ...tokens, vocabSize: 2 }, options), isSwerl('ERR_SWERL_INVALID_ARG', /logits is required/));
  t.throws(() => addon.policyLoss!({ ...tokens, logits: new Float32Array(4), vocabSize: 2 }, { ...options, klKind: 'k9', klCoef: 1 }), isSwerl('ERR_SWERL_INVALID_ARG', /kl\.kind/));
});

t.test('the process is still healthy afterwards', async (t) => {
  const out = (await addon.policyLoss!({ ...tokens, logits: new Float32Array(4), vocabSize: 2 }, options)) as { loss: number };
  t.ok(Number.isFinite(out.loss));
});
