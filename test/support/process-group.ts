/** What the data-parallel tests share: a free loopback port pair for a rendezvous, ports held busy, a checkpoint's fp32 weights, the FrozenLake run's overrides, the ranks of a launch. */
import { readFileSync, readdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

import { readCheckpointTensors, readTensorBytes } from '../../lib/model/safetensors.js';
import { freePortPair } from '../../lib/util/ports.js';
import { ROOT } from './child-process.js';

export const FROZENLAKE = path.join(ROOT, 'examples/frozenlake.json');
export const RUN = ['run.steps=2', 'model.threads=1', 'eval.every=0', 'run.plots=false'];
/** No warm-up, small steps; DAPO's overlong penalty over long turns gives every step advantages (weights that move). */
export const MOVING = ['tasks.formatWarmupSteps=0', 'rollout.samplesPerTask=4', 'rollout.maxTurns=3', 'rollout.maxTokensPerTurn=64', 'rollout.responseBudget=384', 'algorithm.truncation=none', 'algorithm.overlong={maxLength: 384, bufferLength: 320}'];
/** With a KL term: each rank reads the reference from rank 0's step-0 checkpoint. */
export const KL = ['algorithm.kl={coef: 0.05}'];

/** The pids of live processes whose environment holds MASTER_PORT=port (the ranks of one launch). */
export function ranksOf(port: number): { pid: number; rank: string }[] {
  const found: { pid: number; rank: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const env = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (env.includes(`MASTER_PORT=${port}`)) found.push({ pid: Number(entry), rank: env.find((e) => e.startsWith('RANK='))?.slice(5) ?? '?' });
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

export const rows = (dir: string) => readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));

/** A port p where p and p + 1 are free (a group's rendezvous and its async rollouts' channel). */
export const freePort = (): Promise<number> => freePortPair();

/** Listens on these ports (every interface) until closed; one already taken elsewhere is skipped. */
export async function holdPorts(ports: number[]): Promise<net.Server[]> {
  const held: net.Server[] = [];
  for (const port of ports) {
    const server = net.createServer();
    const ok = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen({ port, exclusive: true }, () => resolve(true));
    });
    if (ok) held.push(server);
  }
  return held;
}

/** A checkpoint's tensors by name, as fp32 (the checkpoints these tests save are fp32). */
export async function checkpointWeights(dir: string): Promise<Map<string, Float32Array>> {
  const out = new Map<string, Float32Array>();
  for (const [name, entry] of await readCheckpointTensors(dir)) {
    const bytes = await readTensorBytes(entry);
    out.set(name, new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)));
  }
  return out;
}
