/**
 * The agent's action grammar (docs/swe-env.md, "The action grammar"): R2E-Gym's text calls
 *
 *   <function=NAME>
 *   <parameter=KEY>VALUE</parameter>
 *   </function>
 *
 * and OpenAI-style JSON tool calls for chat policies. Only the first call of a turn counts.
 */
import { invalidArg } from '../errors.js';
import type { JsonToolCall } from '../types/tool-call.js';
import { assertJsonDepth } from '../util/json-depth.js';

export interface Action {
  /** The tool's name, e.g. "execute_bash". */
  name: string;
  /** Every argument as a string, whitespace-trimmed; a repeated key keeps its last value. */
  args: Record<string, string>;
}

const FUNCTION_TAG = '<function';
const FUNCTION_CLOSE = '</function>';
const PARAMETER_TAG = '<parameter';
const PARAMETER_CLOSE = '</parameter>';

function isSpace(ch: string | undefined): boolean {
  return ch !== undefined && /\s/.test(ch);
}

interface OpenTag {
  /** The trimmed text between `=` and `>`. */
  value: string;
  /** Where the text after the tag's `>` starts. */
  end: number;
}

/**
 * The first `<TAG\s*=...>` at or after `from`: `<TAG`, optional whitespace, `=`, then
 * everything up to the next `>`. Scanned with indexOf, never a backtracking regex: a model can
 * write `<function=` and thousands of spaces with no `>`, and a regex would take minutes on it
 * while the event loop (and every timeout) waits.
 */
function findOpenTag(text: string, tag: string, from: number): OpenTag | null {
  for (let at = text.indexOf(tag, from); at >= 0; at = text.indexOf(tag, at + 1)) {
    let eq = at + tag.length;
    while (isSpace(text[eq])) eq++;
    if (text[eq] !== '=') continue;
    const close = text.indexOf('>', eq + 1);
    // No `>` after this tag means none after any later one either.
    if (close < 0) return null;
    return { value: text.slice(eq + 1, close).trim(), end: close + 1 };
  }
  return null;
}

/**
 * The first `<function=...>` call in a model's response, or null when it has none. Text after
 * the call's `</function>` is ignored. A call with no `</function>` runs to the end of the
 * response (samplers often stop on `</function>` and leave it out). Linear in the response.
 */
export function parseTextAction(response: string): Action | null {
  const open = findOpenTag(response, FUNCTION_TAG, 0);
  if (!open || open.value === '') return null;
  const close = response.indexOf(FUNCTION_CLOSE, open.end);
  const body = response.slice(open.end, close < 0 ? undefined : close);
  const args: Record<string, string> = {};
  for (let at = 0; ;) {
    const parameter = findOpenTag(body, PARAMETER_TAG, at);
    if (!parameter) break;
    const end = body.indexOf(PARAMETER_CLOSE, parameter.end);
    // An unclosed <parameter=...> is not a parameter, and no later one can close either.
    if (end < 0) break;
    args[parameter.value] = body.slice(parameter.end, end).trim();
    at = end + PARAMETER_CLOSE.length;
  }
  return { name: open.value, args };
}

/**
 * A call as a text-mode agent writes it, a line per parameter: what parseTextAction reads back
 * (values are trimmed there, so a value may carry its own newlines, as bash commands do).
 */
export function formatTextAction(name: string, args: Readonly<Record<string, string>>): string {
  const parameters = Object.entries(args).map(([key, value]) => `${PARAMETER_TAG}=${key}>${value}${PARAMETER_CLOSE}`);
  return [`${FUNCTION_TAG}=${name}>`, ...parameters, FUNCTION_CLOSE].join('\n');
}

/**
 * How many `<function=NAME>` calls a response holds (NAME non-empty): a turn must make one.
 * A call's body is skipped up to its `</function>`, so a command that mentions `<function=`
 * (a grep for it) is not a second call; a call left unclosed runs to the end. Linear in the
 * response, like parseTextAction.
 */
export function countTextCalls(response: string): number {
  let count = 0;
  for (let at = 0; ;) {
    const open = findOpenTag(response, FUNCTION_TAG, at);
    if (!open) return count;
    if (open.value === '') {
      at = open.end;
      continue;
    }
    count++;
    const close = response.indexOf(FUNCTION_CLOSE, open.end);
    if (close < 0) return count;
    at = close + FUNCTION_CLOSE.length;
  }
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
  assertJsonDepth(raw, 'tool_calls[0].function.arguments');
  const args: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (value === undefined || value === null) continue;
    args[key] = (typeof value === 'object' ? JSON.stringify(value) : String(value)).trim();
  }
  return { name: first.function.name, args };
}
