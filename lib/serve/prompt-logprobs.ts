/**
 * The prompt's own logprobs, as vLLM (`prompt_logprobs: 0` on /v1/completions) and SGLang
 * (`return_logprob` with `logprob_start_len` on /generate) return them: every prompt token's
 * logprob given those before it, at temperature 1, from the served policy's forward
 * (NativePolicy.logprobs: the same numbers the trainer computes), whatever the request's
 * sampling temperature. Clients score given text this way (RemotePolicy.logprobs).
 */
import type { Tokenizer } from '../types/tokenizer.js';

/** vLLM's Logprob. rank is null: the forward gives the token's logprob, not its place in the vocabulary. */
interface VllmLogprob {
  logprob: number;
  rank: null;
  decoded_token: string;
}

/** vLLM's choices[i].prompt_logprobs: null first, then per token {"<its id>": {logprob, rank, decoded_token}}. */
export function vllmPromptLogprobs(tokenizer: Tokenizer, prompt: Int32Array, logprobs: Float32Array): (Record<string, VllmLogprob> | null)[] {
  return Array.from(prompt, (id, i) => (i === 0 ? null : { [String(id)]: { logprob: logprobs[i]!, rank: null, decoded_token: tokenizer.decode([id]) } }));
}

/** SGLang's meta_info.input_token_logprobs from position `start`: [logprob, id, null] per token, the first logprob null as SGLang's. */
export function sglangInputTokenLogprobs(prompt: Int32Array, logprobs: Float32Array, start: number): [number | null, number, null][] {
  return Array.from(prompt.subarray(start), (id, j) => [j === 0 ? null : logprobs[start + j]!, id, null]);
}
