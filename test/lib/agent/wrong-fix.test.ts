import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import t from 'tap';

import { wrongFixes } from '../../../lib/agent/wrong-fix.js';
import { writeSweGenSuite } from '../../../lib/env/swe-gen/index.js';

/** The positions at which two lines' tokens (words, numbers, operators; spaces apart) differ, or null when their counts differ. */
function differingTokens(a: string, b: string): number[] | null {
  const split = (line: string) => line.trim().split(/(\s+|[A-Za-z_]\w*|\d+|[^\s\w]+)/).filter((x) => x !== '' && !/^\s+$/.test(x));
  const x = split(a), y = split(b);
  if (x.length !== y.length) return null;
  return x.flatMap((token, i) => (token === y[i] ? [] : [i]));
}

t.test('a one-token fix: the same token, changed to another of its class', async (t) => {
  const js = wrongFixes('  if (x !== key) {', '  if (x === key) {', 'function f(x, key) {\n  if (x !== key) {\n');
  t.same(js, ['  if (x < key) {', '  if (x <= key) {', '  if (x > key) {', '  if (x >= key) {'], "JavaScript's strict comparisons stay strict; neither the bug nor the fix");
  const py = wrongFixes('    if a >= b:', '    if a > b:', 'def f(a, b):\n    if a >= b:\n');
  t.same(py, ['    if a < b:', '    if a <= b:', '    if a == b:', '    if a != b:'], "Python's comparisons, the buggy >= left out");
  t.same(wrongFixes('  total -= x', '  total += x', ''), ['  total *= x', '  total /= x'], 'an augmented operator: its operator changed');
  t.same(wrongFixes('    return a - b', '    return a + b', ''), ['    return a * b', '    return a / b'], 'arithmetic');
  t.same(wrongFixes('  for i in range(1, n):', '  for i in range(0, n):', ''), ['  for i in range(2, n):'], 'a number: the fix\'s by one or two, never below 0 and never the bug');
  t.same(wrongFixes('    return items[i - 1]', '    return items[i - 2]', ''), ['    return items[i - 3]', '    return items[i - 4]'], 'never `i - 0` (no change at all) nor the bug');
  t.same(
    wrongFixes('    return low', '    return high', 'def clamp(value, low, high):\n    if value < low: return low\n    return clamp2(value)\n'),
    ['    return value'],
    'a name: another variable of the file (not the bug, not a called name, not a keyword)',
  );
});

t.test('a fix of more than one token: any operator, comparison or number of the buggy line', async (t) => {
  const wrong = wrongFixes('    for i in range(n + 1):', '    for i in range(n):', '');
  t.ok(wrong.length > 0, 'some');
  for (const line of wrong) t.same(differingTokens(line, '    for i in range(n + 1):')?.length, 1, `${line}: one token of the buggy line changed`);
  t.same(wrong, ['    for i in range(n - 1):', '    for i in range(n + 2):', '    for i in range(n + 3):'], 'never `n * 1` or `n + 0`: the fix by another name');
  t.same(wrongFixes('    pass', '    return 0', ''), [], 'nothing to change: none');
});

t.test('on generated tasks of every kind and language: wrong fixes are one-token edits, never the bug or the fix', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'swerl-wrong-fix-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const suite = await writeSweGenSuite(dir, { split: 'train', firstSeed: 0, count: 40 });
  const kinds = new Set<string>();
  let withSome = 0;
  for (const task of suite.tasks) {
    const meta = task.metadata.sweGen as { file: string; language: string; bugs: { kind: string; before: string; after: string }[] };
    if (meta.bugs.length !== 1 || meta.bugs[0]!.before.includes('\n') || meta.bugs[0]!.after.includes('\n')) continue;
    const { before, after, kind } = meta.bugs[0]!;
    const wrong = wrongFixes(before, after, readFileSync(path.join(task.repoDir!, meta.file), 'utf8'));
    if (wrong.length) withSome++, kinds.add(`${meta.language} ${kind}`);
    for (const line of wrong) {
      t.not(line, before, `${task.id}: not the bug`);
      t.not(line, after, `${task.id}: not the fix`);
      const fromFix = differingTokens(line, after), fromBug = differingTokens(line, before);
      t.ok(fromFix?.length === 1 || fromBug?.length === 1, `${task.id} (${kind}): ${JSON.stringify(line)} is one token off the fix or the bug`);
    }
  }
  t.ok(withSome >= 20, `most one-line tasks have wrong fixes (${withSome})`);
  t.ok(kinds.size >= 6, `across kinds and languages: ${[...kinds].sort().join(', ')}`);
});
