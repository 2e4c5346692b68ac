/**
 * Chat-format JSONL as SFT examples: one conversation per line, `{"messages": [...]}` with
 * system, user, assistant (content and/or OpenAI `tool_calls`) and tool turns, and an optional
 * `tools` array (OpenAI's fine-tuning format, as SWE-smith and SWE-Gym ship their
 * trajectories). Rendered with swerl's Qwen3 chat template and the model's tokenizer; the mask
 * is exactly the assistant turns' tokens (content, tool calls, the closing <|im_end|>), which are
 * the tokens the agent loop has the policy sample after each "<|im_start|>assistant\n" prompt.
 * An assistant message with `"weight": 0` (OpenAI's field) stays in the context untrained.
 */
import { SwerlError, invalidArg } from '../../errors.js';
import { CHAT_ROLES, ChatRenderer, type ChatMessage } from '../../model/chat-template.js';
import type { JsonToolCall } from '../../types/tool-call.js';
import type { Tokenizer } from '../../types/tokenizer.js';
import type { SftExample } from './example.js';
import { jsonLines } from './lines.js';

export interface ChatRenderSettings {
  tokenizer: Tokenizer;
  /** Qwen3's thinking mode, as the agent loop renders (config.rollout.enableThinking). */
  enableThinking: boolean;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** OpenAI content: a string, or a list of text parts (joined); null only where a message may have none. */
function contentText(value: unknown, field: string, nullable: boolean): string | null {
  if (typeof value === 'string') return value;
  if ((value === null || value === undefined) && nullable) return null;
  if (Array.isArray(value)) {
    return value
      .map((part: unknown, i) => {
        if (!isObject(part) || part.type !== 'text' || typeof part.text !== 'string') throw invalidArg(`${field}[${i}]`, 'is not a text part', 'content parts must be {"type": "text", "text": "..."}');
        return part.text;
      })
      .join('');
  }
  throw invalidArg(field, `is ${value === null ? 'null' : typeof value}`, nullable ? 'give a string, a list of text parts, or null with tool_calls' : 'give a string or a list of text parts');
}

/** One message of a line, checked and in the chat template's shape; `weight` 0 marks an untrained assistant turn. */
function readMessage(value: unknown, field: string): { message: ChatMessage; trained: boolean } {
  if (!isObject(value)) throw invalidArg(field, 'is not a message object', 'messages look like {"role": "user", "content": "..."}');
  const role = value.role;
  if (typeof role !== 'string' || !(CHAT_ROLES as readonly string[]).includes(role))
    throw invalidArg(`${field}.role`, `is ${JSON.stringify(role)}`, `use one of ${CHAT_ROLES.map((r) => `"${r}"`).join(', ')}`);
  if (value.reasoning_content !== undefined)
    throw invalidArg(`${field}.reasoning_content`, 'is not rendered by this template', 'put the thinking in content as <think>...</think> before the answer');
  if (value.weight !== undefined) {
    if (role !== 'assistant') throw invalidArg(`${field}.weight`, `is set on a ${role} message`, 'only assistant turns are trained, so only they take a weight');
    if (value.weight !== 0 && value.weight !== 1) throw invalidArg(`${field}.weight`, `is ${JSON.stringify(value.weight)}`, 'use 0 (in the context, not trained) or 1');
  }
  if (role !== 'assistant') return { message: { role: role as ChatMessage['role'], content: contentText(value.content, `${field}.content`, false) }, trained: false };
  const calls = value.tool_calls;
  if (calls !== undefined && calls !== null && !Array.isArray(calls)) throw invalidArg(`${field}.tool_calls`, 'must be an array of tool calls');
  const toolCalls = (calls ?? []) as JsonToolCall[];
  const content = contentText(value.content, `${field}.content`, true);
  if (content === null && toolCalls.length === 0) throw invalidArg(`${field}.content`, 'is missing and the turn has no tool_calls', 'an assistant turn says something or calls a tool');
  return { message: { role: 'assistant', content, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) }, trained: value.weight !== 0 };
}

/** A SwerlError of the template (`messages[3].tool_calls[0]...`) with the file and line in front. */
function located(error: unknown, where: string): unknown {
  if (!(error instanceof SwerlError)) return error;
  return new SwerlError(error.code, `${where} ${error.message.replace(/^options\./, '')}`);
}

/** One conversation as ids and the mask of its trained assistant turns; `where` (file:line) prefixes every error. */
export function chatExample(record: unknown, settings: ChatRenderSettings, where: string, source: string): SftExample {
  try {
    if (!isObject(record)) throw invalidArg('line', 'is not a JSON object', 'one {"messages": [...]} per line');
    if (!Array.isArray(record.messages) || record.messages.length === 0)
      throw invalidArg('messages', record.messages === undefined ? 'is missing' : 'must be a non-empty array', 'one {"messages": [...]} per line');
    if (record.tools !== undefined && !Array.isArray(record.tools)) throw invalidArg('tools', 'must be an array of OpenAI tool definitions');
    const read = record.messages.map((m: unknown, i) => readMessage(m, `messages[${i}]`));
    const renderer = new ChatRenderer(settings.tokenizer, { enableThinking: settings.enableThinking, ...(record.tools ? { tools: record.tools as object[] } : {}) });
    const untrained: [number, number][] = [];
    for (const { message, trained } of read) {
      const before = renderer.length;
      renderer.append(message);
      if (message.role === 'assistant' && !trained) untrained.push([before, renderer.length]);
    }
    const mask = renderer.mask;
    for (const [from, to] of untrained) mask.fill(0, from, to);
    if (!mask.includes(1)) throw invalidArg('messages', 'has no assistant turn to train on', 'each line needs at least one assistant message (with weight 1, or none)');
    return { tokens: renderer.ids, mask, source, id: where };
  } catch (error) {
    throw located(error, where);
  }
}

/** Every conversation of a chat JSONL file (plain or gzipped); ids are `file:line`. */
export async function loadChatFile(file: string, settings: ChatRenderSettings): Promise<SftExample[]> {
  const examples: SftExample[] = [];
  for await (const { line, value } of jsonLines(file)) examples.push(chatExample(value, settings, `${file}:${line}`, file));
  return examples;
}
