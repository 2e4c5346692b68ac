/**
 * Sampled tokens to text as they arrive: stop strings (the text ends before the first one, as
 * OpenAI's API does) and streaming deltas that never split a UTF-8 character or show the
 * start of a stop string that may yet complete. Special tokens are left out of the text, as
 * vLLM does by default; token ids and logprobs carry every sampled token.
 */
import type { Tokenizer } from '../policy/tokenizer.js';

export interface TextDelta {
  text: string;
  tokens: number[];
  logprobs: number[];
}

export class TextStreamer {
  private readonly tokens: number[] = [];
  private readonly logprobs: number[] = [];
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
    const full = this.tokenizer.decode(this.tokens, { skipSpecialTokens: true });
    const from = Math.max(0, this.emittedText - this.holdBack);
    let cut = -1;
    for (const stop of this.stops) {
      const at = full.indexOf(stop, from);
      if (at >= 0 && (cut < 0 || at < cut)) cut = at;
    }
    if (cut >= 0) {
      this.stopped = true;
      this.text = full.slice(0, cut);
      return this.delta(this.text.length);
    }
    this.text = full;
    let end = full.length - this.holdBack;
    while (end > this.emittedText && full.charCodeAt(end - 1) === 0xfffd) --end;  // a character cut short
    return this.delta(Math.max(end, this.emittedText));
  }

  /** What is left once the generation has ended. */
  finish(): TextDelta {
    return this.delta(this.text.length);
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
