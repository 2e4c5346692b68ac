// measureJsonText and topLevelElements against JSON.parse and an iterative walk of its result,
// over random JSON whose strings hold quotes, backslashes, brackets and escapes.
import t from 'tap';

import { measureJsonText, topLevelElements } from '../../../../lib/env/tasks/json-text.js';
import { Rng, testSeed } from '../../../reference/random.js';

const seed = testSeed();
t.comment(`seed ${seed} (replay with SWERL_TEST_SEED=${seed})`);
const rng = new Rng(seed);

const TRICKY = ['"', '\\', '[', ']', '{', '}', ',', ':', '\\"', '\n', 'é', '\u2028', 'a'];
function randomString(): string {
  return Array.from({ length: rng.int(6) }, () => TRICKY[rng.int(TRICKY.length)]!).join('');
}
function randomValue(depth: number): unknown {
  const kind = rng.int(depth > 12 ? 3 : 6);
  if (kind === 0) return rng.normal();
  if (kind === 1) return randomString();
  if (kind === 2) return [null, true, false][rng.int(3)];
  if (kind === 3) return Array.from({ length: rng.int(4) }, () => randomValue(depth + 1));
  return Object.fromEntries(Array.from({ length: rng.int(4) }, () => [randomString(), randomValue(depth + 1)]));
}

/** The reference: depth and container count of a parsed value, walked without recursion. */
function shape(value: unknown): { depth: number; containers: number } {
  let depth = 0;
  let containers = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [item, d] = stack.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    containers++;
    depth = Math.max(depth, d + 1);
    for (const child of Object.values(item)) stack.push([child, d + 1]);
  }
  return { depth, containers };
}

t.test('measureJsonText agrees with JSON.parse at every limit', async (t) => {
  let checked = 0;
  for (let i = 0; i < 400; i++) {
    const value = randomValue(0);
    const text = JSON.stringify(value, null, rng.int(2) ? 0 : 2);
    const truth = shape(JSON.parse(text));
    for (const depth of [truth.depth - 1, truth.depth]) {
      if (depth < 0) continue;
      const excess = measureJsonText(text, { depth, containers: Infinity });
      if ((excess?.kind === 'depth') !== depth < truth.depth) t.fail(`depth limit ${depth} on ${text}`);
      checked++;
    }
    for (const containers of [truth.containers - 1, truth.containers]) {
      if (containers < 0) continue;
      const excess = measureJsonText(text, { depth: Infinity, containers });
      if ((excess?.kind === 'containers') !== containers < truth.containers) t.fail(`container limit ${containers} on ${text}`);
      checked++;
    }
  }
  t.ok(checked > 1000, `${checked} limits checked against the parsed values`);
});

t.test('the path names the keys and indices down to the excess, escapes decoded', async (t) => {
  const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
  t.same(measureJsonText(`{"a": 1, "b\\"[x": [0, {"c": ${deep(3)}}]}`, { depth: 4, containers: 99 }), { kind: 'depth', path: ['b"[x', 1, 'c', 0] });
  t.equal(measureJsonText(`{"a": "${'['.repeat(1000)}"}`, { depth: 1, containers: 1 }), null, 'brackets inside a string are text');
  t.equal(measureJsonText(`{"a": "\\\\"}`, { depth: 1, containers: 1 }), null, 'an escaped backslash ends before the quote');
  t.same(measureJsonText(deep(10), { depth: 64, containers: 5 }), { kind: 'containers', path: [0, 0, 0, 0, 0] });
  t.equal(measureJsonText('{"unterminated": "[[[[', { depth: 1, containers: 9 }), null, 'malformed text is left for JSON.parse');
  t.same(measureJsonText(deep(5_000_000), { depth: 64, containers: Infinity })?.path.length, 64, 'five million deep: stopped at the limit');
});

t.test('topLevelElements splits an array the way JSON.parse reads it', async (t) => {
  for (let i = 0; i < 300; i++) {
    const rows = Array.from({ length: rng.int(5) }, () => randomValue(1));
    const text = JSON.stringify(rows, null, rng.int(2) ? 0 : 1);
    const split = topLevelElements(text)!;
    t.same(split.spans.map(([a, b]) => JSON.parse(text.slice(a, b))), JSON.parse(text), `elements of random array ${i} (${text.length} chars)`);
    t.notOk(split.unclosed || split.trailing);
  }
  t.equal(topLevelElements(' {"a": [1, 2]}'), null, 'an object is not an array');
  t.same(topLevelElements('[1, [2, 3]'), { spans: [[1, 2], [3, 10]], unclosed: true, trailing: false });
  t.same(topLevelElements('[1] 2'), { spans: [[1, 2]], unclosed: false, trailing: true });
  t.same(topLevelElements('[ ]'), { spans: [], unclosed: false, trailing: false });
  t.same(topLevelElements('[1,]'), { spans: [[1, 2], [3, 3]], unclosed: false, trailing: false }, 'a trailing comma leaves an empty element');
});
