/**
 * OpenAI's routes: /v1/completions (prompts as text or token ids; choices carry token_ids and
 * the sampled tokens' logprobs, and with vLLM's prompt_logprobs: 0 the prompt tokens') and
 * /v1/chat/completions (the chat template, `tools` rendered into the system turn and
 * <tool_call> blocks parsed back into tool_calls), each as one JSON answer or server-sent events.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';

import { parseToolCalls } from '../model/tool-calls.js';
import type { NativePolicy } from '../model/native-policy.js';
import { generateChoice, type ChoiceAborts, type Completion } from './choices.js';
import { EventStream, sendJson } from './http.js';
import { vllmPromptLogprobs } from './prompt-logprobs.js';
import type { ChatRequest, CompletionRequest } from './requests.js';

/** What the OpenAI routes answer from: the policy, and the model id clients name. */
export interface ServedModel {
  policy: NativePolicy;
  modelName: string;
}

export const now = () => Math.floor(Date.now() / 1000);

function usage(results: { done: Completion; prompt: Int32Array }[]) {
  const promptTokens = [...new Set(results.map((r) => r.prompt))].reduce((a, p) => a + p.length, 0);
  const completionTokens = results.reduce((a, r) => a + r.done.tokens.length, 0);
  return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
}

function completionLogprobs({ policy }: ServedModel, tokens: number[], logprobs: number[], asIds: boolean, offset: number) {
  const strings = tokens.map((t) => (asIds ? `token_id:${t}` : policy.tokenizer.decode([t])));
  const textOffset: number[] = [];
  let at = offset;
  for (const s of strings) {
    textOffset.push(at);
    at += s.length;
  }
  return { tokens: strings, token_logprobs: logprobs, top_logprobs: null, text_offset: textOffset };
}

export async function completions(served: ServedModel, res: ServerResponse, r: CompletionRequest, aborts: ChoiceAborts): Promise<void> {
  const { policy, modelName } = served;
  const s = r.sampling;
  const id = `cmpl-${randomUUID()}`;
  const jobs = r.prompts.flatMap((prompt, p) => Array.from({ length: s.n }, (_, k) => ({ prompt, index: p * s.n + k })));
  const logprobsOf = (tokens: number[], logprobs: number[], offset: number) =>
    r.logprobs ? completionLogprobs(served, tokens, logprobs, r.tokensAsIds, offset) : null;

  if (r.stream) {
    const stream = new EventStream(res);
    const chunk = (index: number, text: string, extra: object) => ({ id, object: 'text_completion', created: now(), model: modelName, choices: [{ index, text, ...extra }] });
    const results = await Promise.all(
      jobs.map(async ({ prompt, index }) => {
        let offset = 0;
        const done = await generateChoice(policy, prompt, s, index, aborts, (d) => {
          stream.send(chunk(index, d.text, { logprobs: logprobsOf(d.tokens, d.logprobs, offset), token_ids: d.tokens, finish_reason: null }));
          offset += d.text.length;
        });
        stream.send(chunk(index, '', { logprobs: null, token_ids: [], finish_reason: done.finishReason }));
        return { done, prompt };
      }),
    );
    if (r.includeUsage) stream.send({ id, object: 'text_completion', created: now(), model: modelName, choices: [], usage: usage(results) });
    stream.end();
    return;
  }
  // The prompts' forward runs beside their generations; its answer is shared by a prompt's n choices.
  const [results, scored] = await Promise.all([
    Promise.all(jobs.map(async ({ prompt, index }) => ({ done: await generateChoice(policy, prompt, s, index, aborts), prompt, index }))),
    r.promptLogprobs ? policy.logprobs(r.prompts) : undefined,
  ]);
  const promptLogprobs = scored?.map((logprobs, p) => vllmPromptLogprobs(policy.tokenizer, r.prompts[p]!, logprobs));
  sendJson(res, 200, {
    id,
    object: 'text_completion',
    created: now(),
    model: modelName,
    choices: results.map(({ done, prompt, index }) => ({
      index,
      text: done.text,
      logprobs: logprobsOf(done.tokens, done.logprobs, 0),
      finish_reason: done.finishReason,
      token_ids: done.tokens,
      prompt_token_ids: Array.from(prompt),
      ...(promptLogprobs ? { prompt_logprobs: promptLogprobs[Math.floor(index / s.n)] } : {}),
    })),
    usage: usage(results),
  });
}

function chatMessage(text: string, parseTools: boolean) {
  if (!parseTools) return { role: 'assistant', content: text };
  const parsed = parseToolCalls(text);
  if (parsed.toolCalls.length === 0) return { role: 'assistant', content: text };
  return {
    role: 'assistant',
    content: parsed.content === '' ? null : parsed.content,
    tool_calls: parsed.toolCalls.map((c) => ({
      id: `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`,
      type: 'function',
      function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
    })),
  };
}

function chatLogprobs({ policy }: ServedModel, tokens: number[], logprobs: number[]) {
  return {
    content: tokens.map((t, i) => {
      const token = policy.tokenizer.decode([t]);
      return { token, logprob: logprobs[i]!, bytes: Array.from(Buffer.from(token, 'utf8')), top_logprobs: [] };
    }),
  };
}

export async function chatCompletions(served: ServedModel, res: ServerResponse, r: ChatRequest, aborts: ChoiceAborts): Promise<void> {
  const { policy, modelName } = served;
  const { sampling: s, prompt, parseTools } = r;
  const id = `chatcmpl-${randomUUID()}`;
  const finishOf = (done: Completion, message: { tool_calls?: unknown[] }) => (message.tool_calls ? 'tool_calls' : done.finishReason);
  const logprobsOf = (tokens: number[], logprobs: number[]) => (r.logprobs ? chatLogprobs(served, tokens, logprobs) : null);

  if (r.stream) {
    const stream = new EventStream(res);
    const chunk = (index: number, delta: object, extra: object = {}) => ({ id, object: 'chat.completion.chunk', created: now(), model: modelName, choices: [{ index, delta, logprobs: null, finish_reason: null, ...extra }] });
    const results = await Promise.all(
      Array.from({ length: s.n }, async (_, index) => {
        stream.send(chunk(index, { role: 'assistant', content: '' }));
        // With tools, the text is held until the end: whether it is a tool call is known then.
        const done = await generateChoice(policy, prompt, s, index, aborts, parseTools ? undefined : (d) =>
          stream.send(chunk(index, { content: d.text }, { logprobs: logprobsOf(d.tokens, d.logprobs), token_ids: d.tokens })));
        const message = chatMessage(done.text, parseTools);
        if (parseTools) {
          const { role: _role, ...delta } = message;
          stream.send(chunk(index, delta, { logprobs: logprobsOf(done.tokens, done.logprobs), token_ids: done.tokens }));
        }
        stream.send(chunk(index, {}, { finish_reason: finishOf(done, message) }));
        return { done, prompt };
      }),
    );
    if (r.includeUsage) stream.send({ id, object: 'chat.completion.chunk', created: now(), model: modelName, choices: [], usage: usage(results) });
    stream.end();
    return;
  }
  const results = await Promise.all(Array.from({ length: s.n }, async (_, index) => ({ done: await generateChoice(policy, prompt, s, index, aborts), prompt, index })));
  sendJson(res, 200, {
    id,
    object: 'chat.completion',
    created: now(),
    model: modelName,
    choices: results.map(({ done, index }) => {
      const message = chatMessage(done.text, parseTools);
      return { index, message, logprobs: logprobsOf(done.tokens, done.logprobs), finish_reason: finishOf(done, message), token_ids: done.tokens };
    }),
    prompt_token_ids: Array.from(prompt),
    usage: usage(results),
  });
}
