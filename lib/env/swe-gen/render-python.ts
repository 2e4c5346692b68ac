/** Python: a module at the repository's root, pytest tests in tests/ (Debian's python3 and pytest). */
import { functionName, type Expr, type FunctionDef, type Stmt } from './program.js';
import { operand, precedence, type Renderer } from './renderer.js';
import { literal, type Value } from './values.js';
import { internalError } from '../../errors.js';

const INDENT = '    ';

export function pythonExpr(e: Expr): string {
  const p = precedence(e);
  const sub = (child: Expr, right = false) => operand(pythonExpr(child), child, p, right);
  switch (e.k) {
    case 'num':
      return String(e.value);
    case 'bool':
      return e.value ? 'True' : 'False';
    case 'none':
      return 'None';
    case 'emptyList':
      return '[]';
    case 'var':
      return e.name;
    case 'bin':
    case 'cmp':
      return `${sub(e.left)} ${e.op} ${sub(e.right, true)}`;
    case 'and':
    case 'or':
      return `${sub(e.left)} ${e.k} ${sub(e.right, true)}`;
    case 'isNone':
      return `${sub(e.value)} is None`;
    case 'index':
      return `${sub(e.list)}[${pythonExpr(e.index)}]`;
    case 'call':
      return `${e.fn}(${e.args.map(pythonExpr).join(', ')})`;
  }
}

function simple(s: Stmt): string {
  switch (s.k) {
    case 'assign':
      return `${s.name} = ${pythonExpr(s.value)}`;
    case 'aug':
      return `${s.name} ${s.op}= ${pythonExpr(s.value)}`;
    case 'append':
      return `${s.list}.append(${pythonExpr(s.value)})`;
    case 'return':
      return `return ${pythonExpr(s.value)}`;
    default:
      throw internalError(`swe-gen: ${s.k} is not a one-line statement`);
  }
}

function rangeArgs(from: Expr, to: Expr): string {
  return from.k === 'num' && from.value === 0 ? pythonExpr(to) : `${pythonExpr(from)}, ${pythonExpr(to)}`;
}

function statements(body: readonly Stmt[], depth: number): string[] {
  const pad = INDENT.repeat(depth);
  return body.flatMap((s): string[] => {
    switch (s.k) {
      case 'if':
        if (s.inline) return [`${pad}if ${pythonExpr(s.cond)}: ${simple(s.body[0]!)}`];
        return [`${pad}if ${pythonExpr(s.cond)}:`, ...statements(s.body, depth + 1)];
      case 'range':
        return [`${pad}for ${s.name} in range(${rangeArgs(s.from, s.to)}):`, ...statements(s.body, depth + 1)];
      case 'each':
        return [`${pad}for ${s.name} in ${pythonExpr(s.list)}:`, ...statements(s.body, depth + 1)];
      default:
        return [pad + simple(s)];
    }
  });
}

function pythonFunction(fn: FunctionDef): string[] {
  const params = fn.params.map((p) => (p.optional ? `${p.name}=None` : p.name)).join(', ');
  return [`def ${functionName(fn.words, 'python')}(${params}):`, ...statements(fn.body, 1)];
}

function assertion(call: string, expected: Value): string {
  // `is` for the singletons, so that 1 does not pass for True
  const op = expected.t === 'bool' || expected.t === 'none' ? 'is' : '==';
  return `${INDENT}assert ${call} ${op} ${literal(expected, 'python')}`;
}

export const python: Renderer = {
  language: 'python',
  short: 'py',
  sourcePath: (module) => `${module}.py`,
  testPath: (module) => `tests/test_${module}.py`,
  extraFiles: () => ({}),
  gitignore: '__pycache__/\n',
  source: (fns) => `${fns.map((fn) => pythonFunction(fn).join('\n')).join('\n\n')}\n`,
  call: (fn, args) => `${fn}(${args.map((a) => literal(a, 'python')).join(', ')})`,
  testName: (spec) => `test_${spec.fn}${spec.issue ? '_issue' : ''}`,
  testFile(module, specs) {
    const imported = [...new Set(specs.map((s) => s.fn))];
    const tests = specs.map((spec) =>
      [`def ${this.testName(spec)}():`, ...spec.checks.map((c) => assertion(this.call(spec.fn, c.args), c.expected))].join('\n'),
    );
    return `from ${module} import ${imported.join(', ')}\n\n${tests.join('\n\n')}\n`;
  },
  testId(module, spec) {
    return `${this.testPath(module)}::${this.testName(spec)}`;
  },
  testCommand(module) {
    // The tests need no plugin; whatever the host installed (pytest-benchmark here: ~0.1 s of
    // every grading run inside the sandbox, more outside) is not loaded.
    return `PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -m pytest -rA -p no:cacheprovider ${this.testPath(module)}`;
  },
  logFormat: 'pytest',
  raised: (error) => `raises ${error}`,
  listWord: 'list',
  noneWord: 'None',
};
