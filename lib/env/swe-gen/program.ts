/**
 * The program model of swe-gen: a small statement/expression tree that one interpreter runs
 * (interpret.ts) and two renderers print (render-python.ts, render-javascript.ts). Only what
 * both languages can say line for line is in it: no while loops (every program ends), no
 * truthiness (conditions are comparisons), no nested functions.
 */

export type Language = 'python' | 'javascript';
export const LANGUAGES: readonly Language[] = ['python', 'javascript'];

/** The type of a name, as far as the wrong-variable bug needs it: a name only stands in for one of its own type. */
export type NameType = 'num' | 'list';

export type BinaryOp = '+' | '-' | '*' | '/' | '%';
export type CompareOp = '<' | '<=' | '>' | '>=' | '==' | '!=';
export type AugmentOp = '+' | '-' | '*' | '/';
export type Builtin = 'len' | 'min' | 'max' | 'abs';

export type Expr =
  | { k: 'num'; value: number }
  | { k: 'bool'; value: boolean }
  | { k: 'none' }
  | { k: 'emptyList' }
  | { k: 'var'; name: string }
  | { k: 'bin'; op: BinaryOp; left: Expr; right: Expr }
  | { k: 'cmp'; op: CompareOp; left: Expr; right: Expr }
  | { k: 'and' | 'or'; left: Expr; right: Expr }
  | { k: 'isNone'; value: Expr }
  | { k: 'index'; list: Expr; index: Expr }
  | { k: 'call'; fn: Builtin; args: Expr[] };

export type Stmt =
  | { k: 'assign'; name: string; value: Expr }
  | { k: 'aug'; name: string; op: AugmentOp; value: Expr }
  | { k: 'append'; list: string; value: Expr }
  | { k: 'return'; value: Expr }
  /** `inline`: written on one line (`if c: return x`), the form a guard takes. */
  | { k: 'if'; cond: Expr; body: Stmt[]; inline: boolean }
  | { k: 'range'; name: string; from: Expr; to: Expr; body: Stmt[] }
  | { k: 'each'; name: string; list: Expr; body: Stmt[] };

export interface Param {
  name: string;
  type: NameType;
  /** May be left out of a call (then None / undefined); only the last parameter. */
  optional: boolean;
}

/** One function of a generated file; `words` make its name (snake_case in Python, camelCase in JavaScript). */
export interface FunctionDef {
  words: string[];
  params: Param[];
  body: Stmt[];
}

export function functionName(words: readonly string[], language: Language): string {
  if (language === 'python') return words.join('_');
  return words.map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1))).join('');
}

/** Structural equality of two expressions (the tree is plain data). */
export function sameExpr(a: Expr, b: Expr): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A deep copy of plain program data. */
export function clone<T>(value: T): T {
  return structuredClone(value);
}
