/**
 * A process group of its own, beside the one a policy trains in (NativePolicy.joinGroup): a
 * second collective channel, so that asynchronous rollouts can gather trajectories while the
 * learner all-reduces gradients, each in the same order on every rank, neither waiting for the
 * other. Gloo over TCP; its rendezvous is a TCPStore of its own (rank 0 serves it at masterPort).
 */
import { SwerlError, invalidArg } from '../errors.js';
import { native, type NativeGroupHandle } from '../native.js';
import { parseProcessGroupOptions, type ProcessGroupInput, type ProcessGroupOptions } from './native-policy-options.js';

/** A process group's options, checked and defaulted (every join's first step). */
export function groupOptions(options: ProcessGroupInput): ProcessGroupOptions {
  const o = parseProcessGroupOptions(options, 'options');
  if (o.rank >= o.worldSize) throw invalidArg('options.rank', `is ${o.rank} and worldSize ${o.worldSize}`, 'ranks are 0 to worldSize - 1');
  return o;
}

/** Refuses a backend this build of the addon lacks, saying how to get it. */
export function assertBackendBuilt(backend: 'gloo' | 'nccl'): void {
  const build = native().buildInfo();
  if (backend === 'gloo' && !build.processGroups)
    throw new SwerlError(
      'ERR_SWERL_DIST',
      `this build of the addon has no Gloo process groups (CPU ranks): Gloo's headers were missing when it was built${build.nccl ? ' (PyTorch\'s wheels ship none); CUDA ranks join with backend "nccl"' : ''}; install them (Debian: apt install libgloo-dev) and rebuild with npx cmake-js compile`,
    );
  if (backend === 'nccl' && !build.nccl)
    throw new SwerlError('ERR_SWERL_DIST', 'this build of the addon has no NCCL process groups; build it with CUDA against PyTorch\'s libtorch with nccl.h findable (NCCL_HOME), or join with backend "gloo"');
}

export class ProcessGroupChannel {
  #handle: NativeGroupHandle | undefined;

  private constructor(handle: NativeGroupHandle, readonly rank: number, readonly worldSize: number) {
    this.#handle = handle;
  }

  /** Joins (blocks until every rank has). */
  static async join(options: ProcessGroupInput): Promise<ProcessGroupChannel> {
    const o = groupOptions(options);
    if (o.backend === 'nccl') throw invalidArg('options.backend', 'is "nccl"; a channel outside a policy carries host numbers over Gloo', 'leave it out');
    assertBackendBuilt('gloo');
    const handle = await native().groupJoin({ masterAddr: o.masterAddr, masterPort: o.masterPort, rank: o.rank, worldSize: o.worldSize, timeoutMs: o.timeoutMs });
    return new ProcessGroupChannel(handle, o.rank, o.worldSize);
  }

  /** Sums `values` over the ranks (every rank calls it, in the same order as its other calls on this channel). */
  allReduce(values: ArrayLike<number>): Promise<Float64Array> {
    if (!this.#handle) throw new SwerlError('ERR_SWERL_DISPOSED', 'this process group channel was closed');
    return native().groupAllReduce(this.#handle, Float64Array.from(values));
  }

  /** Leaves the group (its connections close with the last collective in flight). Idempotent. */
  close(): void {
    if (this.#handle) native().groupClose(this.#handle);
    this.#handle = undefined;
  }
}
