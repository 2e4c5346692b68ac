/**
 * Patches of generated tasks that are not fixes: the source special-casing calls of the hidden
 * issue tests (read from the tests as their assertions write them). sandbox.test.ts shows them
 * scoring 0; plain-pytest.test.ts grades them under both of grading's Python runners.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import type { Task } from '../../lib/env/task.js';

export interface IssueCheck {
  fn: string;
  args: string;
  expected: string;
}

/** The calls of each hidden issue test and their expected values, one list a bug. */
export function issueChecks(task: Task): IssueCheck[][] {
  const meta = task.metadata.sweGen as { file: string; language: string };
  const module = meta.file.replace(/\.(py|js)$/, '');
  if (task.hiddenTests.kind !== 'files') throw new Error(`${task.id}: hidden tests are not files`);
  const testFile = path.join(task.hiddenTests.dir, meta.language === 'python' ? `tests/test_${module}.py` : `test/${module}.test.js`);
  const text = readFileSync(testFile, 'utf8');
  const failToPass = task.resolution.rule === 'swe-bench' ? task.resolution.failToPass : [];
  return failToPass.map((id) => {
    const name = meta.language === 'python' ? id.split('::')[1]! : id;
    const start = text.indexOf(meta.language === 'python' ? `def ${name}():` : `test('${name}'`);
    const body = text.slice(start, text.indexOf(meta.language === 'python' ? '\n\n' : '\n});', start));
    const re = meta.language === 'python' ? /assert (\w+)\(([^()]*)\) (?:==|is) (.+)/g : /assert\.deepEqual\((\w+)\(([^()]*)\), (.+)\);/g;
    return [...body.matchAll(re)].map((m) => ({ fn: m[1]!, args: m[2]!, expected: m[3]! }));
  });
}

/** The source with each check's call answered by its expected value at the top of the function: no fix, a lookup. */
export function hardCoded(source: string, language: string, checks: readonly IssueCheck[]): string {
  const lines = source.split('\n');
  for (const c of checks) {
    const at = lines.findIndex((l) => (language === 'python' ? l.startsWith(`def ${c.fn}(`) : l.startsWith(`export function ${c.fn}(`)));
    const params = lines[at]!.slice(lines[at]!.indexOf('(') + 1, lines[at]!.indexOf(')')).split(',').map((p) => p.trim().replace(/=.*$/, '')).filter(Boolean);
    lines.splice(at + 1, 0, language === 'python'
      ? `    if (${params.join(', ')},) == (${c.args},): return ${c.expected}`
      : `  if (JSON.stringify([${params.join(', ')}]) === JSON.stringify([${c.args}])) return ${c.expected};`);
  }
  return lines.join('\n');
}
