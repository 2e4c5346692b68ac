/**
 * The values generated programs compute, and how each language writes them: as a literal in
 * a test, and as what a user sees in the issue. Python tells an int from a float (6 / 2 is
 * 3.0); JavaScript has one number type, NaN and undefined.
 */
import type { Language } from './program.js';

export type Value =
  | { t: 'num'; v: number; float: boolean }
  | { t: 'bool'; v: boolean }
  | { t: 'list'; v: Value[] }
  | { t: 'none' };

/** What a call did: returned a value, or raised (Python's exception class, JavaScript's error name). */
export type Outcome = { ok: true; value: Value } | { ok: false; error: string };

/**
 * Thrown where the model cannot promise what the real language does (a number too large to be
 * exact, a float Python would print in exponent form, a negative zero): the input is not used.
 */
export class Unportable extends Error {}

export const int = (v: number): Value => ({ t: 'num', v, float: false });

function pythonEquals(a: Value, b: Value): boolean {
  const numeric = (x: Value) => (x.t === 'num' ? x.v : x.t === 'bool' ? Number(x.v) : undefined);
  const [x, y] = [numeric(a), numeric(b)];
  if (x !== undefined || y !== undefined) return x === y;
  if (a.t === 'list' && b.t === 'list') return a.v.length === b.v.length && a.v.every((item, i) => pythonEquals(item, b.v[i]!));
  return a.t === b.t;
}

function deepStrictEqual(a: Value, b: Value): boolean {
  if (a.t === 'num' && b.t === 'num') return Object.is(a.v, b.v);
  if (a.t === 'bool' && b.t === 'bool') return a.v === b.v;
  if (a.t === 'list' && b.t === 'list') return a.v.length === b.v.length && a.v.every((item, i) => deepStrictEqual(item, b.v[i]!));
  return a.t === b.t && a.t === 'none';
}

/**
 * Whether a test's assertion that the call gives `expected` holds when it gave `got`: Python's
 * `==` (3.0 == 3, True == 1) or `is` for True, False and None, as the test writes them;
 * node's assert.deepStrictEqual (NaN equals NaN, -0 does not equal 0).
 */
export function assertionHolds(language: Language, expected: Value, got: Outcome): boolean {
  if (!got.ok) return false;
  if (language === 'javascript') return deepStrictEqual(expected, got.value);
  if (expected.t === 'bool' || expected.t === 'none') return got.value.t === expected.t && (expected.t === 'none' || (got.value as { v: boolean }).v === expected.v);
  return pythonEquals(expected, got.value);
}

/** Python's repr of a float, where it is the shortest round-trip form JavaScript prints too. */
function pythonFloat(v: number): string {
  const size = Math.abs(v);
  if (!Number.isFinite(v) || (size !== 0 && (size < 1e-4 || size >= 1e15))) throw new Unportable(`float ${v}`);
  return Number.isInteger(v) ? `${v}.0` : String(v);
}

/** A value as the language writes it in source (a test's argument or expected value). */
export function literal(value: Value, language: Language): string {
  if (value.t === 'num') {
    if (Object.is(value.v, -0)) throw new Unportable('negative zero');
    if (!Number.isFinite(value.v)) {
      if (language === 'python') throw new Unportable(`non-finite ${value.v}`);
      return String(value.v);
    }
    if (!value.float && !Number.isSafeInteger(value.v)) throw new Unportable(`int ${value.v}`);
    return language === 'python' && value.float ? pythonFloat(value.v) : String(value.v);
  }
  if (value.t === 'bool') return language === 'python' ? (value.v ? 'True' : 'False') : String(value.v);
  if (value.t === 'none') return language === 'python' ? 'None' : 'undefined';
  return `[${value.v.map((x) => literal(x, language)).join(', ')}]`;
}

/** Whether a value is a proper answer a fixed function may give (no NaN, no Infinity). */
export function isProperValue(value: Value): boolean {
  if (value.t === 'num') return Number.isFinite(value.v) && !Object.is(value.v, -0);
  if (value.t === 'list') return value.v.every(isProperValue);
  return true;
}
