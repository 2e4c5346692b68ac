/**
 * One rank of the data-parallel tests, a process of its own: a tiny policy from its own seed
 * (joining the group gives it rank 0's weights), `steps` train steps on its share of each
 * global batch (dp-batch.ts; the objective of each step is stepObjective's), its weights saved
 * to `out`. With `dieAfterJoin`, it exits right
 * after joining, as a crashed rank would.
 * argv[2]: JSON {rank, worldSize, port, out, steps, seed, dieAfterJoin?, timeoutMs?}
 */
import { presetConfig } from '../../lib/model/model-config.js';
import { NativePolicy } from '../../lib/model/native-policy.js';
import { rankShare } from '../../lib/train/parallel.js';
import { DP_VOCAB, globalBatch, stepObjective } from './dp-batch.js';

const args = JSON.parse(process.argv[2]!) as { rank: number; worldSize: number; port: number; out: string; steps: number; seed: number; dieAfterJoin?: boolean; timeoutMs?: number };
const policy = await NativePolicy.load(presetConfig('qwen3-tiny', DP_VOCAB), { seed: 100 + args.rank, optimizer: { lr: 1e-3 }, threads: 1 });
await policy.joinGroup({ rank: args.rank, worldSize: args.worldSize, masterPort: args.port, timeoutMs: args.timeoutMs ?? 60_000 });
if (args.dieAfterJoin) process.exit(3);
const sums = await policy.allReduce([args.rank, 1]);
console.log(JSON.stringify({ rank: args.rank, group: policy.group, sums: Array.from(sums) }));
try {
  for (let step = 0; step < args.steps; step++) {
    const result = await policy.trainStep({ sequences: rankShare(globalBatch(step, args.seed), args), loss: { objective: stepObjective(step) } });
    console.log(JSON.stringify({ rank: args.rank, step, loss: result.loss, gradNorm: result.gradNorm, lossTokens: result.lossTokens }));
  }
  await policy.save(args.out);
} catch (error) {
  console.error(`rank ${args.rank}: ${(error as Error & { code?: string }).code}: ${(error as Error).message}`);
  process.exit(1);
}
policy.dispose();
