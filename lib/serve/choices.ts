/**
 * One choice of a request: a generation on the served policy with stop strings, streaming
 * deltas and the request's abort. Every route samples through here.
 */
import type { NativePolicy } from '../model/native-policy.js';
import { HttpError } from './http.js';
import type { Sampling } from './requests.js';
import { TextStreamer } from './text-streamer.js';

/**
 * One abort listener per request, fanned out to its choices: n choices each listening on the
 * request's signal made every abort (and every listener added) cost O(n).
 */
export class ChoiceAborts {
  private readonly children = new Set<AbortController>();
  constructor(private readonly signal: AbortSignal) {
    signal.addEventListener('abort', () => this.children.forEach((c) => c.abort()), { once: true });
  }
  child(): AbortController {
    const controller = new AbortController();
    if (this.signal.aborted) controller.abort();
    else this.children.add(controller);
    return controller;
  }
  release(controller: AbortController): void {
    this.children.delete(controller);
  }
}

export interface Completion {
  tokens: number[];
  logprobs: number[];
  text: string;
  finishReason: 'stop' | 'length';
}

export type Listener = (delta: { text: string; tokens: number[]; logprobs: number[] }) => void;

/** One generation, with stop strings and streaming deltas; rejects 'cancelled' as an abort (499). */
export async function generateChoice(
  policy: NativePolicy,
  prompt: Int32Array,
  s: Sampling,
  index: number,
  aborts: ChoiceAborts,
  listener?: Listener,
): Promise<Completion> {
  const stopper = aborts.child();
  // Text is decoded token by token only when someone reads it as it comes (a stream, stop
  // strings); otherwise once at the end.
  const streamer = listener !== undefined || s.stop.length > 0 ? new TextStreamer(policy.tokenizer, s.stop) : undefined;
  try {
    const g = await policy.generate({
      prompt,
      maxTokens: s.maxTokens,
      temperature: s.temperature,
      topP: s.topP,
      topK: s.topK,
      ...(s.seed !== undefined ? { seed: s.seed + index } : {}),
      ...(s.stopTokens ? { stopTokens: s.stopTokens } : {}),
      signal: stopper.signal,
      ...(streamer
        ? {
            onToken: (token: number, logprob: number) => {
              const delta = streamer.push(token, logprob);
              if (streamer.stopped) stopper.abort();
              if (listener && (delta.text || delta.tokens.length)) listener(delta);
            },
          }
        : {}),
    });
    if (g.finishReason === 'cancelled' && !streamer?.stopped) throw new HttpError(499, 'the client closed the request');
    const rest = streamer?.finish();
    if (listener && rest && (rest.text || rest.tokens.length)) listener(rest);
    return {
      tokens: Array.from(g.tokens),
      logprobs: Array.from(g.logprobs),
      text: streamer ? streamer.text : policy.tokenizer.decode(g.tokens, { skipSpecialTokens: true }),
      finishReason: g.finishReason === 'length' && !streamer?.stopped ? 'length' : 'stop',
    };
  } finally {
    aborts.release(stopper);
  }
}
