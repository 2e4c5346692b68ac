/**
 * JSON as Python's json.dumps(x, ensure_ascii=False) writes it: ", " and ": " separators, keys
 * in insertion order, non-ASCII as is. That is the `tojson` filter transformers (and so vLLM)
 * gives chat templates, so tools and tool-call arguments render byte for byte as for Qwen.
 *
 * One difference cannot be avoided: JavaScript has no separate float type, so 1.0 is written
 * "1" where Python would write "1.0" for a float.
 */
import { invalidArg } from '../errors.js';

export function pythonJsonDumps(value: unknown, field: string): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw invalidArg(field, `is ${value}`, 'JSON has no NaN or Infinity; use a finite number or null');
      return JSON.stringify(value);
    case 'string':
      // Escapes the same characters as Python's ensure_ascii=False: " \ and U+0000..U+001F.
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) {
        return `[${value.map((item, i) => (item === undefined ? 'null' : pythonJsonDumps(item, `${field}[${i}]`))).join(', ')}]`;
      }
      const entries = Object.entries(value as Record<string, unknown>)
        .filter(([, item]) => item !== undefined)
        .map(([key, item]) => `${JSON.stringify(key)}: ${pythonJsonDumps(item, `${field}.${key}`)}`);
      return `{${entries.join(', ')}}`;
    }
    default:
      throw invalidArg(field, `is a ${typeof value}`, 'only JSON values (objects, arrays, strings, numbers, booleans, null) can be rendered');
  }
}
