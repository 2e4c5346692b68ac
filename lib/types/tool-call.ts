/** An OpenAI chat-completions tool call: what a chat-style policy emits and an env parses. */
export interface JsonToolCall {
  type?: 'function';
  id?: string;
  function: { name: string; arguments: string | Record<string, unknown> };
}
