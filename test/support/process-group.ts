/** What the data-parallel tests share: a free loopback port for a rendezvous, a checkpoint's fp32 weights. */
import net from 'node:net';

import { readCheckpointTensors, readTensorBytes } from '../../lib/model/safetensors.js';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
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
