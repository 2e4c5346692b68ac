// TextStreamer against the tokenizers it serves (ByteTokenizer and a real Qwen-style BPE
// tokenizer.json): the text equals the whole completion decoded at once, the streamed deltas
// add up to it without a split character, stop strings cut it even across tokens, and each
// token costs a bounded window, not the whole completion so far.
import t from 'tap';

import { ByteTokenizer } from '../../../lib/model/byte-tokenizer.js';
import { loadTokenizer } from '../../../lib/model/hf-tokenizer.js';
import type { Tokenizer } from '../../../lib/types/tokenizer.js';
import { TextStreamer } from '../../../lib/serve/text-streamer.js';
import { Rng } from '../../reference/random.js';
import { writeTinyTokenizer } from '../../support/tiny-tokenizer.js';

/** The tokenizer, counting the ids every decode() call is given. */
function counting(tokenizer: Tokenizer): { tokenizer: Tokenizer; decoded: () => number } {
  let decoded = 0;
  const wrapper: Tokenizer = Object.create(tokenizer) as Tokenizer;
  wrapper.decode = (ids, options) => {
    decoded += ids.length;
    return tokenizer.decode(ids, options);
  };
  return { tokenizer: wrapper, decoded: () => decoded };
}

/** Streams `ids` through a TextStreamer: the deltas joined, and how many of them ended in U+FFFD. */
function stream(tokenizer: Tokenizer, ids: number[], stops: string[] = []) {
  const streamer = new TextStreamer(tokenizer, stops);
  let text = '';
  let tokens = 0;
  let replacementEnds = 0;
  for (const id of ids) {
    const delta = streamer.push(id, -1);
    if (delta.text.endsWith('\ufffd')) replacementEnds++;
    text += delta.text;
    tokens += delta.tokens.length;
    if (streamer.stopped) break;
  }
  const rest = streamer.finish();
  return { text: text + rest.text, final: streamer.text, stopped: streamer.stopped, tokens: tokens + rest.tokens.length, replacementEnds };
}

const hfDir = t.testdir();
await writeTinyTokenizer(hfDir);
const tokenizers: [string, Tokenizer][] = [['ByteTokenizer', new ByteTokenizer()], ['Qwen-style BPE', await loadTokenizer(hfDir)]];

for (const [name, tokenizer] of tokenizers) {
  t.test(`${name}: streamed and final text = the whole completion decoded`, async (t) => {
    const text = 'héllo wörld: naïve café 日本語 🙂🚀 <tool_call>\n{"name": "x"}</tool_call> user assistant <|im_end|> tail';
    const ids = tokenizer.encode(text);
    const whole = tokenizer.decode(ids, { skipSpecialTokens: true });
    const out = stream(tokenizer, ids);
    t.equal(out.final, whole, 'final text');
    t.equal(out.text, whole, 'the deltas add up to it');
    t.equal(out.tokens, ids.length, 'every token is streamed');
    t.equal(out.replacementEnds, 0, 'no delta ended inside a character');

    // Random tokens (invalid UTF-8 included), as an untrained model samples them.
    const rng = new Rng(7);
    for (let trial = 0; trial < 20; trial++) {
      const random = Array.from({ length: 200 }, () => rng.int(tokenizer.vocabSize));
      const expected = tokenizer.decode(random, { skipSpecialTokens: true });
      const got = stream(tokenizer, random);
      if (got.final !== expected || got.text !== expected) {
        t.fail(`random tokens ${JSON.stringify(random)}: ${JSON.stringify(got.final)} != ${JSON.stringify(expected)}`);
        return;
      }
    }
    t.pass('20 random completions decode as a whole');
  });

  t.test(`${name}: stop strings end the text before them, across tokens`, async (t) => {
    const ids = tokenizer.encode('one two three four five');
    const out = stream(tokenizer, ids, ['e fo', 'xyz']);
    t.equal(out.final, 'one two thre', 'cut before the first stop string');
    t.equal(out.text, 'one two thre', 'the stream never showed the stop string');
    t.ok(out.stopped);
    t.same(stream(tokenizer, ids, ['five']).final, 'one two three four ', 'a stop string at the very end');
  });

  t.test(`${name}: each token decodes a bounded window`, async (t) => {
    const { tokenizer: counted, decoded } = counting(tokenizer);
    const ids = tokenizer.encode('lorem ipsum dolor sit amet, ünïcödé 🙂 '.repeat(200));
    stream(counted, ids, ['never']);
    t.ok(decoded() <= 40 * ids.length, `${decoded()} ids decoded for ${ids.length} tokens (the whole prefix each time would be ${(ids.length * (ids.length + 1)) / 2})`);
  });
}
