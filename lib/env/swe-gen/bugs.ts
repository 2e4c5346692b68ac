/**
 * The bug kinds, and every place each can go in a function: each candidate is the function's
 * body with one change. Whether a candidate is a real bug (some input shows it) is cases.ts's
 * question; here only changes that read as a slip are made (never `a - a`, `x = x`).
 */
import { clone, sameExpr, type AugmentOp, type BinaryOp, type CompareOp, type Expr, type FunctionDef, type NameType, type Stmt } from './program.js';

export const BUG_KINDS = ['operator', 'comparison', 'off-by-one', 'wrong-variable', 'missing-case'] as const;
export type BugKind = (typeof BUG_KINDS)[number];

const OPERATOR_SWAPS: Partial<Record<BinaryOp, BinaryOp[]>> = { '+': ['-'], '-': ['+'], '*': ['/', '+'], '/': ['*'] };
const AUGMENT_SWAPS: Record<AugmentOp, AugmentOp[]> = { '+': ['-'], '-': ['+'], '*': ['+'], '/': ['*'] };
const COMPARISON_SWAPS: Record<CompareOp, CompareOp> = { '<': '<=', '<=': '<', '>': '>=', '>=': '>', '==': '!=', '!=': '==' };

type Path = (string | number)[];
type Scope = ReadonlyMap<string, NameType>;

interface ExprSite {
  expr: Expr;
  path: Path;
  scope: Scope;
}

interface StmtSite {
  stmt: Stmt;
  path: Path;
  /** Statements in the block that holds it. */
  siblings: number;
}

function typeOf(e: Expr, scope: Scope): NameType {
  if (e.k === 'emptyList') return 'list';
  if (e.k === 'var') return scope.get(e.name) ?? 'num';
  return 'num';
}

/** Every expression (with the names in scope there) and statement of a body. */
function sites(def: FunctionDef): { exprs: ExprSite[]; stmts: StmtSite[] } {
  const exprs: ExprSite[] = [];
  const stmts: StmtSite[] = [];
  const expr = (e: Expr, path: Path, scope: Scope): void => {
    exprs.push({ expr: e, path, scope });
    switch (e.k) {
      case 'bin':
      case 'cmp':
      case 'and':
      case 'or':
        expr(e.left, [...path, 'left'], scope);
        expr(e.right, [...path, 'right'], scope);
        break;
      case 'isNone':
        expr(e.value, [...path, 'value'], scope);
        break;
      case 'index':
        expr(e.list, [...path, 'list'], scope);
        expr(e.index, [...path, 'index'], scope);
        break;
      case 'call':
        e.args.forEach((a, i) => expr(a, [...path, 'args', i], scope));
        break;
      default:
        break;
    }
  };
  const block = (body: readonly Stmt[], path: Path, outer: Scope): void => {
    const scope = new Map(outer);
    body.forEach((s, i) => {
      const p = [...path, i];
      stmts.push({ stmt: s, path: p, siblings: body.length });
      switch (s.k) {
        case 'assign':
          expr(s.value, [...p, 'value'], new Map(scope));
          scope.set(s.name, typeOf(s.value, scope));
          break;
        case 'aug':
        case 'append':
        case 'return':
          expr(s.value, [...p, 'value'], new Map(scope));
          break;
        case 'if':
          expr(s.cond, [...p, 'cond'], new Map(scope));
          block(s.body, [...p, 'body'], scope);
          break;
        case 'range':
          expr(s.from, [...p, 'from'], new Map(scope));
          expr(s.to, [...p, 'to'], new Map(scope));
          block(s.body, [...p, 'body'], new Map(scope).set(s.name, 'num'));
          break;
        case 'each':
          expr(s.list, [...p, 'list'], new Map(scope));
          block(s.body, [...p, 'body'], new Map(scope).set(s.name, 'num'));
          break;
      }
    });
  };
  block(def.body, [], new Map(def.params.map((p) => [p.name, p.type])));
  return { exprs, stmts };
}

/** The body with the node at `path` replaced (or removed from its block, given undefined). */
function replaced(body: readonly Stmt[], path: Path, value: unknown): Stmt[] {
  const copy = clone(body) as unknown as Record<string | number, unknown>;
  let node: Record<string | number, unknown> = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (value === undefined) (node as unknown as unknown[]).splice(last as number, 1);
  else node[last] = value;
  return copy as unknown as Stmt[];
}

/** `e` one more (delta 1) or one less (-1), written as a person would (`n + 1` less one is `n`). */
export function shifted(e: Expr, delta: 1 | -1): Expr {
  if (e.k === 'num') return { k: 'num', value: e.value + delta };
  if (e.k === 'bin' && (e.op === '+' || e.op === '-') && e.right.k === 'num') {
    const c = (e.op === '+' ? e.right.value : -e.right.value) + delta;
    if (c === 0) return e.left;
    return { k: 'bin', op: c > 0 ? '+' : '-', left: e.left, right: { k: 'num', value: Math.abs(c) } };
  }
  return { k: 'bin', op: delta > 0 ? '+' : '-', left: e, right: { k: 'num', value: 1 } };
}

/** A change that no one would write by mistake: an operation on one value twice, `x = x`, `x += x`. */
function degenerate(body: readonly Stmt[]): boolean {
  const exprBad = (e: Expr): boolean => {
    switch (e.k) {
      case 'bin':
      case 'cmp':
      case 'and':
      case 'or':
        return sameExpr(e.left, e.right) || exprBad(e.left) || exprBad(e.right);
      case 'isNone':
        return exprBad(e.value);
      case 'index':
        return exprBad(e.list) || exprBad(e.index);
      case 'call':
        return (e.args.length === 2 && sameExpr(e.args[0]!, e.args[1]!)) || e.args.some(exprBad);
      default:
        return false;
    }
  };
  const stmtBad = (s: Stmt): boolean => {
    switch (s.k) {
      case 'assign':
      case 'aug':
        return (s.value.k === 'var' && s.value.name === s.name) || exprBad(s.value);
      case 'append':
      case 'return':
        return exprBad(s.value);
      case 'if':
        return exprBad(s.cond) || s.body.some(stmtBad);
      case 'range':
        return exprBad(s.from) || exprBad(s.to) || s.body.some(stmtBad);
      case 'each':
        return exprBad(s.list) || s.body.some(stmtBad);
    }
  };
  return body.some(stmtBad);
}

/** Every body with one bug of `kind` in it, in the order of the function's text. */
export function candidateBugs(def: FunctionDef, kind: BugKind): Stmt[][] {
  const { exprs, stmts } = sites(def);
  const out: Stmt[][] = [];
  const add = (path: Path, value: unknown) => {
    const body = replaced(def.body, path, value);
    if (!degenerate(body)) out.push(body);
  };
  switch (kind) {
    case 'operator':
      for (const { expr, path } of exprs) {
        if (expr.k === 'bin') for (const op of OPERATOR_SWAPS[expr.op] ?? []) add([...path, 'op'], op);
      }
      for (const { stmt, path } of stmts) {
        if (stmt.k === 'aug') for (const op of AUGMENT_SWAPS[stmt.op]) add([...path, 'op'], op);
      }
      break;
    case 'comparison':
      for (const { expr, path } of exprs) if (expr.k === 'cmp') add([...path, 'op'], COMPARISON_SWAPS[expr.op]);
      break;
    case 'off-by-one':
      for (const { stmt, path } of stmts) {
        if (stmt.k !== 'range') continue;
        for (const delta of [1, -1] as const) {
          // a range never starts below 0 by a slip
          if (!(stmt.from.k === 'num' && stmt.from.value + delta < 0)) add([...path, 'from'], shifted(stmt.from, delta));
          add([...path, 'to'], shifted(stmt.to, delta));
        }
      }
      for (const { expr, path } of exprs) {
        if (expr.k === 'index') for (const delta of [1, -1] as const) add([...path, 'index'], shifted(expr.index, delta));
      }
      break;
    case 'wrong-variable':
      for (const { expr, path, scope } of exprs) {
        if (expr.k !== 'var') continue;
        const type = scope.get(expr.name);
        for (const [name, t] of scope) if (name !== expr.name && t === type) add(path, { k: 'var', name });
      }
      break;
    case 'missing-case':
      for (const { stmt, path, siblings } of stmts) {
        if (stmt.k === 'if' && stmt.inline && stmt.body[0]!.k === 'return' && siblings > 1) add(path, undefined);
      }
      break;
  }
  return out;
}
