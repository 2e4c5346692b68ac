/**
 * What a language brings to a generated task: how it prints the program and its tests, where
 * the files go, how the tests run and are named. The generator itself never looks at a
 * language's syntax.
 */
import type { TestLogFormat } from '../env.js';
import type { Expr, FunctionDef, Language } from './program.js';
import type { Value } from './values.js';

/** One assertion: the function called with `args` gives `expected`. */
export interface Check {
  args: Value[];
  expected: Value;
}

/** One test function of a test file. */
export interface TestSpec {
  /** The tested function's name in this language. */
  fn: string;
  /** Whether it is the test of an issue (fail-to-pass), or of ordinary use. */
  issue: boolean;
  checks: Check[];
}

export interface Renderer {
  language: Language;
  /** The task id's language part. */
  short: 'py' | 'js';
  sourcePath(module: string): string;
  testPath(module: string): string;
  /** Other files the repository needs (JavaScript's package.json). */
  extraFiles(module: string): Record<string, string>;
  /** The repository's .gitignore. */
  gitignore: string;
  /** The source file: the functions, a blank line between them. */
  source(fns: readonly FunctionDef[]): string;
  /** A call as the user writes it (`total_over([1, 2], 3)`). */
  call(fn: string, args: readonly Value[]): string;
  testName(spec: TestSpec): string;
  testFile(module: string, specs: readonly TestSpec[]): string;
  /** The id the log parser gives the test. */
  testId(module: string, spec: TestSpec): string;
  testCommand(module: string): string;
  logFormat: TestLogFormat;
  /** How the user says what went wrong when the call raised `error` (`raises ZeroDivisionError`). */
  raised(error: string): string;
  /** "list" or "array". */
  listWord: string;
  /** None or undefined. */
  noneWord: string;
}

/** Binding strength, shared by both languages (they agree on every operator the model has). */
export function precedence(e: Expr): number {
  switch (e.k) {
    case 'or':
      return 1;
    case 'and':
      return 2;
    case 'cmp':
    case 'isNone':
      return 3;
    case 'bin':
      return e.op === '+' || e.op === '-' ? 4 : 5;
    case 'num':
      return e.value < 0 ? 6 : 7;
    default:
      return 7;
  }
}

/**
 * An operand printed inside a parent of strength `parent`: parenthesized when it binds less
 * tightly (or as tightly on the right, or at all for comparisons, which Python would chain).
 */
export function operand(text: string, child: Expr, parent: number, right: boolean): string {
  const p = precedence(child);
  const wrap = p < parent || (right && p === parent) || (parent === 3 && p === 3);
  return wrap ? `(${text})` : text;
}
