/**
 * Qwen's (Hermes-style) tool calls, <tool_call>\n{"name": ..., "arguments": ...}\n</tool_call>:
 * writing them as Qwen3's chat template does, and reading them back from a model's output.
 */
import { invalidArg } from '../errors.js';
import type { JsonToolCall } from '../types/tool-call.js';
import { MAX_JSON_DEPTH, assertJsonDepth, nestsDeeperThan } from '../util/json-depth.js';
import { pythonJsonDumps } from './python-json.js';

export interface ParsedToolCall {
  name: string;
  /** As the model wrote it: a JSON object normally, whatever JSON value otherwise. */
  arguments: unknown;
}

export interface ParsedToolCalls {
  /** The text before the first <tool_call> less the whitespace before it; all of it when there is no call. */
  content: string;
  toolCalls: ParsedToolCall[];
  /** One line per call that could not be read; the rest are still returned. */
  errors: string[];
}

const OPEN = '<tool_call>';
const CLOSE = '</tool_call>';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The text of one call as Qwen3's template writes it. String arguments go in verbatim (as the
 * template does) once checked to hold a JSON object; object arguments are serialized as
 * Python's json.dumps would.
 */
export function formatToolCall(call: JsonToolCall, field: string): string {
  // Qwen's template also takes a flat {name, arguments}; so do we.
  const fn = (call?.function ?? call) as { name?: unknown; arguments?: unknown } | undefined;
  if (!isPlainObject(fn) || typeof fn.name !== 'string' || fn.name === '') {
    throw invalidArg(`${field}.function.name`, 'is missing', 'give each tool call {function: {name, arguments}}');
  }
  const args = fn.arguments;
  const fix = 'pass an object such as {"path": "a.py"} or a string holding one';
  let argsText: string;
  if (typeof args === 'string') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(args);
    } catch {
      throw invalidArg(`${field}.function.arguments`, 'is a string that is not valid JSON', fix);
    }
    if (!isPlainObject(parsed)) throw invalidArg(`${field}.function.arguments`, 'is a string that does not hold a JSON object', fix);
    argsText = args;
  } else if (isPlainObject(args)) {
    assertJsonDepth(args, `${field}.function.arguments`);
    argsText = pythonJsonDumps(args, `${field}.function.arguments`);
  } else {
    throw invalidArg(`${field}.function.arguments`, `is ${args === null ? 'null' : Array.isArray(args) ? 'an array' : typeof args}, not a JSON object`, fix);
  }
  return `${OPEN}\n{"name": "${fn.name}", "arguments": ${argsText}}\n${CLOSE}`;
}

function readCall(body: string, n: number, closed: boolean): ParsedToolCall | string {
  const where = `tool call ${n}${closed ? '' : ` (no ${CLOSE})`}`;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    return `${where}: invalid JSON (${(error as Error).message})`;
  }
  if (!isPlainObject(value)) return `${where}: expected {"name": ..., "arguments": {...}}`;
  if (nestsDeeperThan(value, MAX_JSON_DEPTH + 1)) return `${where}: arguments nest more than ${MAX_JSON_DEPTH} levels deep`;
  if (typeof value.name !== 'string' || value.name === '') return `${where}: "name" is missing or not a string`;
  return { name: value.name, arguments: value.arguments ?? {} };
}

/**
 * The tool calls in a model's output. Like vLLM's Hermes parser, a last <tool_call> with no
 * </tool_call> (the sampler stopped) is still read, and text after the first call is not
 * content. A call that cannot be read becomes a line in `errors`, never a throw.
 */
export function parseToolCalls(text: string): ParsedToolCalls {
  const first = text.indexOf(OPEN);
  if (first < 0) return { content: text, toolCalls: [], errors: [] };
  const toolCalls: ParsedToolCall[] = [];
  const errors: string[] = [];
  let at = first;
  while (at >= 0) {
    const start = at + OPEN.length;
    const end = text.indexOf(CLOSE, start);
    const closed = end >= 0;
    const call = readCall(text.slice(start, closed ? end : undefined).trim(), toolCalls.length + errors.length + 1, closed);
    if (typeof call === 'string') errors.push(call);
    else toolCalls.push(call);
    at = closed ? text.indexOf(OPEN, end + CLOSE.length) : -1;
  }
  return { content: text.slice(0, first).trimEnd(), toolCalls, errors };
}
