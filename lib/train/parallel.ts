/**
 * Data-parallel training across processes (torch.distributed's conventions). Each rank runs
 * train() with its own NativePolicy in one process group (NativePolicy.joinGroup):
 *
 *  - rollouts: each rank plays every world-th rollout item of a round; the round's
 *    trajectories are gathered to every rank, so the step's batch (and what dynamic sampling,
 *    advantages, filters and mini-batches make of it) is the same everywhere;
 *  - learning: each rank trains on every world-th sequence of each mini-batch, with the token
 *    weights of the whole mini-batch (the global denominators); the train step sums gradients
 *    over the ranks, so every rank takes the step one process would, and all stay identical;
 *  - rank 0 alone writes the run directory (metrics, checkpoints, trajectories, trackers).
 *
 * The group comes from torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
 * MASTER_PORT), set by `swerl train --nproc N` for its children or by any launcher.
 */
import type { Trajectory } from '../agent/trajectory.js';
import { invalidArg } from '../errors.js';
import type { NativePolicy } from '../model/native-policy.js';

export interface ParallelRun {
  rank: number;
  worldSize: number;
  /** This node's rank among its processes (the GPU index on CUDA). */
  localRank: number;
  masterAddr: string;
  masterPort: number;
  /** The rendezvous and each collective at most this long (rank 0's evals and saves happen while the others wait). */
  timeoutMs: number;
}

const ENV_INTEGER = /^(0|[1-9]\d*)$/;

function envInteger(env: NodeJS.ProcessEnv, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!ENV_INTEGER.test(raw) || Number(raw) < min || Number(raw) > max) throw invalidArg(`the environment variable ${name}`, `is ${JSON.stringify(raw)}`, `give an integer in [${min}, ${max}] (torchrun's convention)`);
  return Number(raw);
}

/** The group this process is a rank of, from torchrun's variables; undefined when WORLD_SIZE is unset or 1. */
export function parallelFromEnv(env: NodeJS.ProcessEnv = process.env): ParallelRun | undefined {
  const worldSize = envInteger(env, 'WORLD_SIZE', 1);
  if (worldSize === undefined || worldSize === 1) return undefined;
  const rank = envInteger(env, 'RANK', 0, worldSize - 1);
  if (rank === undefined) throw invalidArg('the environment variable RANK', `is unset and WORLD_SIZE is ${worldSize}`, 'set RANK (0 to WORLD_SIZE - 1) for every process, or launch with swerl train --nproc N');
  return {
    rank,
    worldSize,
    localRank: envInteger(env, 'LOCAL_RANK', 0) ?? 0,
    masterAddr: env.MASTER_ADDR || '127.0.0.1',
    masterPort: envInteger(env, 'MASTER_PORT', 1, 65535) ?? 29500,
    timeoutMs: (envInteger(env, 'SWERL_GROUP_TIMEOUT_S', 1) ?? 1800) * 1000,
  };
}

/** This rank's share of `items`: every worldSize-th, from its rank. */
export function rankShare<T>(items: readonly T[], parallel: Pick<ParallelRun, 'rank' | 'worldSize'> | undefined): T[] {
  return parallel ? items.filter((_, i) => i % parallel.worldSize === parallel.rank) : [...items];
}

/** A channel to sum numbers over the ranks: the policy's process group, or one of its own (ProcessGroupChannel). */
export interface AllReducer {
  allReduce(values: ArrayLike<number>): Promise<Float64Array>;
}

/**
 * Every rank's bytes, in rank order, through the group's all-reduce: each rank fills its own
 * slot of a buffer of zeros (4 bytes a float64, exact), the sum is everyone's.
 */
export async function allGatherBytes(policy: AllReducer, parallel: ParallelRun, bytes: Uint8Array): Promise<Uint8Array[]> {
  const lengths = new Float64Array(parallel.worldSize);
  lengths[parallel.rank] = bytes.length;
  const all = Array.from(await policy.allReduce(lengths));
  const words = all.map((n) => Math.ceil(n / 4));
  const starts = words.map((_, r) => words.slice(0, r).reduce((a, b) => a + b, 0));
  const buffer = new Float64Array(words.reduce((a, b) => a + b, 0));
  const padded = new Uint8Array(words[parallel.rank]! * 4);
  padded.set(bytes);
  const view = new DataView(padded.buffer);
  for (let w = 0; w < words[parallel.rank]!; w++) buffer[starts[parallel.rank]! + w] = view.getUint32(4 * w, true);
  const summed = await policy.allReduce(buffer);
  return all.map((length, r) => {
    const out = new Uint8Array(words[r]! * 4);
    const outView = new DataView(out.buffer);
    for (let w = 0; w < words[r]!; w++) outView.setUint32(4 * w, summed[starts[r]! + w]!, true);
    return out.subarray(0, length);
  });
}

type WireTrajectory = Omit<Trajectory, 'tokens' | 'mask' | 'logprobs'> & { tokens: number[]; mask: number[]; logprobs: number[] };

/** Every rank's trajectories, gathered, in (group, sample) order: the same array on every rank. */
export async function gatherTrajectories(policy: AllReducer, parallel: ParallelRun, mine: readonly Trajectory[]): Promise<Trajectory[]> {
  const wire = JSON.stringify(mine.map((t): WireTrajectory => ({ ...t, tokens: Array.from(t.tokens), mask: Array.from(t.mask), logprobs: Array.from(t.logprobs) })));
  const parts = await allGatherBytes(policy, parallel, new TextEncoder().encode(wire));
  const decoder = new TextDecoder();
  const all = parts.flatMap((part) =>
    (JSON.parse(decoder.decode(part)) as WireTrajectory[]).map((t): Trajectory => ({ ...t, tokens: Int32Array.from(t.tokens), mask: Uint8Array.from(t.mask), logprobs: Float32Array.from(t.logprobs) })),
  );
  return all.sort((a, b) => a.group - b.group || a.sample - b.sample);
}

/** Whether every rank holds bit-identical weights (their fingerprints gathered and compared). */
export async function identicalWeights(policy: NativePolicy, parallel: ParallelRun): Promise<boolean> {
  const mine = policy.weightsFingerprint();
  const all = await allGatherBytes(policy, parallel, new Uint8Array(mine.buffer, mine.byteOffset, mine.byteLength));
  return all.every((bytes) => Buffer.from(bytes).equals(Buffer.from(all[0]!)));
}
