/**
 * How deeply a JSON value nests, found without recursion. JSON.parse takes any depth, but
 * JSON.stringify, structuredClone, ajv and every recursive walk overflow the stack a few
 * thousand levels down (a RangeError naming nothing), so values from models, clients and task
 * files are measured with this first and refused by name.
 */
import { invalidArg } from '../errors.js';

/** Deeper than any real tool call, option object or task row; far below where V8's stack ends. */
export const MAX_JSON_DEPTH = 64;

/** True when `value` nests more than `limit` arrays/objects deep (a scalar has depth 0). */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** Throws ERR_SWERL_INVALID_ARG naming `field` when `value` nests deeper than `limit`. */
export function assertJsonDepth(value: unknown, field: string, limit = MAX_JSON_DEPTH): void {
  if (nestsDeeperThan(value, limit)) {
    throw invalidArg(field, `nests more than ${limit} levels deep`, 'flatten it: no real value needs that depth');
  }
}
