/**
 * Qwen3's ChatML chat template rendered straight to token ids, with the mask of the tokens the
 * policy is trained on, instead of through Jinja. The text is what Qwen3's chat_template (in
 * its tokenizer_config.json) gives under transformers' apply_chat_template, with one deliberate
 * difference:
 *
 *   Assistant turns are written verbatim. Qwen3's template drops the <think>...</think> of
 *   assistant turns before the last user query, and gives the last turn an empty think block
 *   when it has none. RL trains on the tokens the model sampled, so they must stay exactly as
 *   sampled, and a conversation must render the same built turn by turn as all at once. For
 *   the same reason, with enableThinking: false every assistant turn opens with the
 *   "<think>\n\n</think>\n\n" that its generation prompt gave it, not only the last one.
 *
 * Each piece of text is tokenized on its own and the ids concatenated. Pieces meet at added
 * tokens (<|im_start|>, <|im_end|>, <tool_response>, ...), where HF's tokenizer cuts the text
 * anyway, so the ids equal those of encoding the whole rendered string, but for one seam: the
 * "\n" that ends the assistant header and an assistant body that starts with whitespace, which
 * BPE may merge in a whole-string encoding. There ours are the ids the model actually saw: the
 * generation prompt's, then those it sampled.
 */
import { invalidArg } from '../errors.js';
import type { JsonToolCall } from '../types/tool-call.js';
import { optionsParser } from '../schema.js';
import { pythonJsonDumps } from './python-json.js';
import type { Tokenizer } from '../types/tokenizer.js';
import { formatToolCall } from './tool-calls.js';


export const CHAT_ROLES = ['system', 'user', 'assistant', 'tool'] as const;
export type ChatRole = (typeof CHAT_ROLES)[number];

/** A chat message in OpenAI's shape; lib/env's ChatMessage is one. */
export interface ChatMessage {
  role: ChatRole;
  /** null only for an assistant turn made of tool calls. */
  content: string | null;
  /** Assistant only: rendered after the content as Qwen's <tool_call> blocks. */
  tool_calls?: readonly JsonToolCall[];
  /**
   * Assistant only: the ids the model sampled for this turn, its final <|im_end|> included when
   * it produced one. They are the turn's tokens as they are (never re-tokenized), and content
   * and tool_calls are then not rendered.
   */
  tokenIds?: ArrayLike<number>;
  /** Tool only: taken for OpenAI compatibility; Qwen's template does not show it. */
  tool_call_id?: string;
}

/** An OpenAI chat-completions tool entry. */
export interface ToolDefinition {
  type: 'function';
  function: { name: string; description?: string; parameters?: object };
}

export interface ChatTemplateOptions {
  /** Tool definitions, listed in the system turn one JSON per line, as Qwen3 does. */
  tools?: readonly ToolDefinition[] | readonly object[];
  /** false: Qwen3's non-thinking mode; assistant turns open with an empty think block. Default true. */
  enableThinking?: boolean;
}

export interface RenderOptions extends ChatTemplateOptions {
  /** End with the generation prompt, "<|im_start|>assistant\n". Default false. */
  addGenerationPrompt?: boolean;
}

export interface RenderedChat {
  ids: Int32Array;
  /** 1 on the tokens the policy is trained on: assistant content and its closing <|im_end|>. */
  mask: Uint8Array;
}

const TEMPLATE_PROPERTIES = {
  tools: {
    type: 'array',
    items: {
      type: 'object',
      required: ['function'],
      properties: {
        function: { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1 } } },
      },
    },
    default: [],
  },
  enableThinking: { type: 'boolean', default: true },
} as const;
const parseTemplateOptions = optionsParser({
  type: 'object',
  additionalProperties: false,
  properties: TEMPLATE_PROPERTIES,
});
const parseRenderOptions = optionsParser({
  type: 'object',
  additionalProperties: false,
  properties: { ...TEMPLATE_PROPERTIES, addGenerationPrompt: { type: 'boolean', default: false } },
});

const IM_START = '<|im_start|>';
const IM_END = '<|im_end|>';
const EMPTY_THINK = '<think>\n\n</think>\n\n';

function toolsPreamble(toolLines: readonly string[], system: string | undefined): string {
  return (
    `${IM_START}system\n${system === undefined ? '' : `${system}\n\n`}# Tools\n\n` +
    'You may call one or more functions to assist with the user query.\n\n' +
    'You are provided with function signatures within <tools></tools> XML tags:\n<tools>' +
    toolLines.map((line) => `\n${line}`).join('') +
    '\n</tools>\n\nFor each function call, return a json object with function name and arguments within ' +
    '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n' +
    `</tool_call>${IM_END}\n`
  );
}

/** One message, checked and turned into what it adds. */
type Prepared =
  | { role: 'system' | 'user' | 'tool'; content: string }
  | { role: 'assistant'; body: string }
  | { role: 'assistant'; ids: number[] };

/**
 * A conversation rendered turn by turn, for an agent loop: append messages as they come, call
 * generationPrompt() before sampling, then append the sampled reply (with its tokenIds). The
 * ids and mask always equal renderChat() of the same messages.
 */
export class ChatRenderer {
  readonly #tokenizer: Tokenizer;
  readonly #sampledIds: number;
  readonly #toolLines: readonly string[];
  readonly #assistantHeader: string;
  readonly #imEnd: number;
  readonly #ids: number[] = [];
  readonly #mask: number[] = [];
  #messages = 0;
  /** Consecutive tool messages share one user turn; it is closed when something else comes. */
  #toolTurnOpen = false;
  #awaitingReply = false;

  /**
   * `sampledIds`: assistant tokenIds are a model's own samples, ids below its vocabulary, which
   * may be padded past the tokenizer's (AgentPolicy.vocabSize); other ids are the tokenizer's.
   */
  constructor(tokenizer: Tokenizer, options: ChatTemplateOptions = {}, sampledIds = tokenizer.vocabSize) {
    const { tools, enableThinking } = parseTemplateOptions(options, 'options');
    for (const token of [IM_START, IM_END]) {
      if (tokenizer.specialTokens[token] === undefined) {
        throw invalidArg('tokenizer', `has no ${token} token`, 'ChatML needs <|im_start|> and <|im_end|> as added tokens: use a Qwen tokenizer or ByteTokenizer');
      }
    }
    this.#tokenizer = tokenizer;
    this.#sampledIds = sampledIds;
    this.#imEnd = tokenizer.specialTokens[IM_END]!;
    this.#toolLines = tools.map((tool, i) => pythonJsonDumps(tool, `options.tools[${i}]`));
    this.#assistantHeader = `${IM_START}assistant\n${enableThinking ? '' : EMPTY_THINK}`;
  }

  /** Tokens so far. */
  get length(): number {
    return this.#ids.length + (this.#toolTurnOpen ? this.#toolTurnEnd().length : 0);
  }

  /** The conversation so far, as if it ended here (an open tool turn is shown closed). */
  get ids(): Int32Array {
    const out = Int32Array.from(this.#ids);
    return this.#toolTurnOpen ? concat(out, Int32Array.from(this.#toolTurnEnd())) : out;
  }

  get mask(): Uint8Array {
    const out = Uint8Array.from(this.#mask);
    return this.#toolTurnOpen ? concat(out, new Uint8Array(this.#toolTurnEnd().length)) : out;
  }

  /**
   * Appends messages; consecutive tool messages become one user turn of <tool_response>
   * blocks, as in Qwen3. Every message is checked before any is added, so a bad one leaves the
   * renderer as it was.
   */
  append(...messages: ChatMessage[]): this {
    const prepared = messages.map((message, i) => this.#prepare(message, this.#messages + i, i === 0 && this.#awaitingReply));
    for (const message of prepared) this.#add(message);
    return this;
  }

  /** Appends "<|im_start|>assistant\n" (untrained); the next message must be the reply. */
  generationPrompt(): this {
    if (this.#awaitingReply) {
      throw invalidArg('generationPrompt()', 'was called twice in a row', 'append the assistant reply before the next prompt');
    }
    this.#startOfConversation();
    this.#closeToolTurn();
    this.#push(this.#assistantHeader, 0);
    this.#awaitingReply = true;
    return this;
  }

  #prepare(message: ChatMessage, index: number, mustBeReply: boolean): Prepared {
    const field = `messages[${index}]`;
    if (typeof message !== 'object' || message === null) {
      throw invalidArg(field, 'is not a message', 'pass objects like {role: "user", content: "..."}');
    }
    const { role } = message;
    if (!(CHAT_ROLES as readonly unknown[]).includes(role)) {
      throw invalidArg(`${field}.role`, `is ${JSON.stringify(role)}`, `use one of ${CHAT_ROLES.map((r) => `"${r}"`).join(', ')}`);
    }
    if (mustBeReply && role !== 'assistant') {
      throw invalidArg(`${field}.role`, `is "${role}" right after the generation prompt`, 'append the assistant reply first');
    }
    if (role !== 'assistant') {
      for (const key of ['tool_calls', 'tokenIds'] as const) {
        if (message[key] !== undefined) throw invalidArg(`${field}.${key}`, `is set on a ${role} message`, 'only assistant messages have it');
      }
      if (typeof message.content !== 'string') throw invalidArg(`${field}.content`, 'must be a string');
      return { role, content: message.content };
    }
    if (message.tokenIds !== undefined) return { role, ids: this.#checkIds(message.tokenIds, `${field}.tokenIds`) };
    const { content, tool_calls: calls } = message;
    if (content !== null && content !== undefined && typeof content !== 'string') {
      throw invalidArg(`${field}.content`, 'must be a string or null');
    }
    if (calls !== undefined && !Array.isArray(calls)) throw invalidArg(`${field}.tool_calls`, 'must be an array');
    let body = content ?? '';
    (calls ?? []).forEach((call, i) => {
      // Qwen3: a newline before each call, except a first call with no content before it.
      if (i > 0 || body !== '') body += '\n';
      body += formatToolCall(call, `${field}.tool_calls[${i}]`);
    });
    return { role, body };
  }

  #checkIds(ids: ArrayLike<number>, field: string): number[] {
    if (typeof ids !== 'object' || ids === null || typeof ids.length !== 'number') {
      throw invalidArg(field, 'must be an array of token ids');
    }
    const vocabSize = this.#sampledIds;
    return Array.from(ids, (id, i) => {
      if (!Number.isInteger(id) || id < 0 || id >= vocabSize) {
        throw invalidArg(`${field}[${i}]`, `is ${id}`, `token ids are integers in [0, ${vocabSize})`);
      }
      return id;
    });
  }

  #add(message: Prepared): void {
    if (this.#messages === 0 && message.role === 'system' && this.#toolLines.length > 0) {
      this.#push(toolsPreamble(this.#toolLines, message.content), 0);
      this.#messages++;
      return;
    }
    this.#startOfConversation();
    this.#messages++;
    if (message.role === 'tool') {
      const open = this.#toolTurnOpen ? '' : `${IM_START}user`;
      this.#push(`${open}\n<tool_response>\n${message.content}\n</tool_response>`, 0);
      this.#toolTurnOpen = true;
      return;
    }
    this.#closeToolTurn();
    if (message.role !== 'assistant') {
      this.#push(`${IM_START}${message.role}\n${message.content}${IM_END}\n`, 0);
      return;
    }
    if (!this.#awaitingReply) this.#push(this.#assistantHeader, 0);
    this.#awaitingReply = false;
    if ('ids' in message) {
      for (const id of message.ids) this.#pushId(id, 1);
      // A turn cut short (max tokens) still needs closing, but the model did not sample the
      // <|im_end|> that closes it, so it is not trained on.
      if (message.ids.at(-1) !== this.#imEnd) this.#pushId(this.#imEnd, 0);
    } else {
      this.#push(message.body, 1);
      this.#pushId(this.#imEnd, 1);
    }
    this.#push('\n', 0);
  }

  /** Qwen3 lists the tools in a system turn of their own when the conversation has none. */
  #startOfConversation(): void {
    if (this.#messages === 0 && this.#ids.length === 0 && this.#toolLines.length > 0) {
      this.#push(toolsPreamble(this.#toolLines, undefined), 0);
    }
  }

  #toolTurnEnd(): number[] {
    return this.#tokenizer.encode(`${IM_END}\n`);
  }

  #closeToolTurn(): void {
    if (!this.#toolTurnOpen) return;
    for (const id of this.#toolTurnEnd()) this.#pushId(id, 0);
    this.#toolTurnOpen = false;
  }

  #push(text: string, mask: 0 | 1): void {
    for (const id of this.#tokenizer.encode(text)) this.#pushId(id, mask);
  }

  #pushId(id: number, mask: 0 | 1): void {
    this.#ids.push(id);
    this.#mask.push(mask);
  }
}

function concat<T extends Int32Array | Uint8Array>(a: T, b: T): T {
  const out = new (a.constructor as new (n: number) => T)(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/**
 * The conversation as Qwen3's template renders it (see the top of this file for the one
 * difference), as token ids and the mask of trained tokens: 1 exactly on assistant content
 * (sampled tokenIds, or the tokenized content and tool calls) and the <|im_end|> closing it;
 * 0 on the "<|im_start|>assistant\n" header, the "\n" after <|im_end|>, every system, user and
 * tool token, and the generation prompt.
 */
export function renderChat(tokenizer: Tokenizer, messages: readonly ChatMessage[], options: RenderOptions = {}): RenderedChat {
  const { addGenerationPrompt, ...templateOptions } = parseRenderOptions(options, 'options');
  if (!Array.isArray(messages)) throw invalidArg('messages', 'must be an array of chat messages');
  const renderer = new ChatRenderer(tokenizer, templateOptions).append(...messages);
  if (addGenerationPrompt) renderer.generationPrompt();
  return { ids: renderer.ids, mask: renderer.mask };
}
