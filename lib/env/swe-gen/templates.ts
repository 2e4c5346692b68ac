/**
 * The functions a generated file is made of: short, one job each, with the names, parameter
 * names and constants a seed picks from. A body is written in the notation parse.ts reads
 * (Python-like); its parameters appear under their roles and are renamed when drawn. The doc
 * says what the fixed function does, for the issue ("`mean` should ..."): {role} is the
 * parameter's name, {const} its value, {list} "list" or "array", {none} None or undefined.
 *
 * A template names no bug: bugs.ts finds the places each kind of bug can go, and cases.ts
 * keeps only those that some input shows.
 */
import type { NameType } from './program.js';

export interface ParamSpec {
  role: string;
  /** The names a seed picks from (none of them a local of the body). */
  names: readonly string[];
  type: NameType;
  /** Numbers are drawn from [min, max]: the number itself, or each element of a list. */
  min: number;
  max: number;
  /** Lists: their length is drawn from [minLength, maxLength]. */
  minLength?: number;
  maxLength?: number;
  /** Left out of a call a third of the time (None / undefined inside). */
  optional?: boolean;
  /** Takes the name at the same position as this earlier role's (lo goes with hi, start with stop). */
  pairedWith?: string;
}

export interface Template {
  id: string;
  /** Function names, as words (snake_case or camelCase by language). */
  names: readonly (readonly string[])[];
  params: readonly ParamSpec[];
  /** Constants of the body, each drawn from [min, max]. */
  consts?: Readonly<Record<string, readonly [number, number]>>;
  body: string;
  doc: string;
}

const LISTS = ['xs', 'nums', 'values', 'items'];
const list = (role: string, minLength: number, maxLength: number, min: number, max: number): ParamSpec => ({ role, names: LISTS, type: 'list', min, max, minLength, maxLength });
const num = (role: string, names: readonly string[], min: number, max: number, optional = false): ParamSpec => ({ role, names, type: 'num', min, max, ...(optional ? { optional } : {}) });

const LIMIT = ['limit', 'cap', 'cutoff'];
const LOW = ['low', 'lo', 'start'];
const HIGH = ['high', 'hi', 'stop'];
const X = ['x', 'value', 'v'];
const N = ['n', 'm', 'size'];
const TARGET = ['target', 'wanted', 'key'];
const high = (min: number, max: number): ParamSpec => ({ ...num('high', HIGH, min, max), pairedWith: 'low' });

export const TEMPLATES: readonly Template[] = [
  {
    id: 'sum-over',
    names: [['total', 'over'], ['sum', 'above'], ['sum', 'over']],
    params: [list('xs', 0, 5, -2, 15), num('limit', LIMIT, 0, 10)],
    body: `
total = 0
for x in xs:
    if x > limit:
        total += x
return total`,
    doc: 'add up the numbers in {xs} that are greater than {limit}',
  },
  {
    id: 'count-between',
    names: [['count', 'between'], ['count', 'in', 'range']],
    params: [list('xs', 0, 6, 0, 12), num('low', LOW, 0, 5), high(5, 10)],
    body: `
count = 0
for x in xs:
    if x >= low and x <= high:
        count += 1
return count`,
    doc: 'count the numbers in {xs} that are at least {low} and at most {high}',
  },
  {
    id: 'mean',
    names: [['mean'], ['average'], ['mean', 'of']],
    params: [list('xs', 0, 5, 0, 12)],
    body: `
if len(xs) == 0: return 0
total = 0
for x in xs:
    total += x
return total / len(xs)`,
    doc: 'return the average of {xs}, or 0 for an empty {list}',
  },
  {
    id: 'clamp',
    names: [['clamp'], ['limit', 'to'], ['bound']],
    params: [num('x', X, -5, 15), num('low', LOW, 0, 4), high(6, 10)],
    body: `
if x < low: return low
if x > high: return high
return x`,
    doc: 'return {x}, but at least {low} and at most {high}',
  },
  {
    id: 'index-of',
    names: [['index', 'of'], ['find'], ['position', 'of']],
    params: [list('xs', 0, 5, 0, 9), num('target', TARGET, 0, 9)],
    body: `
for i in range(len(xs)):
    if xs[i] == target: return i
return -1`,
    doc: 'return the position of the first {target} in {xs}, or -1 when it is not there',
  },
  {
    id: 'last',
    names: [['last'], ['last', 'of'], ['final', 'item']],
    params: [list('xs', 0, 4, 0, 20)],
    body: `
if len(xs) == 0: return None
return xs[len(xs) - 1]`,
    doc: 'return the last item of {xs}, or {none} when it is empty',
  },
  {
    id: 'largest',
    names: [['largest'], ['max', 'of'], ['biggest']],
    params: [list('xs', 0, 5, -5, 20)],
    body: `
if len(xs) == 0: return 0
best = xs[0]
for x in xs:
    if x > best:
        best = x
return best`,
    doc: 'return the largest number in {xs}, or 0 for an empty {list}',
  },
  {
    id: 'weighted',
    names: [['weighted'], ['combine'], ['mix']],
    params: [num('x', X, -5, 12), num('y', ['y', 'extra', 'offset'], -5, 12)],
    consts: { k: [2, 9] },
    body: `
return x * {k} + y`,
    doc: 'return {x} times {k} plus {y}',
  },
  {
    id: 'is-sorted',
    names: [['is', 'sorted'], ['in', 'order'], ['is', 'ascending']],
    params: [list('xs', 0, 5, 0, 9)],
    body: `
for i in range(1, len(xs)):
    if xs[i - 1] > xs[i]: return False
return True`,
    doc: 'tell whether {xs} is in ascending order (equal neighbours are fine)',
  },
  {
    id: 'count-multiples',
    names: [['count', 'multiples'], ['count', 'divisible']],
    params: [list('xs', 0, 6, 0, 20), num('k', ['k', 'd', 'step'], 2, 5)],
    body: `
count = 0
for x in xs:
    if x % k == 0:
        count += 1
return count`,
    doc: 'count the numbers in {xs} that are multiples of {k}',
  },
  {
    id: 'ratio',
    names: [['ratio'], ['safe', 'div'], ['divide']],
    params: [num('a', ['a', 'top', 'part'], 0, 20), num('b', ['b', 'bottom', 'whole'], 0, 5)],
    body: `
if b == 0: return 0
return a / b`,
    doc: 'divide {a} by {b}, and return 0 when {b} is 0',
  },
  {
    id: 'sum-to',
    names: [['sum', 'to'], ['triangle'], ['sum', 'up', 'to']],
    params: [num('n', N, 0, 10)],
    body: `
total = 0
for i in range(1, n + 1):
    total += i
return total`,
    doc: 'add up the whole numbers from 1 to {n}',
  },
  {
    id: 'factorial',
    names: [['factorial'], ['product', 'to']],
    params: [num('n', N, 0, 8)],
    body: `
result = 1
for i in range(2, n + 1):
    result *= i
return result`,
    doc: 'return the product of the whole numbers from 1 to {n} (1 when {n} is 0)',
  },
  {
    id: 'scale',
    names: [['scale'], ['times'], ['apply', 'factor']],
    params: [num('x', X, -5, 12), num('factor', ['factor', 'rate', 'mult'], 2, 6, true)],
    body: `
if factor is None: return x
return x * factor`,
    doc: 'multiply {x} by {factor}, and return {x} unchanged when no {factor} is given',
  },
  {
    id: 'distance',
    names: [['distance'], ['gap'], ['abs', 'diff']],
    params: [num('a', ['a', 'p', 'u'], -5, 15), num('b', ['b', 'q', 'w'], -5, 15)],
    body: `
if a < b: return b - a
return a - b`,
    doc: 'return how far apart {a} and {b} are (never negative)',
  },
  {
    id: 'total-cost',
    names: [['total', 'cost'], ['price', 'for'], ['cost', 'of']],
    params: [num('qty', ['qty', 'units', 'amount'], -3, 10), num('price', ['price', 'rate', 'each'], 1, 9)],
    body: `
if qty < 0: return 0
return qty * price`,
    doc: 'return {qty} times {price}, or 0 when {qty} is negative',
  },
  {
    id: 'keep-above',
    names: [['keep', 'above'], ['only', 'above'], ['filter', 'over']],
    params: [list('xs', 0, 5, 0, 15), num('limit', LIMIT, 0, 10)],
    body: `
out = []
for x in xs:
    if x > limit:
        out.append(x)
return out`,
    doc: 'return the numbers in {xs} that are greater than {limit}, in order',
  },
  {
    id: 'count-of',
    names: [['count', 'of'], ['tally'], ['occurrences']],
    params: [list('xs', 0, 6, 0, 5), num('target', TARGET, 0, 5)],
    body: `
count = 0
for x in xs:
    if x == target:
        count += 1
return count`,
    doc: 'count how many times {target} appears in {xs}',
  },
  {
    id: 'in-range',
    names: [['in', 'range'], ['is', 'between'], ['within']],
    params: [num('x', X, -3, 12), num('low', LOW, 0, 4), high(5, 9)],
    body: `
return x >= low and x <= high`,
    doc: 'tell whether {x} is at least {low} and at most {high}',
  },
  {
    id: 'sum-first',
    names: [['sum', 'first'], ['head', 'total'], ['first', 'total']],
    params: [list('xs', 0, 5, 0, 9), num('n', N, 0, 6)],
    body: `
total = 0
for i in range(min(n, len(xs))):
    total += xs[i]
return total`,
    doc: 'add up the first {n} numbers of {xs} (all of them when there are fewer)',
  },
  {
    id: 'count-rises',
    names: [['count', 'rises'], ['rises'], ['count', 'ups']],
    params: [list('xs', 0, 6, 0, 9)],
    body: `
count = 0
for i in range(1, len(xs)):
    if xs[i] > xs[i - 1]:
        count += 1
return count`,
    doc: 'count how many numbers in {xs} are greater than the one before them',
  },
  {
    id: 'repeat',
    names: [['repeat'], ['copies'], ['fill']],
    params: [num('x', X, 0, 9), num('n', N, 0, 4)],
    body: `
out = []
for i in range(n):
    out.append(x)
return out`,
    doc: 'return a {list} of {n} copies of {x}',
  },
  {
    id: 'first-over',
    names: [['first', 'over'], ['first', 'above']],
    params: [list('xs', 0, 5, 0, 15), num('limit', LIMIT, 0, 10)],
    body: `
for x in xs:
    if x > limit: return x
return -1`,
    doc: 'return the first number in {xs} that is greater than {limit}, or -1 if there is none',
  },
];

/** File (module) names a repository's one source file is drawn from. */
export const MODULES: readonly string[] = ['calc', 'stats', 'tools', 'util', 'helpers', 'scores', 'series', 'figures', 'metrics', 'numtools', 'basics', 'ops', 'lists'];
