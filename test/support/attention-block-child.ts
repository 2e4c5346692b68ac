/**
 * Loads a model directory and prints, as one JSON line, the logprobs of the sequences and one
 * train step's loss and gradient norm: run with different SWERL_ATTENTION_BLOCK values (read
 * once, when the addon first attends) to compare the blockwise and the dense attention paths.
 */
import { NativePolicy } from '../../lib/model/native-policy.js';

const { dir, sequences } = JSON.parse(process.env.SWERL_CHILD_INPUT!) as { dir: string; sequences: number[][] };
const policy = await NativePolicy.load(dir, { seed: 1, threads: 1 });
const logprobs = (await policy.logprobs(sequences)).map((row) => Array.from(row));
const step = await policy.trainStep({
  sequences: sequences.map((tokens, i) => ({ tokens, weights: tokens.map((_, j) => (j > 0 ? 1 : 0)), oldLogprobs: logprobs[i]!, advantage: i % 2 ? 1 : -1 })),
});
const checkpointed = await NativePolicy.load(dir, { seed: 1, threads: 1, activationCheckpointing: true });
const stepCheckpointed = await checkpointed.trainStep({
  sequences: sequences.map((tokens, i) => ({ tokens, weights: tokens.map((_, j) => (j > 0 ? 1 : 0)), oldLogprobs: logprobs[i]!, advantage: i % 2 ? 1 : -1 })),
});
process.stdout.write(`${JSON.stringify({ logprobs, loss: step.loss, gradNorm: step.gradNorm, checkpointedGradNorm: stepCheckpointed.gradNorm })}\n`);
policy.dispose();
checkpointed.dispose();
