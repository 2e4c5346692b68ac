/**
 * Who samples a training run's rollouts (config.sampler). 'native': the learner itself.
 * 'remote': inference servers behind a RemotePolicy (vLLM, SGLang, or swerl serve servers this
 * run launches on loopback), which load the learner's weights after every step: the learner
 * writes them under syncDir (model files only) and each server is told to load them
 * (POST /update_weights_from_disk). Trajectories record the learner step whose weights
 * sampled them.
 *
 * Data parallel (every rank holds the same weights): launched servers are each rank's own,
 * synced from a folder of the rank's; external servers are shared, so rank 0 alone writes and
 * loads the weights and the others wait for it (a barrier on the group).
 */
import fs from 'node:fs/promises';
import path from 'node:path';

import type { AgentPolicy } from '../types/policy.js';
import type { Trajectory } from '../agent/trajectory.js';
import { NativePolicy } from '../model/native-policy.js';
import { RemotePolicy } from '../model/remote-policy.js';
import { startServer, type RunningServer } from '../serve/server.js';
import type { TrainConfig } from './config.js';
import type { ParallelRun } from './parallel.js';

export interface Sampler {
  readonly policy: AgentPolicy;
  readonly remote: boolean;
  /** The learner's optimizer step whose weights sample now. */
  version(): number;
  /** Hands the learner's current weights to the servers; resolves with the seconds it took. */
  sync(): Promise<number>;
  close(): Promise<void>;
}

export async function openSampler(config: TrainConfig, learner: NativePolicy, parallel?: ParallelRun): Promise<Sampler> {
  const s = config.sampler;
  if (s.kind === 'native') {
    return { policy: learner, remote: false, version: () => learner.step, sync: async () => 0, close: async () => undefined };
  }
  const shared = s.launch === 0 && parallel !== undefined;
  // Shared servers load rank 0's files; launched ones each rank's own.
  const loads = !shared || parallel!.rank === 0;
  const syncDir = parallel && !shared ? path.join(s.syncDir!, `rank-${parallel.rank}`) : s.syncDir!;
  const barrier = async () => {
    if (shared) await learner.allReduce([0]);
  };
  let synced = -1;
  let current: string | undefined;
  const write = async (): Promise<string> => {
    const dir = path.join(syncDir, `step-${learner.step}`);
    if (dir !== current && loads) await learner.save(dir, { optimizer: false });
    return dir;
  };
  const prune = async (keep: string) => {
    for (const name of await fs.readdir(syncDir).catch(() => [] as string[]))
      if (path.join(syncDir, name) !== keep) await fs.rm(path.join(syncDir, name), { recursive: true, force: true });
  };

  // Launched servers start from the learner's weights; external ones are told to load them.
  const launched: { server: RunningServer; policy: NativePolicy }[] = [];
  const first = await write();
  try {
    for (let i = 0; i < s.launch; i++) {
      const policy = await NativePolicy.load(first, { device: config.model.device, seed: config.run.seed + 1 + i, maxBatchSize: config.model.maxBatchSize });
      launched.push({ policy, server: await startServer(policy, { port: 0, modelName: 'swerl-sampler', weightsRoot: syncDir }) });
    }
    const remote = await RemotePolicy.connect(learner.tokenizer, {
      servers: s.launch > 0 ? launched.map((l) => l.server.url) : s.servers,
      protocol: s.protocol,
      ...(s.model ? { model: s.model } : {}),
      routing: s.routing,
      weightUpdatePath: s.weightUpdatePath,
      timeoutMs: s.requestTimeoutMs,
    });
    if (s.launch === 0 && loads) await remote.updateWeights(first);
    await barrier();
    current = first;
    synced = learner.step;
    if (loads) await prune(first);
    return {
      policy: remote,
      remote: true,
      version: () => synced,
      sync: async () => {
        const started = performance.now();
        const dir = await write();
        if (loads) await remote.updateWeights(dir);
        await barrier();
        current = dir;
        synced = learner.step;
        if (loads) await prune(dir);
        return (performance.now() - started) / 1000;
      },
      close: async () => {
        for (const l of launched) {
          await l.server.close();
          l.policy.dispose();
        }
      },
    };
  } catch (error) {
    for (const l of launched) {
      await l.server.close();
      l.policy.dispose();
    }
    throw error;
  }
}

export interface SamplerGap {
  /** Mean and max over sampled tokens of |sampler logprob - learner logprob|. */
  mean: number;
  max: number;
  tokens: number;
}

/**
 * The learner's logprobs of every sampled token, the gap to the sampler's, and (replace) the
 * trajectories with the learner's logprobs in place of the sampler's.
 */
export async function learnerLogprobs(learner: NativePolicy, trajectories: Trajectory[], temperature: number, replace: boolean): Promise<{ trajectories: Trajectory[]; gap: SamplerGap }> {
  if (trajectories.length === 0) return { trajectories, gap: { mean: 0, max: 0, tokens: 0 } };
  const recomputed = await learner.logprobs(trajectories.map((t) => t.tokens), { temperature });
  let sum = 0, max = 0, tokens = 0;
  const out = trajectories.map((t, k) => {
    const mine = recomputed[k]!;
    const logprobs = replace ? new Float32Array(t.logprobs) : t.logprobs;
    t.mask.forEach((m, i) => {
      if (!m) return;
      const d = Math.abs(t.logprobs[i]! - mine[i]!);
      sum += d;
      max = Math.max(max, d);
      tokens += 1;
      if (replace) logprobs[i] = mine[i]!;
    });
    return replace ? { ...t, logprobs } : t;
  });
  return { trajectories: out, gap: { mean: tokens ? sum / tokens : 0, max, tokens } };
}
