/**
 * Plausible wrong fixes of a buggy line, for the edit oracle's retry demonstrations
 * (scripted-policy.ts, `retry`): the line with one token changed as a fix would change it,
 * but not to the fix. Where the fix changes a single token, the wrong fixes change that
 * token to another of its class (an operator to another operator, a comparison to another
 * comparison, a number by one or two, a name to another name of the file); elsewhere, any
 * operator, comparison or number of the line. Text only: whether a wrong fix changes what the
 * issue's call prints is for the episode to show.
 */

/** Words that are syntax, never a variable a wrong fix could name instead. */
const KEYWORDS = new Set([
  'and', 'or', 'not', 'in', 'is', 'if', 'elif', 'else', 'for', 'while', 'return', 'def', 'None', 'True', 'False', 'pass', 'break', 'continue', 'import', 'from', 'lambda',
  'function', 'const', 'let', 'var', 'of', 'null', 'undefined', 'true', 'false', 'new', 'export', 'typeof', 'length', 'push', 'append', 'len', 'range', 'print',
]);
const ARITHMETIC = ['+', '-', '*', '/'];
const COMPARISONS = ['<', '<=', '>', '>=', '==', '!=', '===', '!=='];
const TOKEN = /[A-Za-z_][A-Za-z0-9_]*|\d+|===|!==|<=|>=|==|!=|\*\*|\/\/|\s+|[^\sA-Za-z0-9_]/g;

const tokens = (line: string): string[] => line.match(TOKEN) ?? [];
const isName = (token: string) => /^[A-Za-z_]/.test(token) && !KEYWORDS.has(token);

/** The other tokens of `token`'s class a slip could have put in its place (empty: none). */
function alternatives(token: string, names: readonly string[]): string[] {
  if (ARITHMETIC.includes(token)) return ARITHMETIC.filter((op) => op !== token);
  if (COMPARISONS.includes(token)) {
    // A language's own comparisons: JavaScript's swe-gen code compares with === and !==.
    const strict = token === '===' || token === '!==';
    return COMPARISONS.filter((op) => op !== token && (strict ? op !== '==' && op !== '!=' : op !== '===' && op !== '!=='));
  }
  if (/^\d+$/.test(token)) return [1, -1, 2, -2].map((d) => Number(token) + d).filter((n) => n >= 0).map(String);
  if (isName(token)) return names.filter((name) => name !== token);
  return [];
}

/**
 * The line with token i changed to each of its alternatives, less those that change nothing
 * (`x - 0`, `x * 1`: the fix by another name).
 */
function edits(parts: readonly string[], i: number, names: readonly string[]): string[] {
  const solid = (j: number, step: 1 | -1) => {
    for (let k = j + step; k >= 0 && k < parts.length; k += step) if (!/^\s+$/.test(parts[k]!)) return parts[k];
    return undefined;
  };
  const prev = solid(i, -1), next = solid(i, 1);
  const identity = (alt: string) =>
    (['+', '-'].includes(alt) && next === '0') || (['*', '/'].includes(alt) && next === '1') ||
    (alt === '0' && ['+', '-'].includes(prev ?? '')) || (alt === '1' && ['*', '/'].includes(prev ?? ''));
  return alternatives(parts[i]!, names)
    .filter((alt) => !identity(alt))
    .map((alt) => [...parts.slice(0, i), alt, ...parts.slice(i + 1)].join(''));
}

/**
 * Wrong fixes of `before` (whose fix is `after`; both one line), in a fixed order: lines that
 * are neither the buggy line nor its fix. `source` supplies the names a name could be mistaken
 * for (the identifiers it uses as variables: not keywords, not called).
 */
export function wrongFixes(before: string, after: string, source: string): string[] {
  const names = [...new Set([...source.matchAll(/\b[A-Za-z_][A-Za-z0-9_]*\b(?!\s*\()/g)].map((m) => m[0]).filter(isName))].sort();
  const a = tokens(before), b = tokens(after);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length, endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) endA--, endB--;
  const sameSpot = endA - start === 1 && endB - start === 1;
  const candidates = sameSpot
    ? edits(b, start, names) // the fix's token, changed to another of its class
    : a.flatMap((token, i) => (isName(token) || /^\s+$/.test(token) ? [] : edits(a, i, names)));
  return [...new Set(candidates)].filter((line) => line !== before && line !== after);
}
