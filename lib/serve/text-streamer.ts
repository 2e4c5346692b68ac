/**
 * Sampled tokens to text as they arrive: stop strings (the text ends before the first one, as
 * OpenAI's API does) and streaming deltas that never split a UTF-8 character or show the
 * start of a stop string that may yet complete. Special tokens are left out of the text, as
 * vLLM does by default; token ids and logprobs carry every sampled token.
 *
 * Each token decodes only a short window (vLLM's incremental detokenizing): decoding every
 * token's whole completion again made an 8000-token answer cost 5.7 s of the event loop.
 */
import type { Tokenizer } from '../types/tokenizer.js';

export interface TextDelta {
  text: string;
  tokens: number[];
  logprobs: number[];
}

/**
 * Tokens waiting for a character to complete (or decoding to nothing, as skipped special
 * tokens do) are committed anyway past this many: a UTF-8 character spans at most 4 tokens, so
 * only invalid bytes wait that long, and the window (the cost of each token) stays bounded
 * whatever the model samples.
 */
const MAX_PENDING_TOKENS = 16;

export class TextStreamer {
  private readonly tokens: number[] = [];
  private readonly logprobs: number[] = [];
  /** tokens[prefixStart, readStart) were decoded already; they are the context of the next window. */
  private prefixStart = 0;
  private readStart = 0;
  private emittedText = 0;
  private emittedTokens = 0;
  private readonly holdBack: number;
  /** A stop string was found: the text is final. */
  stopped = false;
  /** The text so far (final once stopped or finished). */
  text = '';

  constructor(
    private readonly tokenizer: Tokenizer,
    private readonly stops: readonly string[],
  ) {
    this.holdBack = Math.max(0, ...stops.map((s) => s.length - 1));
  }

  push(token: number, logprob: number): TextDelta {
    if (this.stopped) return { text: '', tokens: [], logprobs: [] };
    this.tokens.push(token);
    this.logprobs.push(logprob);
    this.append(this.decodeNew(false));
    return this.delta(this.stopped ? this.text.length : Math.max(this.text.length - this.holdBack, this.emittedText));
  }

  /** What is left once the generation has ended: tokens still waiting for a character too. */
  finish(): TextDelta {
    if (!this.stopped) this.append(this.decodeNew(true));
    return this.delta(this.text.length);
  }

  /**
   * The text the tokens since readStart add, once it ends on a whole character ('' until then,
   * and for tokens that decode to nothing, such as skipped special tokens).
   */
  private decodeNew(force: boolean): string {
    const decode = (end: number) => this.tokenizer.decode(this.tokens.slice(this.prefixStart, end), { skipSpecialTokens: true });
    const before = decode(this.readStart);
    const after = decode(this.tokens.length);
    const complete = after.length > before.length && !after.endsWith('\ufffd');
    if (!complete && !force && this.tokens.length - this.readStart < MAX_PENDING_TOKENS) return '';
    this.prefixStart = this.readStart;
    this.readStart = this.tokens.length;
    return after.slice(before.length);
  }

  /** Adds decoded text, ending it before the first stop string that it completes. */
  private append(added: string): void {
    if (added === '') return;
    const from = Math.max(0, this.text.length - this.holdBack);
    this.text += added;
    const cut = this.firstStop(from);
    if (cut >= 0) {
      this.stopped = true;
      this.text = this.text.slice(0, cut);
    }
  }

  private firstStop(from: number): number {
    let cut = -1;
    for (const stop of this.stops) {
      const at = this.text.indexOf(stop, from);
      if (at >= 0 && (cut < 0 || at < cut)) cut = at;
    }
    return cut;
  }

  private delta(textEnd: number): TextDelta {
    const out = {
      text: this.text.slice(this.emittedText, textEnd),
      tokens: this.tokens.slice(this.emittedTokens),
      logprobs: this.logprobs.slice(this.emittedTokens),
    };
    this.emittedText = Math.max(this.emittedText, textEnd);
    this.emittedTokens = this.tokens.length;
    return out;
  }
}
