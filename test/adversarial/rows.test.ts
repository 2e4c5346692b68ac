/**
 * Malformed and hostile dataset rows: generated variants of real SWE-bench rows (the vendored
 * marshmallow rows) with fields dropped, retyped, nested thousands deep, blown up, truncated,
 * not UTF-8; plus files that are not rows at all. Each loads or is refused with a SwerlError
 * naming file:line, within its bound; with onError: 'skip' the good rows beside it still load.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import t from 'tap';

import { loadTasks } from '../../lib/env/tasks/load.js';
import { MAX_ROW_BYTES } from '../../lib/env/tasks/rows.js';
import { AdversarialTally } from '../support/adversarial.js';
import { Rng, testSeed } from '../reference/random.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REAL_ROWS = readFileSync(path.join(HERE, '../fixtures/swe-real/rows.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
const VARIANTS = 600;
const BOUND_MS = 2000;

/** A hostile field value, as JSON text (a deep one cannot go through JSON.stringify). */
function hostileValue(rng: Rng): string {
  const depth = 65 + rng.int(20_000);
  const values: Array<() => string> = [
    () => 'null', () => '0', () => '-1', () => '1e308', () => 'true', () => '""', () => '[]', () => '{}', () => '[null]',
    () => JSON.stringify('x'.repeat(1 + rng.int(2_000_000))),
    () => '"\\u0000\\ud800\\uffff"',
    () => '['.repeat(depth) + ']'.repeat(depth),
    () => '{"a":'.repeat(depth) + '0' + '}'.repeat(depth),
    () => JSON.stringify(Array.from({ length: 1 + rng.int(50_000) }, (_, i) => `tests/test_${i}.py::t`)),
    () => JSON.stringify('["tests::a", '),
    () => JSON.stringify('diff --git a/x b/x\n' + '+'.repeat(10_000)),
  ];
  return values[rng.int(values.length)]!();
}

function variant(rng: Rng, id: number): string {
  const row: Record<string, unknown> = { ...REAL_ROWS[rng.int(REAL_ROWS.length)]!, instance_id: `owner__repo-${id}` };
  const keys = Object.keys(row);
  const hostile: string[] = [];
  for (let n = 1 + rng.int(3); n > 0; n--) {
    const key = rng.int(6) === 0 ? `extra_${rng.int(5)}` : keys[rng.int(keys.length)]!;
    if (rng.int(3) === 0) {
      delete row[key];
    } else {
      row[key] = `@hostile-${hostile.length}@`;
      hostile.push(hostileValue(rng));
    }
  }
  let text = JSON.stringify(row);
  hostile.forEach((value, i) => (text = text.replace(`"@hostile-${i}@"`, () => value)));
  switch (rng.int(8)) {
    case 0: return text.slice(0, rng.int(text.length));       // truncated
    case 1: return '\ufeff' + text;                           // byte-order mark
    default: return text;
  }
}

const NOT_ROWS: Array<[string, string | Buffer]> = [
  ['a bare number', '42\n'],
  ['a string', '"row"\n'],
  ['null', 'null\n'],
  ['an array of arrays', '[[1], [2]]\n'],
  ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d, 0x0a])],
  ['NUL bytes', Buffer.alloc(1000)],
  ['only newlines', '\n'.repeat(100_000)],
  ['a 100k-deep array', '['.repeat(100_000) + ']'.repeat(100_000) + '\n'],
  ['a duplicate id', `${JSON.stringify(REAL_ROWS[0])}\n${JSON.stringify(REAL_ROWS[0])}\n`],
  ['CRLF lines', REAL_ROWS.map((r) => JSON.stringify(r)).join('\r\n') + '\r\n'],
];

t.test('hostile rows', async (t) => {
  const seed = testSeed();
  t.comment(`seed ${seed} (SWERL_TEST_SEED=${seed} replays it)`);
  const rng = new Rng(seed);
  const dir = t.testdir();
  const tally = new AdversarialTally('rows', { clock: 'cpu' });
  let skippedNamed = 0;

  for (let i = 0; i < VARIANTS; i++) {
    const file = path.join(dir, `variant-${i}.jsonl`);
    const good = JSON.stringify({ ...REAL_ROWS[0], instance_id: `good__row-${i}` });
    writeFileSync(file, `${good}\n${variant(rng, i)}\n`);
    await tally.case(`variant ${i}`, async () => {
      // Stop at the bad row, or load it: a clean error names the file and line 2.
      await loadTasks(file).catch((error) => {
        if (!String(error?.message).startsWith(`${file}:2: `)) throw new Error(`not named by file:line: ${error?.stack ?? error}`);
        throw error;
      });
    }, BOUND_MS);
    await tally.case(`variant ${i}, skipped`, async () => {
      const { tasks, problems } = await loadTasks(file, { onError: 'skip' });
      if (tasks[0]?.id !== `good__row-${i}`) throw new Error('the good row beside it did not load');
      if (problems.length > 0) skippedNamed += problems.every((p) => p.line === 2) ? 1 : 0;
    }, BOUND_MS);
  }
  for (const [name, content] of NOT_ROWS) {
    const file = path.join(dir, `${name.replace(/\W+/g, '-')}.jsonl`);
    writeFileSync(file, content);
    await tally.case(name, async () => void (await loadTasks(file, { format: 'swe-bench' })), BOUND_MS);
  }
  const huge = path.join(dir, 'huge-row.jsonl');
  writeFileSync(huge, Buffer.concat([Buffer.from('{"instance_id": "'), Buffer.alloc(MAX_ROW_BYTES + 1, 0x61), Buffer.from('"}\n')]));
  await tally.case('a row over the row size limit', async () => {
    const { problems } = await loadTasks(huge, { onError: 'skip', format: 'swe-bench' });
    if (!/is larger than 64 MiB/.test(problems[0]?.message ?? '')) throw new Error(`not refused by size: ${JSON.stringify(problems)}`);
  }, 5 * BOUND_MS);

  t.ok(skippedNamed > 0, `${skippedNamed} refused variants were skipped at their own line`);
  tally.report(t);
});
