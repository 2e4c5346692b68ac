/**
 * Reads a template's body, written in the Python-like notation of templates.ts, into the
 * program model. The notation is the model's, nothing more: `name = e`, `name += e`,
 * `name.append(e)`, `return e`, `if c: <simple>`, `if c:` + block, `for n in range(a[, b]):`,
 * `for n in e:`; expressions of numbers, names, None, True, False, `[]`, + - * / %, comparisons
 * (not chained), `is None`, and, or, `x[i]`, len/min/max/abs. Indentation is four spaces.
 * A template that says anything else is a programming error, so errors are plain Errors.
 */
import type { AugmentOp, BinaryOp, Builtin, CompareOp, Expr, Stmt } from './program.js';
import { internalError } from '../../errors.js';

const TOKEN = /\s*(\d+|[A-Za-z_][A-Za-z0-9_]*|<=|>=|==|!=|[-+*/%<>()[\],.])/y;
const COMPARE_OPS = new Set(['<', '<=', '>', '>=', '==', '!=']);
const BUILTINS = new Set(['len', 'min', 'max', 'abs']);

function tokenize(text: string): string[] {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    if (/^\s*$/.test(text.slice(TOKEN.lastIndex))) break;
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(text);
    if (!m) throw internalError(`template: cannot read ${JSON.stringify(text.slice(at))} in ${JSON.stringify(text)}`);
    tokens.push(m[1]!);
  }
  return tokens;
}

class ExprParser {
  private at = 0;
  constructor(private readonly tokens: string[], private readonly text: string) {}

  static parse(text: string): Expr {
    const parser = new ExprParser(tokenize(text), text);
    const expr = parser.or();
    if (parser.at !== parser.tokens.length) parser.fail(`unexpected ${parser.tokens[parser.at]}`);
    return expr;
  }

  private fail(problem: string): never {
    throw internalError(`template: ${problem} in ${JSON.stringify(this.text)}`);
  }

  private peek(): string | undefined {
    return this.tokens[this.at];
  }

  private take(expected?: string): string {
    const token = this.tokens[this.at++];
    if (token === undefined) this.fail('unexpected end');
    if (expected !== undefined && token !== expected) this.fail(`expected ${expected}, got ${token}`);
    return token;
  }

  private or(): Expr {
    let left = this.and();
    while (this.peek() === 'or') {
      this.take();
      left = { k: 'or', left, right: this.and() };
    }
    return left;
  }

  private and(): Expr {
    let left = this.comparison();
    while (this.peek() === 'and') {
      this.take();
      left = { k: 'and', left, right: this.comparison() };
    }
    return left;
  }

  private comparison(): Expr {
    const left = this.additive();
    const op = this.peek();
    if (op === 'is') {
      this.take();
      this.take('None');
      return { k: 'isNone', value: left };
    }
    if (op === undefined || !COMPARE_OPS.has(op)) return left;
    this.take();
    return { k: 'cmp', op: op as CompareOp, left, right: this.additive() };
  }

  private additive(): Expr {
    let left = this.multiplicative();
    for (let op = this.peek(); op === '+' || op === '-'; op = this.peek()) {
      this.take();
      left = { k: 'bin', op: op as BinaryOp, left, right: this.multiplicative() };
    }
    return left;
  }

  private multiplicative(): Expr {
    let left = this.postfix();
    for (let op = this.peek(); op === '*' || op === '/' || op === '%'; op = this.peek()) {
      this.take();
      left = { k: 'bin', op: op as BinaryOp, left, right: this.postfix() };
    }
    return left;
  }

  private postfix(): Expr {
    let expr = this.atom();
    while (this.peek() === '[') {
      this.take();
      if (this.peek() === ']') this.fail('an index is missing');
      const index = this.or();
      this.take(']');
      expr = { k: 'index', list: expr, index };
    }
    return expr;
  }

  private atom(): Expr {
    const token = this.take();
    if (token === '-') {
      const digits = this.take();
      if (!/^\d+$/.test(digits)) this.fail('only number literals may be negated');
      return { k: 'num', value: -Number(digits) };
    }
    if (/^\d+$/.test(token)) return { k: 'num', value: Number(token) };
    if (token === 'None') return { k: 'none' };
    if (token === 'True' || token === 'False') return { k: 'bool', value: token === 'True' };
    if (token === '(') {
      const inner = this.or();
      this.take(')');
      return inner;
    }
    if (token === '[') {
      this.take(']');
      return { k: 'emptyList' };
    }
    if (BUILTINS.has(token)) {
      this.take('(');
      const args = [this.or()];
      while (this.peek() === ',') {
        this.take();
        args.push(this.or());
      }
      this.take(')');
      return { k: 'call', fn: token as Builtin, args };
    }
    if (/^[A-Za-z_]/.test(token)) return { k: 'var', name: token };
    return this.fail(`unexpected ${token}`);
  }
}

export function parseExpr(text: string): Expr {
  return ExprParser.parse(text);
}

/** A statement that fits on one line (the body of an inline if, or any plain line). */
function simpleStmt(text: string): Stmt {
  let m = /^return (.+)$/.exec(text);
  if (m) return { k: 'return', value: parseExpr(m[1]!) };
  m = /^(\w+)\.append\((.+)\)$/.exec(text);
  if (m) return { k: 'append', list: m[1]!, value: parseExpr(m[2]!) };
  m = /^(\w+) ([-+*/])= (.+)$/.exec(text);
  if (m) return { k: 'aug', name: m[1]!, op: m[2] as AugmentOp, value: parseExpr(m[3]!) };
  m = /^(\w+) = (.+)$/.exec(text);
  if (m) return { k: 'assign', name: m[1]!, value: parseExpr(m[2]!) };
  throw internalError(`template: cannot read the statement ${JSON.stringify(text)}`);
}

/** Splits `range(a)` / `range(a, b)` arguments at the top-level comma. */
function rangeArgs(text: string): [Expr, Expr] {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(' || c === '[') depth++;
    else if (c === ')' || c === ']') depth--;
    else if (c === ',' && depth === 0) return [parseExpr(text.slice(0, i)), parseExpr(text.slice(i + 1))];
  }
  return [{ k: 'num', value: 0 }, parseExpr(text)];
}

/** Parses a template body (four-space indentation; blank lines ignored). */
export function parseBody(source: string): Stmt[] {
  const lines = source
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const indent = /^ */.exec(line)![0].length;
      if (indent % 4 !== 0) throw internalError(`template: indentation of ${JSON.stringify(line)} is not a multiple of 4`);
      return { depth: indent / 4, text: line.trim() };
    });
  let at = 0;
  const block = (depth: number): Stmt[] => {
    const out: Stmt[] = [];
    while (at < lines.length && lines[at]!.depth >= depth) {
      const { depth: d, text } = lines[at]!;
      if (d > depth) throw internalError(`template: unexpected indentation at ${JSON.stringify(text)}`);
      at++;
      let m = /^for (\w+) in range\((.+)\):$/.exec(text);
      if (m) {
        const [from, to] = rangeArgs(m[2]!);
        out.push({ k: 'range', name: m[1]!, from, to, body: block(depth + 1) });
        continue;
      }
      m = /^for (\w+) in (.+):$/.exec(text);
      if (m) {
        out.push({ k: 'each', name: m[1]!, list: parseExpr(m[2]!), body: block(depth + 1) });
        continue;
      }
      m = /^if (.+):$/.exec(text);
      if (m) {
        out.push({ k: 'if', cond: parseExpr(m[1]!), body: block(depth + 1), inline: false });
        continue;
      }
      m = /^if (.+?): (.+)$/.exec(text);
      if (m) {
        out.push({ k: 'if', cond: parseExpr(m[1]!), body: [simpleStmt(m[2]!)], inline: true });
        continue;
      }
      out.push(simpleStmt(text));
    }
    if (out.length === 0) throw internalError('template: an empty block');
    return out;
  };
  const body = block(0);
  if (at !== lines.length) throw internalError(`template: unexpected indentation at ${JSON.stringify(lines[at]!.text)}`);
  return body;
}
