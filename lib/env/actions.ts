/**
 * The agent's action grammar (specs/swe-env.md, "The action grammar"): R2E-Gym's text calls
 *
 *   <function=NAME>
 *   <parameter=KEY>VALUE</parameter>
 *   </function>
 *
 * and OpenAI-style JSON tool calls for chat policies. Only the first call of a turn counts.
 */
import { invalidArg } from '../errors.js';

export interface Action {
  /** The tool's name, e.g. "execute_bash". */
  name: string;
  /** Every argument as a string, whitespace-trimmed; a repeated key keeps its last value. */
  args: Record<string, string>;
}

const FUNCTION_OPEN = /<function\s*=\s*([^>]*?)\s*>/;
const FUNCTION_CLOSE = '</function>';
const PARAMETER = /<parameter\s*=\s*([^>]*?)\s*>([\s\S]*?)<\/parameter>/g;

/**
 * The first `<function=...>` call in a model's response, or null when it has none. Text after
 * the call's `</function>` is ignored. A call with no `</function>` runs to the end of the
 * response (samplers often stop on `</function>` and leave it out).
 */
export function parseTextAction(response: string): Action | null {
  const open = FUNCTION_OPEN.exec(response);
  if (!open || open[1] === '') return null;
  const bodyStart = open.index + open[0].length;
  const close = response.indexOf(FUNCTION_CLOSE, bodyStart);
  const body = response.slice(bodyStart, close < 0 ? undefined : close);
  const args: Record<string, string> = {};
  for (const [, key, value] of body.matchAll(PARAMETER)) args[key!] = value!.trim();
  return { name: open[1]!, args };
}

/** An OpenAI chat-completions tool call. */
export interface JsonToolCall {
  type?: 'function';
  id?: string;
  function: { name: string; arguments: string | Record<string, unknown> };
}

/**
 * The first of a turn's JSON tool calls as an Action (arguments stringified: objects and
 * arrays as JSON, the rest with String()), or null when there are none. Malformed argument
 * JSON is an error the caller turns into an observation.
 */
export function parseJsonToolCalls(calls: readonly JsonToolCall[] | undefined): Action | null {
  const first = calls?.[0];
  if (!first) return null;
  if (typeof first.function?.name !== 'string' || first.function.name === '') {
    throw invalidArg('tool_calls[0].function.name', 'is missing');
  }
  let raw = first.function.arguments;
  if (typeof raw === 'string') {
    try {
      raw = raw.trim() === '' ? {} : (JSON.parse(raw) as Record<string, unknown>);
    } catch {
      throw invalidArg('tool_calls[0].function.arguments', 'is not valid JSON');
    }
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw invalidArg('tool_calls[0].function.arguments', 'must be a JSON object');
  }
  const args: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (value === undefined || value === null) continue;
    args[key] = (typeof value === 'object' ? JSON.stringify(value) : String(value)).trim();
  }
  return { name: first.function.name, args };
}
