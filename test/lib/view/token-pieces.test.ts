/**
 * Token ids to the viewer's text pieces: whole characters per piece, never across a change of
 * the mask, the same with the byte tokenizer and with its Hugging Face files; and where the
 * viewer finds a run's tokenizer.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import { ByteTokenizer } from '../../../lib/model/byte-tokenizer.js';
import { tokenizerFromFiles } from '../../../lib/model/hf-tokenizer.js';
import { runTokenizer } from '../../../lib/view/run-tokenizer.js';
import { tokenPieces } from '../../../lib/view/token-pieces.js';

const bytes = new ByteTokenizer();

t.test('pieces hold whole characters and follow the mask', async (t) => {
  const prompt = bytes.encode('<|im_start|>user\nné ✓<|im_end|>\n');
  const reply = bytes.encode('ok 🙂');
  const tokens = [...prompt, ...reply];
  const mask = [...prompt.map(() => 0), ...reply.map(() => 1)];
  const logprobs = mask.map((m) => (m ? -0.5 : 0));
  for (const [name, tokenizer] of [['ByteTokenizer', bytes], ['its tokenizer.json', tokenizerFromFiles(bytes.toFiles())]] as const) {
    const pieces = tokenPieces(tokenizer, tokens, mask, logprobs);
    t.equal(pieces.map((p) => p.text).join(''), '<|im_start|>user\nné ✓<|im_end|>\nok 🙂', `${name}: the pieces make the text`);
    t.same(pieces.find((p) => p.text === 'é')?.ids, [0xc3, 0xa9], `${name}: a 2-byte character is one piece`);
    const emoji = pieces.find((p) => p.text === '🙂')!;
    t.same([emoji.ids.length, emoji.sampled, emoji.logprob], [4, true, -2], `${name}: a 4-byte character sampled: one piece, its logprobs summed`);
    t.same(pieces.filter((p) => p.special).map((p) => p.text), ['<|im_start|>', '<|im_end|>'], `${name}: added tokens marked`);
    t.same(pieces.map((p) => p.start), pieces.map((_, i) => pieces.slice(0, i).reduce((n, p) => n + p.ids.length, 0)), `${name}: starts are token offsets`);
  }
  // A character cut by the mask (it never is by the agent loop) shows as two broken halves.
  const cut = tokenPieces(bytes, bytes.encode('é'), [0, 1], [0, -1]);
  t.same(cut.map((p) => [p.ids, p.sampled]), [[[0xc3], false], [[0xa9], true]]);
});

t.test("a run's tokenizer: the preset's, else the newest checkpoint's, else the model directory's", async (t) => {
  const dir = t.testdir();
  t.match(await runTokenizer(dir, { preset: 'qwen3-tiny' }), { source: /byte-level/ });
  const checkpoint = path.join(dir, 'checkpoints', 'step-3');
  mkdirSync(checkpoint, { recursive: true });
  for (const [name, text] of Object.entries(bytes.toFiles())) writeFileSync(path.join(checkpoint, name), text);
  writeFileSync(path.join(checkpoint, 'swerl_state.json'), '{}');
  const found = await runTokenizer(dir, { path: path.join(dir, 'moved-away') });
  t.equal(found.source, checkpoint);
  t.equal(found.tokenizer.decode(bytes.encode('hé<|im_end|>')), 'hé<|im_end|>');
  await t.rejects(runTokenizer(path.join(dir, 'empty'), { path: path.join(dir, 'moved-away') }), { code: 'ERR_SWERL_TOKENIZER' });
});
