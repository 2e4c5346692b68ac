/** JavaScript: an ES module at the repository's root, node:test tests in test/ (Node 20, no dependencies). */
import { functionName, type Expr, type FunctionDef, type Stmt } from './program.js';
import { operand, precedence, type Renderer, type TestSpec } from './renderer.js';
import { literal } from './values.js';
import { internalError } from '../../errors.js';

const INDENT = '  ';
const OPS: Record<string, string> = { '==': '===', '!=': '!==', and: '&&', or: '||' };

export function javascriptExpr(e: Expr): string {
  const p = precedence(e);
  const sub = (child: Expr, right = false) => operand(javascriptExpr(child), child, p, right);
  switch (e.k) {
    case 'num':
      return String(e.value);
    case 'bool':
      return String(e.value);
    case 'none':
      return 'undefined';
    case 'emptyList':
      return '[]';
    case 'var':
      return e.name;
    case 'bin':
      return `${sub(e.left)} ${e.op} ${sub(e.right, true)}`;
    case 'cmp':
      return `${sub(e.left)} ${OPS[e.op] ?? e.op} ${sub(e.right, true)}`;
    case 'and':
    case 'or':
      return `${sub(e.left)} ${OPS[e.k]} ${sub(e.right, true)}`;
    case 'isNone':
      return `${sub(e.value)} === undefined`;
    case 'index':
      return `${sub(e.list)}[${javascriptExpr(e.index)}]`;
    case 'call':
      if (e.fn === 'len') return `${operand(javascriptExpr(e.args[0]!), e.args[0]!, 7, false)}.length`;
      return `Math.${e.fn}(${e.args.map(javascriptExpr).join(', ')})`;
  }
}

/** Statements the function declares with `let`: its first assignment of each name. */
function simple(s: Stmt, declared: Set<string>): string {
  switch (s.k) {
    case 'assign': {
      const first = !declared.has(s.name);
      declared.add(s.name);
      return `${first ? 'let ' : ''}${s.name} = ${javascriptExpr(s.value)};`;
    }
    case 'aug':
      return `${s.name} ${s.op}= ${javascriptExpr(s.value)};`;
    case 'append':
      return `${s.list}.push(${javascriptExpr(s.value)});`;
    case 'return':
      return `return ${javascriptExpr(s.value)};`;
    default:
      throw internalError(`swe-gen: ${s.k} is not a one-line statement`);
  }
}

function statements(body: readonly Stmt[], depth: number, declared: Set<string>): string[] {
  const pad = INDENT.repeat(depth);
  const block = (head: string, inner: readonly Stmt[]) => [`${pad}${head} {`, ...statements(inner, depth + 1, declared), `${pad}}`];
  return body.flatMap((s): string[] => {
    switch (s.k) {
      case 'if':
        if (s.inline) return [`${pad}if (${javascriptExpr(s.cond)}) ${simple(s.body[0]!, declared)}`];
        return block(`if (${javascriptExpr(s.cond)})`, s.body);
      case 'range':
        return block(`for (let ${s.name} = ${javascriptExpr(s.from)}; ${s.name} < ${javascriptExpr(s.to)}; ${s.name}++)`, s.body);
      case 'each':
        return block(`for (const ${s.name} of ${javascriptExpr(s.list)})`, s.body);
      default:
        return [pad + simple(s, declared)];
    }
  });
}

function javascriptFunction(fn: FunctionDef): string[] {
  const declared = new Set(fn.params.map((p) => p.name));
  const params = fn.params.map((p) => p.name).join(', ');
  return [`export function ${functionName(fn.words, 'javascript')}(${params}) {`, ...statements(fn.body, 1, declared), '}'];
}

export const javascript: Renderer = {
  language: 'javascript',
  short: 'js',
  sourcePath: (module) => `${module}.js`,
  testPath: (module) => `test/${module}.test.js`,
  extraFiles: (module) => ({ 'package.json': `${JSON.stringify({ name: module, type: 'module' }, null, 2)}\n` }),
  gitignore: 'node_modules/\n',
  source: (fns) => `${fns.map((fn) => javascriptFunction(fn).join('\n')).join('\n\n')}\n`,
  call: (fn, args) => `${fn}(${args.map((a) => literal(a, 'javascript')).join(', ')})`,
  testName: (spec) => `${spec.fn}${spec.issue ? ' issue' : ''}`,
  testFile(module, specs) {
    const imported = [...new Set(specs.map((s) => s.fn))];
    const tests = specs.map((spec: TestSpec) =>
      [
        `test('${this.testName(spec)}', () => {`,
        ...spec.checks.map((c) => `${INDENT}assert.deepEqual(${this.call(spec.fn, c.args)}, ${literal(c.expected, 'javascript')});`),
        '});',
      ].join('\n'),
    );
    const head = [`import { test } from 'node:test';`, `import assert from 'node:assert/strict';`, `import { ${imported.join(', ')} } from '../${module}.js';`];
    return `${head.join('\n')}\n\n${tests.join('\n\n')}\n`;
  },
  testId(_module, spec) {
    return this.testName(spec);
  },
  // One test file, run directly: the same TAP as `node --test` gives for it, from one process
  // instead of a runner and a child (half the CPU of every grading of a JavaScript task).
  testCommand(module) {
    return `node --test-reporter=tap ${this.testPath(module)}`;
  },
  logFormat: 'node-tap',
  raised: (error) => `throws a ${error}`,
  listWord: 'array',
  noneWord: 'undefined',
};
