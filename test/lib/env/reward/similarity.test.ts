import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import t from 'tap';

import { changedText, patchSimilarity, textSimilarity } from '../../../../lib/env/reward/similarity.js';
import { Rng, testSeed } from '../../../reference/random.js';

const seed = testSeed();
t.comment(`seed ${seed} (replay with SWERL_TEST_SEED=${seed})`);
const rng = new Rng(seed);

const SWE_MINI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../tasks/swe-mini');

/** The reference: LCS by memoized recursion over suffixes (not the row table), units weighted. */
function referenceLcs(a: string[], b: string[], weight: (unit: string) => number): number {
  const memo = new Map<number, number>();
  const go = (i: number, j: number): number => {
    if (i === a.length || j === b.length) return 0;
    const key = i * (b.length + 1) + j;
    const known = memo.get(key);
    if (known !== undefined) return known;
    const value = a[i] === b[j] ? weight(a[i]!) + go(i + 1, j + 1) : Math.max(go(i + 1, j), go(i, j + 1));
    memo.set(key, value);
    return value;
  };
  return go(0, 0);
}

function referenceRatio(a: string, b: string): number {
  const ca = [...a];
  const cb = [...b];
  return (2 * referenceLcs(ca, cb, () => 1)) / (ca.length + cb.length);
}

function randomText(length: number, alphabet: string): string {
  return Array.from({ length }, () => alphabet[rng.int(alphabet.length)]).join('');
}

t.test('textSimilarity: 2 LCS / (|a| + |b|), against a recursive reference on random texts', async (t) => {
  for (let trial = 0; trial < 200; trial++) {
    const alphabet = ['ab', 'abc\n', 'x <=>=+-1é'][trial % 3]!;
    const a = randomText(rng.int(40), alphabet);
    const b = rng.int(3) === 0 ? a : randomText(rng.int(40), alphabet);
    const expected = a.length + b.length === 0 ? 1 : referenceRatio(a, b);
    t.equal(textSimilarity(a, b), expected, `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
    t.equal(textSimilarity(b, a), expected, 'symmetric');
  }
  t.equal(textSimilarity('abc', 'abc'), 1);
  t.equal(textSimilarity('abc', 'xyz'), 0);
  t.equal(textSimilarity('', 'xyz'), 0);
  t.equal(textSimilarity('ab', 'abcd'), 2 * 2 / 6);
});

t.test('textSimilarity of long texts compares lines, each weighing its length and newline', async (t) => {
  // 4,100 x 4,100 characters is past the character table's 16 M cells.
  const lines = Array.from({ length: 100 }, () => randomText(40, 'abcdefgh'));
  const other = lines.map((line) => (rng.int(3) === 0 ? randomText(40, 'abcdefgh') : line));
  const a = lines.join('\n');
  const b = other.join('\n');
  t.ok(a.length * b.length > 16_000_000, `${a.length} x ${b.length} characters`);
  const size = (line: string) => line.length + 1;
  const expected = (2 * referenceLcs(lines, other, size)) / (lines.reduce((s, l) => s + size(l), 0) + other.reduce((s, l) => s + size(l), 0));
  t.equal(textSimilarity(a, b), expected);
  t.ok(expected > 0.4 && expected < 1, `${expected}`);
});

const patch = (file: string, start: number, removed: string, added: string, context = 'def f(x):') =>
  `diff --git a/${file} b/${file}\nindex 1111111..2222222 100644\n--- a/${file}\n+++ b/${file}\n@@ -${start},2 +${start},2 @@\n ${context}\n-${removed}\n+${added}\n`;

t.test('changedText: each file\'s paths and its removed and added lines, nothing else', async (t) => {
  t.equal(changedText(patch('a.py', 3, '    return x <= low', '    return x <= high')), 'a/a.py b/a.py\n-    return x <= low\n+    return x <= high');
  t.equal(changedText(''), '');
});

t.test('patchSimilarity ranks a near miss above an edit elsewhere, whatever the hunk offsets', async (t) => {
  const gold = patch('tools.py', 8, '    return x >= low and x <= low', '    return x >= low and x <= high');
  t.equal(patchSimilarity(gold, gold), 1);
  t.equal(patchSimilarity(patch('tools.py', 30, '    return x >= low and x <= low', '    return x >= low and x <= high', 'other context'), gold), 1, 'offsets and context do not count');
  const nearMiss = patchSimilarity(patch('tools.py', 8, '    return x >= low and x <= low', '    return x > low and x <= high'), gold);
  const wrongFix = patchSimilarity(patch('tools.py', 8, '    return x >= low and x <= low', '    return y'), gold);
  const elsewhere = patchSimilarity(patch('tools.py', 2, '    for i in range(len(items)):', '    for i in range(len(items) - 1):'), gold);
  const otherFile = patchSimilarity(patch('other.py', 8, '    pass', '    return 0'), gold);
  t.ok(1 > nearMiss && nearMiss > wrongFix && wrongFix > elsewhere && elsewhere > otherFile && otherFile > 0, `${nearMiss} > ${wrongFix} > ${elsewhere} > ${otherFile}`);
  t.equal(patchSimilarity('', gold), 0, 'an episode that changed nothing earns nothing');
});

t.test('every swe-mini gold patch is 1 against itself and below 1 against the others', async (t) => {
  const names = readdirSync(SWE_MINI).filter((name) => !name.startsWith('.') && !name.endsWith('.md') && !name.endsWith('.json'));
  const golds = names.map((name) => readFileSync(path.join(SWE_MINI, name, 'gold.patch'), 'utf8'));
  t.ok(golds.length >= 20, `${golds.length} gold patches`);
  golds.forEach((gold, i) => {
    t.equal(patchSimilarity(gold, gold), 1, names[i]);
    const j = (i + 1) % golds.length;
    const s = patchSimilarity(golds[j]!, gold);
    t.ok(s >= 0 && s < 1, `${names[j]} against ${names[i]}: ${s}`);
  });
});
