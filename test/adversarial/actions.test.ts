/**
 * 10,000 generated malformed actions, as a model in RL writes them, through every parser of
 * model output: text calls, JSON tool calls, Qwen's <tool_call> blocks. Each must return or
 * fail with a SwerlError within 100 ms of CPU; the short ones must also parse exactly as the old
 * regex grammar did (the reference below, safe on inputs this short).
 */
import t from 'tap';

import { parseJsonToolCalls, parseTextAction, type Action } from '../../lib/env/actions.js';
import type { JsonToolCall } from '../../lib/types/tool-call.js';
import { parseToolCalls } from '../../lib/model/tool-calls.js';
import { AdversarialTally, tapLine } from '../support/adversarial.js';
import { Rng, testSeed } from '../reference/random.js';

const CASES = 10_000;
// Of CPU: linear parsing of the longest texts here takes ~40 ms, a backtracking pattern seconds.
const BOUND_MS = 100;

/** The grammar as it was first written: backtracking regexes, fine below a few hundred chars. */
function referenceParse(response: string): Action | null {
  const open = /<function\s*=\s*([^>]*?)\s*>/.exec(response);
  if (!open || open[1] === '') return null;
  const bodyStart = open.index + open[0].length;
  const close = response.indexOf('</function>', bodyStart);
  const body = response.slice(bodyStart, close < 0 ? undefined : close);
  const args: Record<string, string> = {};
  for (const [, key, value] of body.matchAll(/<parameter\s*=\s*([^>]*?)\s*>([\s\S]*?)<\/parameter>/g)) args[key!] = value!.trim();
  return { name: open[1]!, args };
}

const PIECES = [
  '<function=', '<function', '</function>', '<parameter=', '<parameter', '</parameter>', '>', '=', '<', '/',
  'execute_bash', 'file_editor', 'cmd', 'path', ' ', '\n', '\t', '\u00a0', '\u2028', 'ls -la', '😀', '\u0000',
  '<tool_call>', '</tool_call>', '{"name": "search", "arguments": {', '}', '"', '\\',
  // Whitespace and near-whitespace: the scanner's trim() must agree with the regex's \s on each.
  '\u3000', '\ufeff', '\u2029', '\u000b', '\r', '\u180e', '\u200b', '\ud800',
];

/** Any UTF-16 code unit, lone surrogates included. */
function randomUnit(rng: Rng): string {
  return String.fromCharCode(rng.int(0x10000));
}

function shortText(rng: Rng): string {
  let text = '';
  const n = 1 + rng.int(16);
  for (let i = 0; i < n; i++) text += rng.int(8) ? PIECES[rng.int(PIECES.length)] : randomUnit(rng);
  return text;
}

const FILLERS = [' ', '\n', '\t', '=', '<', 'a', '<parameter=', '<function', '<parameter=k>v</parameter>', '<parameter=k>', '\u3000'];

function hugeText(rng: Rng): string {
  const unit = FILLERS[rng.int(FILLERS.length)]!;
  const filler = unit.repeat(Math.ceil((20_000 + rng.int(80_000)) / unit.length));
  const prefix = ['<function=', '<function=x>\n<parameter=', '<function', '<function=x><parameter=k>', ''][rng.int(5)];
  return prefix + filler + ['', '>', '</parameter>', '</function>'][rng.int(4)];
}

function deepJson(rng: Rng): string {
  const n = 60 + rng.int(20_000);
  return rng.int(2) ? '['.repeat(n) + ']'.repeat(n) : '{"a":'.repeat(n) + 'null' + '}'.repeat(n);
}

function jsonCalls(rng: Rng): unknown {
  const args: unknown[] = [
    deepJson(rng), '{oops', '', 'null', '[1,2]', '"text"', '{"cmd": "ls"}', 42, null, undefined, [], { cmd: null },
    { cmd: { nested: [1, { deeper: true }] } }, '{"a":' + '"x"'.repeat(3), '\u0000{}',
    { cmd: 5, path: true, view_range: [1, 'x'], x: undefined }, '{"cmd": "' + 'y'.repeat(100_000) + '"}',
    // Cut anywhere: a sampler stopped mid-call.
    '{"cmd": "ls -la", "path": ["/a", {"b": [1, 2]}], "n": 3}'.slice(0, rng.int(52)),
  ];
  const names: unknown[] = ['execute_bash', '', null, 7, undefined, 'x'.repeat(10_000)];
  const calls = [
    { function: { name: names[rng.int(names.length)], arguments: args[rng.int(args.length)] } },
    { function: null },
    {},
    null,
    'not a call',
  ];
  return rng.int(4) ? [calls[0]] : [calls[rng.int(calls.length)]];
}

t.test(`${CASES} malformed actions`, async (t) => {
  const seed = testSeed();
  t.comment(`seed ${seed} (SWERL_TEST_SEED=${seed} replays it)`);
  const rng = new Rng(seed);
  const tally = new AdversarialTally('actions', { clock: 'cpu' });
  let mismatches = 0;
  for (let i = 0; i < CASES; i++) {
    const kind = i % 5;
    if (kind <= 1) {
      const text = shortText(rng);
      await tally.case(`short text ${JSON.stringify(text)}`, () => {
        const parsed = parseTextAction(text);
        if (JSON.stringify(parsed) !== JSON.stringify(referenceParse(text))) {
          mismatches++;
          throw new Error(`differs from the regex grammar on ${JSON.stringify(text)}: ${JSON.stringify(parsed)}`);
        }
      }, BOUND_MS);
    } else if (kind === 2) {
      const text = hugeText(rng);
      await tally.case(`huge text (${text.length} chars) ${JSON.stringify(text.slice(0, 30))}`, () => void parseTextAction(text), BOUND_MS);
    } else if (kind === 3) {
      const calls = jsonCalls(rng);
      await tally.case(`JSON tool calls ${JSON.stringify(calls)?.slice(0, 80)}`, () => {
        parseJsonToolCalls(calls as JsonToolCall[]);
      }, BOUND_MS);
    } else {
      const body = rng.int(2) ? deepJson(rng) : shortText(rng);
      const text = `<tool_call>\n{"name": "search", "arguments": ${body}}${rng.int(2) ? '\n</tool_call>' : ''}`;
      await tally.case(`<tool_call> ${JSON.stringify(text.slice(0, 60))}`, () => {
        const parsed = parseToolCalls(text);
        // Never a throw: what cannot be read is a line in errors.
        if (parsed.toolCalls.length + parsed.errors.length < 1) throw new Error('expected a call or an error line');
      }, BOUND_MS);
    }
  }
  t.equal(mismatches, 0, 'short texts parse exactly as the regex grammar');
  tally.report(t);
});

// A short text is the longest case when a GC lands in it, and its name carries the raw U+2028
// JSON.stringify leaves in: that once hid the report's lines from tap and failed a passing run.
t.test('a report whose names hold line separators still parses', async (t) => {
  const tally = new AdversarialTally('separators', { clock: 'cpu' });
  for (const name of ['short text "a\u2028b"', 'short text "c\u2029d\re"']) {
    tally.results.push({ name, outcome: 'accepted', ms: 5, wallMs: 5 });
  }
  t.notMatch(tally.summary(), /[\r\u2028\u2029]/, 'the summary line has no raw line terminator');
  t.equal(tapLine('x\u2028y'), 'x\\u2028y', 'written as an escape');
  await t.test('the report, as a subtest', async (t) => tally.report(t));
});
