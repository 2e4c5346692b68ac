/**
 * The BPE trainer (lib/model/bpe-train.ts) on the domain's own text: reading drills of train
 * programs. Its tokenizer.json loads in swerl (through Hugging Face's JS tokenizers) and encodes
 * exactly as an independent encoder written here from the BPE definition; round trips are exact;
 * a line copied out of a view tokenizes as it did in the view (GPT-2's pre-split fails that).
 */
import t from 'tap';

import { DOMAIN_PRE_SPLIT, trainBpe } from '../../../lib/model/bpe-train.js';
import { BYTE_TO_CHAR } from '../../../lib/model/byte-level.js';
import { tokenizerFromFiles } from '../../../lib/model/hf-tokenizer.js';
import { DEFAULT_DRILLS, makeDrill, type DrillOptions } from '../../../lib/train/pretrain/drills.js';

const drills = (split: 'train' | 'heldout', n: number, seed: number): string[] => {
  const options: DrillOptions = { ...DEFAULT_DRILLS, turns: { min: 2, max: 4 }, programs: { split, firstSeed: 0, count: 5000 } };
  return Array.from({ length: n }, (_, i) => makeDrill(seed, i, options).messages.map((m) => m.content ?? '').join('\n'));
};
const TRAIN = drills('train', 400, 1);
const HELD_OUT = drills('heldout', 60, 2);

const trained = trainBpe(TRAIN, { vocabSize: 1024 });
const tokenizer = tokenizerFromFiles(trained.files);

/** BPE from its definition: pre-split, bytes as GPT-2's characters, then the lowest-ranked adjacent pair merged until none is left. */
function referenceEncode(text: string, json: { model: { vocab: Record<string, number>; merges: [string, string][] }; added_tokens: { id: number; content: string }[] }, preSplit: string): number[] {
  const ranks = new Map(json.model.merges.map(([a, b], i) => [`${a} ${b}`, i]));
  const added = [...json.added_tokens].sort((a, b) => b.content.length - a.content.length);
  const ids: number[] = [];
  const encodePiece = (piece: string) => {
    let symbols = Array.from(Buffer.from(piece, 'utf8'), (b) => BYTE_TO_CHAR[b]!);
    for (;;) {
      let best = -1;
      let bestRank = Infinity;
      for (let k = 0; k + 1 < symbols.length; k++) {
        const rank = ranks.get(`${symbols[k]} ${symbols[k + 1]}`);
        if (rank !== undefined && rank < bestRank) {
          bestRank = rank;
          best = k;
        }
      }
      if (best < 0) break;
      symbols = [...symbols.slice(0, best), symbols[best]! + symbols[best + 1]!, ...symbols.slice(best + 2)];
    }
    for (const s of symbols) ids.push(json.model.vocab[s]!);
  };
  let rest = text;
  while (rest.length > 0) {
    let at = rest.length;
    let token: { id: number; content: string } | undefined;
    for (const a of added) {
      const i = rest.indexOf(a.content);
      if (i >= 0 && i < at) [at, token] = [i, a];
    }
    const plain = rest.slice(0, at);
    for (const m of plain.matchAll(new RegExp(preSplit, 'gu'))) encodePiece(m[0]);
    if (!token) break;
    ids.push(token.id);
    rest = rest.slice(at + token.content.length);
  }
  return ids;
}

t.test('the trained tokenizer.json loads, and encodes as BPE by its definition on held-out text', async (t) => {
  t.equal(trained.vocabSize, 1024);
  t.equal(tokenizer.vocabSize, 1024, 'bytes, merges and the added tokens');
  t.ok(trained.merges > 600, `${trained.merges} merges learned`);
  t.equal(tokenizer.specialTokens['<|im_end|>'], 1024 - 9 + 2, 'ChatML tokens come last, in ByteTokenizer order');
  t.same(tokenizer.eosTokenIds, [tokenizer.specialTokens['<|im_end|>']]);
  const json = JSON.parse(trained.files['tokenizer.json']!);
  let tokens = 0;
  for (const text of HELD_OUT) {
    const ids = tokenizer.encode(text);
    t.same(ids, referenceEncode(text, json, DOMAIN_PRE_SPLIT), 'the library and the definition agree');
    tokens += ids.length;
  }
  const bytes = HELD_OUT.reduce((s, x) => s + Buffer.byteLength(x), 0);
  t.ok(bytes / tokens > 2.2, `${(bytes / tokens).toFixed(2)} bytes a token on held-out drills`);
});

t.test('round trips are exact on every byte', async (t) => {
  const samples = [
    ...HELD_OUT.slice(0, 10),
    Array.from({ length: 128 }, (_, i) => String.fromCharCode(i)).join(''),
    'héllo wörld ß 日本語 🙂👍🏽 e\u0301 \u200b \ufeff\r\n\t\tx  y   z',
    'x<=y a->b </parameter>):</ <parameter=old_str>} else {</parameter>',
    '<|im_start|>user\nhi<|im_end|>\n<think>\n\n</think>',
  ];
  for (const text of samples) t.equal(tokenizer.decode(tokenizer.encode(text)), text, JSON.stringify(text.slice(0, 40)));
  // Random code points, surrogate pairs included.
  let seed = 7;
  const next = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (let k = 0; k < 200; k++) {
    const text = Array.from({ length: 40 }, () => String.fromCodePoint(next() < 0.7 ? Math.floor(next() * 128) : Math.floor(next() * 0xd7ff) + 1)).join('');
    if (tokenizer.decode(tokenizer.encode(text)) !== text) t.fail(`round trip of ${JSON.stringify(text)}`);
  }
  t.pass('200 random strings');
});

/** For each line of each held-out view: its tokens inside the view, and as old_str inside a call, equal its tokens alone. */
function copyAgreement(encode: (text: string) => number[], texts: readonly string[]): { same: number; lines: number } {
  let same = 0;
  let lines = 0;
  const contains = (hay: number[], needle: number[]) => hay.some((_, i) => needle.every((id, k) => hay[i + k] === id));
  for (const text of texts) {
    const view = text.slice(text.indexOf('cat -n'));
    const body = view.split('\n').slice(1).filter((l) => /^ {0,5}\d+ /.test(l)).map((l) => l.slice(7).trim()).filter((l) => l.length > 0);
    const viewIds = encode(view);
    for (const line of body) {
      const alone = encode(line);
      const call = encode(`<parameter=old_str>${line}</parameter>`);
      lines++;
      if (contains(viewIds, alone) && contains(call, alone)) same++;
    }
  }
  return { same, lines };
}

t.test('a line copied out of a view tokenizes as in the view; GPT-2\'s pre-split does not', async (t) => {
  const ours = copyAgreement((x) => tokenizer.encode(x), HELD_OUT);
  t.ok(ours.lines > 150, `${ours.lines} lines`);
  t.equal(ours.same, ours.lines, `${ours.same} of ${ours.lines} lines tokenize alike in the view and in old_str`);
  const gpt2Split = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
  const gpt2 = tokenizerFromFiles(trainBpe(TRAIN, { vocabSize: 1024, preSplit: gpt2Split }).files);
  const theirs = copyAgreement((x) => gpt2.encode(x), HELD_OUT);
  t.ok(theirs.same < theirs.lines * 0.5, `GPT-2's split: ${theirs.same} of ${theirs.lines}`);
});

t.test('deterministic, whatever the order of the corpus', async (t) => {
  t.equal(trainBpe(TRAIN, { vocabSize: 1024 }).files['tokenizer.json'], trained.files['tokenizer.json']);
  t.equal(trainBpe([...TRAIN].reverse(), { vocabSize: 1024 }).files['tokenizer.json'], trained.files['tokenizer.json']);
  const small = trainBpe(['aaa bbb aaa'], { vocabSize: 4096 });
  t.ok(small.vocabSize < 4096, `merges stop when no pair repeats (${small.merges} merges)`);
});

t.test('bad options are refused by name', async (t) => {
  t.throws(() => trainBpe(TRAIN, { vocabSize: 100 }), { code: 'ERR_SWERL_INVALID_ARG', message: /vocabSize is 100; it must be an integer in \[265,/ });
  t.throws(() => trainBpe(TRAIN, { vocabSize: 1024, preSplit: '[a-' }), { message: /preSplit is not a valid regular expression/ });
  t.throws(() => trainBpe(TRAIN, { vocabSize: 1024, preSplit: 'a*' }), { message: /preSplit matches the empty string/ });
  t.throws(() => trainBpe(TRAIN, { vocabSize: 1024, eosToken: '</s>' }), { message: /eosToken is "<\/s>", which is not one of the added tokens/ });
  t.throws(() => trainBpe(TRAIN, { vocabSize: 1024, minFrequency: 0 }), { message: /minFrequency is 0/ });
  t.throws(() => trainBpe(TRAIN, { vocabSize: 1024, addedTokens: [{ content: '<a>', special: true }, { content: '<a>', special: true }], eosToken: '<a>' }), { message: /addedTokens\[1\].content repeats/ });
});
