/**
 * Runs a function of the program model as Python or as JavaScript would: the same tree gives
 * Python's ZeroDivisionError where JavaScript gives Infinity, Python's IndexError or negative
 * indexing where JavaScript gives undefined, Python's TypeError on None where JavaScript
 * computes NaN. Expected values, the "got", and which inputs show a bug all come from
 * here, so every rule is the language's own (test/…/interpret.test.ts checks them against
 * the real python3 and node).
 */
import type { Builtin, Expr, FunctionDef, Language, Stmt } from './program.js';
import { Unportable, int, type Outcome, type Value } from './values.js';
import { internalError } from '../../errors.js';

/** A language's exception, carried up to the call. */
class Raised extends Error {
  constructor(readonly error: string) {
    super(error);
  }
}

/** Loop iterations a call may take: inputs are small, so more means a runaway mutant. */
const MAX_STEPS = 10_000;

const num = (v: number, float: boolean): Value => ({ t: 'num', v, float });

/** JavaScript's ToNumber for the values that can reach arithmetic. */
function jsNumber(value: Value): number {
  if (value.t === 'num') return value.v;
  if (value.t === 'none') return NaN;
  if (value.t === 'bool') return value.v ? 1 : 0;
  throw new Unportable('arithmetic on an array');
}

function checkInt(v: number, float: boolean): Value {
  if (!float && !Number.isSafeInteger(v)) throw new Unportable(`int ${v} is not exact in JavaScript`);
  return num(v, float);
}

function arithmetic(language: Language, op: string, a: Value, b: Value): Value {
  if (language === 'javascript') {
    const x = jsNumber(a);
    const y = jsNumber(b);
    const v = op === '+' ? x + y : op === '-' ? x - y : op === '*' ? x * y : op === '/' ? x / y : x % y;
    return num(v, false);
  }
  if (a.t !== 'num' || b.t !== 'num') throw new Raised('TypeError');
  const float = a.float || b.float || op === '/';
  if ((op === '/' || op === '%') && b.v === 0) throw new Raised('ZeroDivisionError');
  let v: number;
  if (op === '+') v = a.v + b.v;
  else if (op === '-') v = a.v - b.v;
  else if (op === '*') v = a.v * b.v;
  else if (op === '/') v = a.v / b.v;
  else {
    // Python's % takes the divisor's sign.
    v = a.v % b.v;
    if (v !== 0 && v < 0 !== b.v < 0) v += b.v;
  }
  return checkInt(v, float);
}

function compare(language: Language, op: string, a: Value, b: Value): boolean {
  if (op === '==' || op === '!=') {
    let equal: boolean;
    if (language === 'javascript') {
      // === on the values that reach it: numbers, undefined, booleans (arrays are never compared)
      equal = a.t === b.t && (a.t === 'none' || (a as { v: unknown }).v === (b as { v: unknown }).v);
      if (a.t === 'list' || b.t === 'list') throw new Unportable('array identity');
    } else {
      if (a.t === 'list' || b.t === 'list') throw new Unportable('list equality');
      equal = a.t === 'none' || b.t === 'none' ? a.t === b.t : (a as { v: number }).v === (b as { v: number }).v;
    }
    return op === '==' ? equal : !equal;
  }
  let x: number;
  let y: number;
  if (language === 'javascript') {
    x = jsNumber(a);
    y = jsNumber(b);
  } else {
    if (a.t !== 'num' || b.t !== 'num') throw new Raised('TypeError');
    x = a.v;
    y = b.v;
  }
  return op === '<' ? x < y : op === '<=' ? x <= y : op === '>' ? x > y : x >= y;
}

function truthy(value: Value): boolean {
  if (value.t !== 'bool') throw internalError(`swe-gen: a condition gave ${value.t}, not a boolean`);
  return value.v;
}

function length(language: Language, value: Value): number {
  if (value.t === 'list') return value.v.length;
  if (language === 'python') throw new Raised('TypeError');
  if (value.t === 'none') throw new Raised('TypeError'); // undefined.length
  throw new Unportable(`length of ${value.t}`);
}

function index(language: Language, list: Value, at: Value): Value {
  if (list.t !== 'list') {
    if (list.t === 'none') throw new Raised('TypeError');
    throw new Unportable(`indexing ${list.t}`);
  }
  const n = list.v.length;
  if (language === 'python') {
    if (at.t !== 'num' || at.float) throw new Raised('TypeError');
    const i = at.v < 0 ? at.v + n : at.v;
    if (i < 0 || i >= n) throw new Raised('IndexError');
    return list.v[i]!;
  }
  const i = jsNumber(at);
  return Number.isInteger(i) && i >= 0 && i < n ? list.v[i]! : { t: 'none' };
}

function builtin(language: Language, fn: Builtin, args: Value[]): Value {
  if (fn === 'len') return int(length(language, args[0]!));
  if (language === 'javascript') {
    const xs = args.map(jsNumber);
    return num(fn === 'abs' ? Math.abs(xs[0]!) : fn === 'min' ? Math.min(...xs) : Math.max(...xs), false);
  }
  if (args.some((a) => a.t !== 'num')) throw new Raised('TypeError');
  const nums = args as { t: 'num'; v: number; float: boolean }[];
  if (fn === 'abs') return num(Math.abs(nums[0]!.v), nums[0]!.float);
  // min/max return the first of the extreme arguments, with its own type
  let best = nums[0]!;
  for (const x of nums.slice(1)) if (fn === 'min' ? x.v < best.v : x.v > best.v) best = x;
  return best;
}

class Frame {
  readonly vars = new Map<string, Value>();
  steps = 0;
  constructor(readonly language: Language) {}

  get(name: string): Value {
    const value = this.vars.get(name);
    if (value === undefined) throw internalError(`swe-gen: ${name} is read before it is set`);
    return value;
  }

  tick(): void {
    if (++this.steps > MAX_STEPS) throw new Unportable('too many loop iterations');
  }

  eval(e: Expr): Value {
    const L = this.language;
    switch (e.k) {
      case 'num':
        return int(e.value);
      case 'bool':
        return { t: 'bool', v: e.value };
      case 'none':
        return { t: 'none' };
      case 'emptyList':
        return { t: 'list', v: [] };
      case 'var':
        return this.get(e.name);
      case 'bin':
        return arithmetic(L, e.op, this.eval(e.left), this.eval(e.right));
      case 'cmp':
        return { t: 'bool', v: compare(L, e.op, this.eval(e.left), this.eval(e.right)) };
      case 'and':
        return truthy(this.eval(e.left)) ? this.eval(e.right) : { t: 'bool', v: false };
      case 'or':
        return truthy(this.eval(e.left)) ? { t: 'bool', v: true } : this.eval(e.right);
      case 'isNone':
        return { t: 'bool', v: this.eval(e.value).t === 'none' };
      case 'index':
        return index(L, this.eval(e.list), this.eval(e.index));
      case 'call':
        return builtin(L, e.fn, e.args.map((a) => this.eval(a)));
    }
  }

  /** Runs statements; a returned value ends the call. */
  run(body: readonly Stmt[]): Value | undefined {
    for (const s of body) {
      const result = this.step(s);
      if (result !== undefined) return result;
    }
    return undefined;
  }

  private step(s: Stmt): Value | undefined {
    const L = this.language;
    switch (s.k) {
      case 'assign':
        this.vars.set(s.name, this.eval(s.value));
        return undefined;
      case 'aug':
        this.vars.set(s.name, arithmetic(L, s.op, this.get(s.name), this.eval(s.value)));
        return undefined;
      case 'append': {
        const list = this.get(s.list);
        if (list.t !== 'list') throw internalError(`swe-gen: append to ${list.t}`);
        list.v.push(this.eval(s.value));
        return undefined;
      }
      case 'return':
        return this.eval(s.value);
      case 'if':
        return truthy(this.eval(s.cond)) ? this.run(s.body) : undefined;
      case 'each': {
        const list = this.eval(s.list);
        if (list.t !== 'list') {
          if (list.t === 'none') throw new Raised('TypeError');
          throw new Unportable(`iterating ${list.t}`);
        }
        for (const item of [...list.v]) {
          this.tick();
          this.vars.set(s.name, item);
          const result = this.run(s.body);
          if (result !== undefined) return result;
        }
        return undefined;
      }
      case 'range': {
        const from = this.eval(s.from);
        const to = this.eval(s.to);
        if (L === 'python') {
          for (const bound of [from, to]) if (bound.t !== 'num' || bound.float) throw new Raised('TypeError');
          for (let i = (from as { v: number }).v; i < (to as { v: number }).v; i++) {
            this.tick();
            this.vars.set(s.name, int(i));
            const result = this.run(s.body);
            if (result !== undefined) return result;
          }
          return undefined;
        }
        // for (let i = from; i < to; i++)
        let i = jsNumber(from);
        const end = to;
        while (i < jsNumber(end)) {
          this.tick();
          this.vars.set(s.name, num(i, false));
          const result = this.run(s.body);
          if (result !== undefined) return result;
          i++;
        }
        return undefined;
      }
    }
  }
}

/**
 * Calls `fn` with `args` (fewer than its parameters leaves the optional last one out) as
 * `language` would. Throws Unportable where the model cannot say what the language does.
 */
export function callFunction(fn: FunctionDef, args: readonly Value[], language: Language): Outcome {
  const frame = new Frame(language);
  fn.params.forEach((p, i) => frame.vars.set(p.name, i < args.length ? structuredClone(args[i]!) : { t: 'none' }));
  try {
    const value = frame.run(fn.body) ?? { t: 'none' };
    return { ok: true, value };
  } catch (error) {
    if (error instanceof Raised) return { ok: false, error: error.error };
    throw error;
  }
}
