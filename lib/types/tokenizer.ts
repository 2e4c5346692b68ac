/**
 * The tokenizer contract: text to ids and back, the added tokens (ChatML's <|im_start|>,
 * <|im_end|>, <tool_call>, ...), and the files that reproduce it in a saved model directory.
 * Two implementations live with the model: loadTokenizer(dir) (lib/model/hf-tokenizer.ts) for
 * a Hugging Face tokenizer.json, and ByteTokenizer (lib/model/byte-tokenizer.ts), raw UTF-8
 * bytes plus ChatML's tokens, for tiny models trained from scratch.
 */
export interface DecodeOptions {
  /** Leave out the added tokens marked special (<|im_start|>, <|im_end|>, ...), as HF does. Default false. */
  skipSpecialTokens?: boolean;
}

export interface Tokenizer {
  /**
   * How many ids the tokenizer can produce, added tokens included (max id + 1). A model's
   * embedding may be larger (Qwen3 pads 151669 to 151936); ids past this decode to nothing.
   */
  readonly vocabSize: number;

  /**
   * Text to ids, adding no BOS/EOS. As in Hugging Face tokenizers (and so in transformers and
   * vLLM), an added token's text inside `text` becomes that token's id: "<|im_end|>" in a tool's
   * output is the real end-of-turn token, not its characters. Callers that must not let text
   * forge turns have to escape it before rendering.
   */
  encode(text: string): number[];

  /**
   * Ids to text. Invalid UTF-8 (a sampled multi-byte character cut short, say) decodes to U+FFFD
   * and never throws; ids the tokenizer does not have decode to nothing, as in HF.
   */
  decode(ids: ArrayLike<number>, options?: DecodeOptions): string;

  /** The id of a vocabulary entry (byte-level spelling for BPE pieces) or an added token. */
  tokenId(token: string): number | undefined;

  /**
   * Every added token, text to id: the strings encode() always turns into that one id. HF calls
   * some of them special (<|im_end|>) and some not (<tool_call>, <think>); both kinds are here.
   */
  readonly specialTokens: Readonly<Record<string, number>>;

  /** The ids that end an assistant turn: the configured eos_token, and ChatML's <|im_end|>. */
  readonly eosTokenIds: readonly number[];

  /**
   * File name to contents for a model directory (tokenizer.json, tokenizer_config.json) that
   * loadTokenizer, transformers and vLLM load back as this same tokenizer.
   */
  toFiles(): Record<string, string>;
}
