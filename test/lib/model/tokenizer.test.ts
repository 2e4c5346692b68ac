import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import t, { type Test } from 'tap';

import { ByteTokenizer, CHATML_TOKENS } from '../../../lib/model/byte-tokenizer.js';
import { loadTokenizer } from '../../../lib/model/hf-tokenizer.js';
import type { Tokenizer } from '../../../lib/types/tokenizer.js';
import { writeTinyTokenizer } from '../../support/tiny-tokenizer.js';

async function tempDir(t: Test): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'swerl-tokenizer-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  return dir;
}

async function writeFiles(dir: string, files: Record<string, string>): Promise<void> {
  for (const [name, text] of Object.entries(files)) await fs.writeFile(path.join(dir, name), text);
}

const bytes = (text: string): number[] => [...new TextEncoder().encode(text)];

const TEXTS = [
  '',
  'hello world',
  'Tabs\tand\r\nCRLF, trailing spaces   \n\n\n',
  'héllo wörld, 世界, Ελληνικά, naïve café',
  'emoji 🎉👍🏽👨‍👩‍👧 and a lone BOM \uFEFF here',
  '<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\nhm\n</think>\n\nok<|im_end|>\n',
  'text<tool_call>\n{"name": "run", "arguments": {"cmd": "ls"}}\n</tool_call>after',
  '<tool_response>\nout\n</tool_response><|endoftext|>',
  'almost special: <|im_end <|im_start| </think <tool_call',
  "I'll say THE the's and 12345 x=1;",
];

t.test('ByteTokenizer: ids 0..255 are UTF-8 bytes, 256..264 ChatML tokens', async (t) => {
  const tok = new ByteTokenizer();
  t.equal(tok.vocabSize, 265);
  t.same(Object.keys(tok.specialTokens), [
    '<|endoftext|>', '<|im_start|>', '<|im_end|>', '<think>', '</think>',
    '<tool_call>', '</tool_call>', '<tool_response>', '</tool_response>',
  ]);
  t.same(Object.values(tok.specialTokens), [256, 257, 258, 259, 260, 261, 262, 263, 264]);
  t.same(tok.eosTokenIds, [258]);
  t.same(tok.encode('hi\n'), [104, 105, 10]);
  t.same(tok.encode('é世🎉'), [0xc3, 0xa9, 0xe4, 0xb8, 0x96, 0xf0, 0x9f, 0x8e, 0x89]);
  t.same(tok.encode(''), []);
});

t.test('ByteTokenizer splits added tokens out of text, as HF does', async (t) => {
  const tok = new ByteTokenizer();
  t.same(tok.encode('a<|im_end|>b'), [97, 258, 98]);
  t.same(tok.encode('<|im_start|>user\n'), [257, ...bytes('user\n')]);
  t.same(tok.encode('<think></think><tool_call></tool_call><tool_response></tool_response><|endoftext|>'), [259, 260, 261, 262, 263, 264, 256]);
  t.same(tok.encode('<|im_end|><|im_end|>'), [258, 258]);
  t.same(tok.encode('<|im_end'), bytes('<|im_end'), 'a partial token is just text');
});

t.test('ByteTokenizer.decode', async (t) => {
  const tok = new ByteTokenizer();
  for (const text of TEXTS) t.equal(tok.decode(tok.encode(text)), text, JSON.stringify(text));
  t.equal(tok.decode(Int32Array.from(tok.encode('typed ✓'))), 'typed ✓', 'takes typed arrays');
  // A multi-byte character cut short, a stray continuation byte, an invalid byte: U+FFFD, no throw.
  t.equal(tok.decode([0xe4, 0xb8, 258, 0x96, 0xff, 65]), '\uFFFD<|im_end|>\uFFFD\uFFFDA');
  t.equal(tok.decode([104, 105, 265, -1, 1.5, 1e9]), 'hi', 'ids it does not have decode to nothing');
  t.equal(tok.decode([257, 104, 258, 259, 261]), '<|im_start|>h<|im_end|><think><tool_call>');
  t.equal(
    tok.decode([257, 104, 258, 256, 259, 261], { skipSpecialTokens: true }),
    'h<think><tool_call>',
    'skips <|im_*|> and <|endoftext|>, keeps the tags Qwen marks non-special',
  );
});

t.test('ByteTokenizer.tokenId', async (t) => {
  const tok = new ByteTokenizer();
  t.equal(tok.tokenId('<|im_end|>'), 258);
  t.equal(tok.tokenId('</tool_response>'), 264);
  t.equal(tok.tokenId('a'), 97);
  t.equal(tok.tokenId('Ġ'), 32, 'bytes are spelled as in tokenizer.json');
  t.equal(tok.tokenId('Ċ'), 10);
  t.equal(tok.tokenId('ab'), undefined);
  t.equal(tok.tokenId('<|im_end'), undefined);
});

t.test('ByteTokenizer.toFiles is an HF tokenizer that encodes the same', async (t) => {
  const byteTok = new ByteTokenizer();
  const files = byteTok.toFiles();
  t.same(Object.keys(files).sort(), ['tokenizer.json', 'tokenizer_config.json']);
  const json = JSON.parse(files['tokenizer.json']!);
  t.equal(json.model.type, 'BPE');
  t.same(json.model.merges, []);
  t.equal(Object.keys(json.model.vocab).length, 256);
  t.equal(json.model.vocab['Ġ'], 32);
  t.same(json.pre_tokenizer, { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false });
  t.equal(json.decoder.type, 'ByteLevel');
  t.same(
    json.added_tokens.map((a: { id: number; content: string; special: boolean }) => [a.id, a.content, a.special]),
    CHATML_TOKENS.map((token, i) => [256 + i, token.content, token.special]),
  );
  const config = JSON.parse(files['tokenizer_config.json']!);
  t.equal(config.eos_token, '<|im_end|>');
  t.equal(config.clean_up_tokenization_spaces, false);

  const dir = await tempDir(t);
  await writeFiles(dir, files);
  const hf = await loadTokenizer(dir);
  t.equal(hf.vocabSize, byteTok.vocabSize);
  t.same(hf.specialTokens, byteTok.specialTokens);
  t.same(hf.eosTokenIds, byteTok.eosTokenIds);
  for (const token of ['<|im_end|>', '<think>', 'Ġ', 'a', 'ab']) t.equal(hf.tokenId(token), byteTok.tokenId(token), token);
  for (const text of TEXTS) {
    const ids = byteTok.encode(text);
    t.same(hf.encode(text), ids, `encode ${JSON.stringify(text)}`);
    t.equal(hf.decode(ids), byteTok.decode(ids));
    t.equal(hf.decode(ids, { skipSpecialTokens: true }), byteTok.decode(ids, { skipSpecialTokens: true }));
  }
  const broken = [0xe4, 0xb8, 258, 0x96, 0xff, 65, 400];
  t.equal(hf.decode(broken), byteTok.decode(broken), 'invalid UTF-8 decodes alike');
  t.same(hf.toFiles(), files, 'a loaded tokenizer gives back the files it was loaded from');
});

t.test('a Qwen2-style HF tokenizer (tiny)', async (t) => {
  const dir = await tempDir(t);
  const { vocabSize } = await writeTinyTokenizer(dir);
  const tok: Tokenizer = await loadTokenizer(dir);
  t.equal(tok.vocabSize, vocabSize);
  t.equal(Object.keys(tok.specialTokens).length, 26);
  t.equal(tok.specialTokens['<|endoftext|>'], vocabSize - 26, 'added tokens follow the base vocabulary');
  t.equal(tok.specialTokens['</think>'], vocabSize - 1);
  t.same(tok.eosTokenIds, [tok.specialTokens['<|im_end|>']]);

  // Merges apply: each of these words is one token, and the pieces are what Qwen's regex splits.
  for (const word of ['assistant', 'user', 'system', 'tool', ' the', '\n\n']) {
    t.equal(tok.encode(word).length, 1, JSON.stringify(word));
  }
  t.same(tok.encode('<|im_start|>assistant\n'), [tok.specialTokens['<|im_start|>'], tok.tokenId('assistant'), tok.tokenId('Ċ')]);
  t.same(tok.encode('x<tool_call>y'), [tok.tokenId('x'), tok.specialTokens['<tool_call>'], tok.tokenId('y')]);

  for (const text of TEXTS) {
    const ids = tok.encode(text);
    t.ok(ids.every((id) => Number.isInteger(id) && id >= 0 && id < vocabSize));
    t.equal(tok.decode(ids), text, `decode(encode(${JSON.stringify(text)}))`);
    t.same(tok.encode(tok.decode(ids)), ids, 'encode(decode(ids)) round-trips');
  }
  t.equal(tok.encode('Cafe\u0301').length, tok.encode('Caf\u00e9').length, 'NFC normalizer');
  t.equal(
    tok.decode(tok.encode('<|im_start|>user\nhi<|im_end|><think>a</think>'), { skipSpecialTokens: true }),
    'user\nhi<think>a</think>',
  );
  t.equal(tok.decode([]), '');
  t.equal(tok.decode([vocabSize, vocabSize + 100, ...tok.encode('ok')]), 'ok', 'padded-vocabulary ids decode to nothing');
  t.equal(tok.tokenId('<|im_end|>'), tok.specialTokens['<|im_end|>']);
  t.equal(tok.tokenId('no such token'), undefined);
});

t.test('loadTokenizer errors name the file and the fix', async (t) => {
  const dir = await tempDir(t);
  const missing = path.join(dir, 'nowhere');
  await t.rejects(loadTokenizer(missing), {
    name: 'SwerlError',
    code: 'ERR_SWERL_TOKENIZER',
    message: new RegExp(`${path.join(missing, 'tokenizer.json').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} does not exist; .*tokenizer.json`),
  });

  await fs.writeFile(path.join(dir, 'tokenizer.json'), '{"model": ');
  await t.rejects(loadTokenizer(dir), { code: 'ERR_SWERL_TOKENIZER', message: /tokenizer\.json is not valid JSON/ });

  await fs.writeFile(path.join(dir, 'tokenizer.json'), '[]');
  await t.rejects(loadTokenizer(dir), { code: 'ERR_SWERL_TOKENIZER', message: /tokenizer\.json has no "model" object/ });

  const json = JSON.parse(new ByteTokenizer().toFiles()['tokenizer.json']!);
  await fs.writeFile(path.join(dir, 'tokenizer.json'), JSON.stringify({ ...json, model: { type: 'Nope' } }));
  await t.rejects(loadTokenizer(dir), { code: 'ERR_SWERL_TOKENIZER', message: /tokenizer\.json could not be loaded \(.*Nope.*\)/ });

  await fs.writeFile(path.join(dir, 'tokenizer.json'), JSON.stringify(json));
  await fs.writeFile(path.join(dir, 'tokenizer_config.json'), '{oops');
  await t.rejects(loadTokenizer(dir), { code: 'ERR_SWERL_TOKENIZER', message: /tokenizer_config\.json is not valid JSON/ });

  await fs.writeFile(path.join(dir, 'tokenizer_config.json'), JSON.stringify({ eos_token: '</s>' }));
  await t.rejects(loadTokenizer(dir), { code: 'ERR_SWERL_TOKENIZER', message: /tokenizer_config\.json names eos_token "<\/s>", which tokenizer\.json does not have/ });
});

t.test('loadTokenizer without tokenizer_config.json, and with AddedToken-style eos_token', async (t) => {
  const dir = await tempDir(t);
  await fs.writeFile(path.join(dir, 'tokenizer.json'), new ByteTokenizer().toFiles()['tokenizer.json']!);
  const bare = await loadTokenizer(dir);
  t.same(bare.eosTokenIds, [258], 'ChatML <|im_end|> ends a turn even with no eos_token configured');
  t.same(Object.keys(bare.toFiles()), ['tokenizer.json']);

  await fs.writeFile(path.join(dir, 'tokenizer_config.json'), JSON.stringify({ eos_token: { __type: 'AddedToken', content: '<|endoftext|>' } }));
  t.same((await loadTokenizer(dir)).eosTokenIds, [256, 258]);
});
