/**
 * The paths of sft.data: files, folders and run directories, each file's format told by its
 * content (gzipped or not, whatever its name) unless fixed, and the refusals of data that
 * cannot train: a missing path, an empty file, a file of neither format, filters that leave
 * nothing.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

import t from 'tap';

import { ByteTokenizer } from '../../../../lib/model/byte-tokenizer.js';
import { RunDirectory } from '../../../../lib/train/run-dir.js';
import { detectFormat, loadSftData, type SftFormat } from '../../../../lib/train/sft/data.js';
import { trajectory } from './fixtures.js';

const tokenizer = new ByteTokenizer();
const chatLine = (n: number) => JSON.stringify({ messages: [{ role: 'user', content: `say ${n}` }, { role: 'assistant', content: `${n}` }] });
const IM_END = tokenizer.specialTokens['<|im_end|>']!;

async function load(paths: string[], format: SftFormat = 'auto', filters: { minReward?: number } = {}) {
  return loadSftData({ paths, format, tokenizer, enableThinking: false, ...filters });
}

t.test('files, folders and run directories; formats told by content', async (t) => {
  const root = t.testdir({ 'chat.jsonl': `${chatLine(1)}\n\n${chatLine(2)}\n`, folder: { 'b.jsonl': `${chatLine(3)}\n`, 'notes.txt': 'not data' } });
  writeFileSync(path.join(root, 'chat-gz.data'), gzipSync(`${chatLine(4)}\n`));
  const run = new RunDirectory(path.join(root, 'run'));
  await run.writeTrajectories(10, [trajectory('p', [97, IM_END], 1, 'submitted')], () => ({}));
  await run.writeTrajectories(2, [trajectory('q', [98, IM_END], 0, 'submitted'), trajectory('r', [99, IM_END], 1, 'submitted')], () => ({}));

  t.equal(await detectFormat(path.join(root, 'chat.jsonl')), 'chat');
  t.equal(await detectFormat(path.join(root, 'chat-gz.data')), 'chat', 'gzip told by its bytes, not its name');
  t.equal(await detectFormat(path.join(run.trajectories, 'step-2.jsonl.gz')), 'trajectories');
  // Runs record each trajectory's opening prompt as `messages`: it is still a trajectory.
  await run.writeTrajectories(3, [{ ...trajectory('s', [100, IM_END], 1, 'submitted'), messages: [{ role: 'system', content: 'tools' }, { role: 'user', content: 'fix it' }] }], () => ({}));
  t.equal(await detectFormat(path.join(run.trajectories, 'step-3.jsonl.gz')), 'trajectories', 'a trajectory with its prompt messages');
  rmSync(path.join(run.trajectories, 'step-3.jsonl.gz'));

  const data = await load([path.join(root, 'chat.jsonl'), path.join(root, 'folder'), path.join(root, 'chat-gz.data'), run.dir]);
  t.same(
    data.files.map((f) => [path.relative(root, f.file), f.format, f.examples]),
    [['chat.jsonl', 'chat', 2], ['folder/b.jsonl', 'chat', 1], ['chat-gz.data', 'chat', 1], ['run/trajectories/step-2.jsonl.gz', 'trajectories', 2], ['run/trajectories/step-10.jsonl.gz', 'trajectories', 1]],
    'every file once, in order; a folder\'s data files only; step-2 before step-10',
  );
  t.same(data.examples.map((e) => e.id.slice(root.length + 1)), ['chat.jsonl:1', 'chat.jsonl:3', 'folder/b.jsonl:1', 'chat-gz.data:1', 'run/trajectories/step-2.jsonl.gz:1', 'run/trajectories/step-2.jsonl.gz:2', 'run/trajectories/step-10.jsonl.gz:1'], 'blank lines are skipped, line numbers kept');

  const solved = await load([run.dir], 'auto', { minReward: 1 });
  t.equal(solved.examples.length, 2);
  t.same(solved.files.map((f) => f.filtered), [1, 0]);
  const bom = path.join(root, 'bom.jsonl');
  writeFileSync(bom, `\uFEFF${chatLine(5)}\r\n${chatLine(6)}\r\n`);
  t.equal((await load([bom])).examples.length, 2, 'a byte-order mark and CRLF line ends are fine');
  await t.rejects(load([path.join(root, 'chat.jsonl')], 'auto', { minReward: 1 }), { message: /^sft\.minReward \/ sft\.terminations filter trajectories, and the data holds none/ });
  await t.rejects(load([run.dir], 'auto', { minReward: 2 }), { message: /^sft\.data leaves no example to train on: 3 record\(s\) filtered out/ });
});

t.test('a fixed format reads every file as that format', async (t) => {
  const root = t.testdir({ 'a.jsonl': `${chatLine(1)}\n` });
  t.equal((await load([path.join(root, 'a.jsonl')], 'chat')).examples.length, 1);
  await t.rejects(load([path.join(root, 'a.jsonl')], 'trajectories'), { message: /a\.jsonl:1 tokens must be an array of integers/ });
});

t.test('data that cannot train is refused, naming the path', async (t) => {
  const root = t.testdir({ 'empty.jsonl': '\n\n', 'other.jsonl': '{"text": "plain"}\n', 'no-data': { 'readme.md': '#' } });
  mkdirSync(path.join(root, 'run', 'trajectories'), { recursive: true });
  await t.rejects(load([]), { message: /^sft\.data is empty/ });
  await t.rejects(load([path.join(root, 'missing.jsonl')]), { message: /^sft\.data\[0\] names .*missing\.jsonl, which does not exist/ });
  await t.rejects(load([path.join(root, 'empty.jsonl')]), { message: /empty\.jsonl is empty/ });
  await t.rejects(load([path.join(root, 'empty.jsonl')], 'chat'), { message: /empty\.jsonl is empty/ });
  await t.rejects(load([path.join(root, 'other.jsonl')]), { message: /other\.jsonl:1 is neither a chat conversation .* nor a saved trajectory .*; fix the data, or set sft\.format/ });
  await t.rejects(load([path.join(root, 'no-data')]), { message: /^sft\.data\[0\] names the folder .*no-data, which holds no \.jsonl or \.jsonl\.gz file/ });
  await t.rejects(load([path.join(root, 'run')]), { message: /^sft\.data\[0\] names the folder .*run\/trajectories, which holds no/ });
  const untrained = path.join(root, 'untrained.jsonl');
  writeFileSync(untrained, `${JSON.stringify({ tokens: [1, 2], mask: [0, 0], reward: 1, termination: 'submitted' })}\n`);
  await t.rejects(load([untrained]), { message: /^sft\.data leaves no example to train on: 0 record\(s\) filtered out .*, 1 without a trained token/ }, 'no trained token anywhere');
});
