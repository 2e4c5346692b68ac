/**
 * JSON text measured before JSON.parse builds anything from it. V8's JSON.parse takes any
 * depth (it does not recurse), but it builds what the text says: one 64 MiB line of brackets
 * is 32 million nested arrays (15 s and 3 GB), and every recursive walk after it
 * (structuredClone, ajv) overflows the stack a few thousand levels down. One pass over the
 * characters, strings skipped, finds where a text nests too deep or holds too many arrays and
 * objects. It does not validate: malformed text is left for JSON.parse to name.
 */

export interface JsonTextLimits {
  /** Arrays and objects inside one another (a scalar has depth 0). */
  depth: number;
  /** Arrays and objects in all. */
  containers: number;
}

export interface JsonTextExcess {
  kind: 'depth' | 'containers';
  /** The keys and indices of the containers open where the limit was passed, outermost first. */
  path: Array<string | number>;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** The index just past the string whose opening quote is at `start` (text.length if unterminated). */
function stringEnd(text: string, start: number): number {
  for (let q = text.indexOf('"', start + 1); q !== -1; q = text.indexOf('"', q + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(q - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return q + 1;
  }
  return text.length;
}

function keyText(text: string, start: number, end: number): string {
  try {
    return String(JSON.parse(text.slice(start, end)));
  } catch {
    return text.slice(start + 1, end - 1);
  }
}

/** Where `text` first passes a limit, or null when it stays within both. */
export function measureJsonText(text: string, limits: JsonTextLimits): JsonTextExcess | null {
  // Per open container: whether it is an array, its current element, its current key's span.
  const isArray: boolean[] = [];
  const element: number[] = [];
  const keyStart: number[] = [];
  const keyEnd: number[] = [];
  let depth = 0;
  let containers = 0;
  let lastStart = -1;
  let lastEnd = -1;
  const path = (): Array<string | number> =>
    isArray.slice(0, depth).map((array, d) => (array ? element[d]! : keyStart[d]! < 0 ? '?' : keyText(text, keyStart[d]!, keyEnd[d]!)));

  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      lastStart = i;
      lastEnd = stringEnd(text, i);
      i = lastEnd - 1;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (depth + 1 > limits.depth) return { kind: 'depth', path: path() };
      if (++containers > limits.containers) return { kind: 'containers', path: path() };
      isArray[depth] = c === OPEN_ARRAY;
      element[depth] = 0;
      keyStart[depth] = -1;
      depth++;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      if (depth > 0) depth--;
    } else if (c === COMMA) {
      if (depth > 0 && isArray[depth - 1]) element[depth - 1]!++;
    } else if (c === COLON) {
      if (depth > 0 && !isArray[depth - 1]) {
        keyStart[depth - 1] = lastStart;
        keyEnd[depth - 1] = lastEnd;
      }
    }
  }
  return null;
}

export interface TopLevelElements {
  /** [start, end) of each element of the top-level array, in order. */
  spans: Array<[number, number]>;
  /** The array is not closed (a truncated file), or text follows its closing bracket. */
  unclosed: boolean;
  trailing: boolean;
}

/**
 * The elements of a text that is one JSON array, located without parsing (each can then be
 * measured and parsed on its own), or null when the text is not an array.
 */
export function topLevelElements(text: string): TopLevelElements | null {
  let i = 0;
  while (i < text.length && /\s/.test(text[i]!)) i++;
  if (text.charCodeAt(i) !== OPEN_ARRAY) return null;
  const spans: Array<[number, number]> = [];
  let depth = 1;
  let start = i + 1;
  for (i = i + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEnd(text, i) - 1;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      depth++;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      if (--depth === 0) break;
    } else if (c === COMMA && depth === 1) {
      spans.push([start, i]);
      start = i + 1;
    }
  }
  const unclosed = depth > 0;
  const end = Math.min(i, text.length);
  // The last element: none in "[]" or "[ ]", an empty one after a trailing comma (an error).
  if (spans.length > 0 || text.slice(start, end).trim() !== '') spans.push([start, end]);
  return { spans, unclosed, trailing: !unclosed && text.slice(end + 1).trim() !== '' };
}
