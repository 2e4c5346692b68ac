/**
 * Continuous batching in front of the native generator. Requests join the running batch
 * between decode steps (so concurrent episodes share batches), leave it when they hit a stop
 * token, their token limit, or are cancelled, and the loop runs only while there is work.
 * One native step at a time; each step runs off the event loop.
 */
import { SwerlError } from '../errors.js';
import type { NativeGenerationRequest, NativePolicyHandle, NativePrefixCacheStats } from '../native.js';
import type { FinishReason, Generation } from '../types/policy.js';

/** A request as the scheduler takes it: validated and defaulted. */
export interface ScheduledRequest {
  prompt: Int32Array;
  maxTokens: number;
  stopTokens: ReadonlySet<number>;
  temperature: number;
  topK: number;
  topP: number;
  seed: number;
  signal?: AbortSignal;
  /** Each token as it is sampled. */
  onToken?: (token: number, logprob: number) => void;
}

interface Pending {
  id: number;
  request: ScheduledRequest;
  tokens: number[];
  logprobs: number[];
  resolve: (g: Generation) => void;
  reject: (e: unknown) => void;
  onAbort?: () => void;
}

export class GenerationScheduler {
  private nextId = 1;
  private readonly waiting: Pending[] = [];
  private readonly running = new Map<number, Pending>();
  private readonly toRelease: number[] = [];
  private loop: Promise<void> | undefined;
  private paused = 0;
  /** The prefix cache's counters after the last step. */
  prefixCache: NativePrefixCacheStats = { lookups: 0, hits: 0, reusedTokens: 0, prefilledTokens: 0, evictions: 0, entries: 0, bytes: 0 };
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly handle: () => NativePolicyHandle,
    private readonly maxBatchSize: number,
  ) {}

  /** Sequences decoding now, and requests waiting to join. */
  get load(): { running: number; waiting: number } {
    return { running: this.running.size, waiting: this.waiting.length };
  }

  submit(request: ScheduledRequest): Promise<Generation> {
    return new Promise<Generation>((resolve, reject) => {
      const pending: Pending = { id: this.nextId++, request, tokens: [], logprobs: [], resolve, reject };
      if (request.signal?.aborted) {
        resolve(this.result(pending, 'cancelled'));
        return;
      }
      if (request.maxTokens === 0) {
        resolve(this.result(pending, 'length'));
        return;
      }
      if (request.signal) {
        pending.onAbort = () => this.cancel(pending);
        request.signal.addEventListener('abort', pending.onAbort, { once: true });
      }
      this.waiting.push(pending);
      this.wake();
    });
  }

  /**
   * Stops admitting new requests and resolves when every running sequence has finished:
   * what weight updates wait for, so no sequence mixes two versions of the weights.
   * Call resume() afterwards.
   */
  async pause(): Promise<void> {
    ++this.paused;
    if (this.running.size === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  resume(): void {
    this.paused = Math.max(0, this.paused - 1);
    this.wake();
  }

  /** Cancels everything (dispose). */
  cancelAll(): void {
    for (const p of [...this.waiting, ...this.running.values()]) this.cancel(p);
  }

  private cancel(p: Pending): void {
    const waitingAt = this.waiting.indexOf(p);
    if (waitingAt >= 0) this.waiting.splice(waitingAt, 1);
    else if (this.running.delete(p.id)) this.toRelease.push(p.id);
    else return;
    this.finish(p, 'cancelled');
  }

  private result(p: Pending, reason: FinishReason): Generation {
    return { tokens: Int32Array.from(p.tokens), logprobs: Float32Array.from(p.logprobs), finishReason: reason };
  }

  private finish(p: Pending, reason: FinishReason): void {
    if (p.onAbort) p.request.signal?.removeEventListener('abort', p.onAbort);
    p.resolve(this.result(p, reason));
    this.notifyIdle();
  }

  private notifyIdle(): void {
    if (this.running.size > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  private wake(): void {
    this.loop ??= this.run().finally(() => {
      this.loop = undefined;
      if (this.hasWork()) this.wake();
    });
  }

  private hasWork(): boolean {
    return this.running.size > 0 || (this.paused === 0 && this.waiting.length > 0);
  }

  private async run(): Promise<void> {
    while (this.hasWork()) {
      const admit: Pending[] = [];
      if (this.paused === 0)
        while (this.waiting.length > 0 && this.running.size + admit.length < this.maxBatchSize) admit.push(this.waiting.shift()!);
      for (const p of admit) this.running.set(p.id, p);
      const release = Float64Array.from(this.toRelease.splice(0));
      const requests: NativeGenerationRequest[] = admit.map((p) => ({
        id: p.id,
        prompt: p.request.prompt,
        temperature: p.request.temperature,
        topK: p.request.topK,
        topP: p.request.topP,
        seed: p.request.seed,
      }));
      let step: Awaited<ReturnType<NativePolicyHandle['generateStep']>>;
      try {
        step = await this.handle().generateStep({ release, admit: requests });
      } catch (error) {
        // A failed step leaves the native batch unknown: fail what ran in it and start clean.
        const failed = [...this.running.values()];
        this.running.clear();
        this.toRelease.push(...failed.map((p) => p.id));
        for (const p of failed) {
          if (p.onAbort) p.request.signal?.removeEventListener('abort', p.onAbort);
          p.reject(error instanceof SwerlError ? error : new SwerlError('ERR_SWERL_NATIVE', String(error)));
        }
        this.notifyIdle();
        continue;
      }
      this.prefixCache = step.prefixCache;
      for (let i = 0; i < step.ids.length; ++i) {
        const p = this.running.get(step.ids[i]!);
        if (!p) continue;  // cancelled while the step ran
        const token = step.tokens[i]!;
        p.tokens.push(token);
        p.logprobs.push(step.logprobs[i]!);
        try {
          p.request.onToken?.(token, step.logprobs[i]!);
        } catch {
          // A listener that throws (a closed stream) ends its request, not the batch.
          this.running.delete(p.id);
          this.toRelease.push(p.id);
          this.finish(p, 'cancelled');
          continue;
        }
        const reason: FinishReason | undefined = p.request.stopTokens.has(token)
          ? 'stop'
          : p.tokens.length >= p.request.maxTokens
            ? 'length'
            : undefined;
        if (reason) {
          this.running.delete(p.id);
          this.toRelease.push(p.id);
          this.finish(p, reason);
        }
      }
    }
  }
}
