/**
 * Saved trajectories as SFT examples: ids and masks byte-equal to what the run directory
 * wrote (no re-tokenization: ids that spell an added token byte by byte stay bytes), the
 * filters, records without a trained token, and errors naming the file, line and field.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

import t from 'tap';

import { ByteTokenizer } from '../../../../lib/model/byte-tokenizer.js';
import { RunDirectory } from '../../../../lib/train/run-dir.js';
import { assertFitsVocabulary } from '../../../../lib/train/sft/example.js';
import { loadTrajectoryFile } from '../../../../lib/train/sft/trajectories.js';
import { trajectory } from './fixtures.js';

const tokenizer = new ByteTokenizer();

// "<tool_call>" spelled byte by byte: decoding and encoding again would make it one added token.
const SPELLED = [...Buffer.from('<tool_call>')];
const IM_END = tokenizer.specialTokens['<|im_end|>']!;

t.test('a run directory\'s trajectories load with their ids, masks and logprobs as saved; filters apply', async (t) => {
  const dir = new RunDirectory(t.testdir());
  const saved = [
    trajectory('<|im_start|>user\nfix it<|im_end|>\n<|im_start|>assistant\n', [...SPELLED, 10, IM_END], 1, 'submitted'),
    trajectory('<|im_start|>user\nagain<|im_end|>\n<|im_start|>assistant\n', [104, 105, IM_END], 0, 'submitted'),
    trajectory('<|im_start|>user\nlong<|im_end|>\n<|im_start|>assistant\n', [120, 121], 1, 'max_context'),
  ];
  await dir.writeTrajectories(1, saved, () => ({ shapedReward: 0, advantage: 0, filtered: false, kept: true }));
  const file = path.join(dir.trajectories, 'step-1.jsonl.gz');

  const all = await loadTrajectoryFile(file);
  t.equal(all.examples.length, 3);
  t.equal(all.filtered, 0);
  for (const [i, e] of all.examples.entries()) {
    t.same(Buffer.from(e.tokens.buffer, e.tokens.byteOffset, e.tokens.byteLength), Buffer.from(saved[i]!.tokens.buffer), `trajectory ${i}: ids byte-equal`);
    t.same(Buffer.from(e.mask), Buffer.from(saved[i]!.mask), `trajectory ${i}: mask byte-equal`);
    t.equal(e.id, `${file}:${i + 1}`);
    t.ok(e.logprobs && e.logprobs.every((x, j) => Math.abs(x - saved[i]!.logprobs[j]!) <= 1e-6), 'the sampler\'s logprobs come along');
  }
  t.same(Array.from(all.examples[0]!.tokens.subarray(-13, -2)), SPELLED, 'spelled-out bytes stay bytes: nothing was re-tokenized');

  const solved = await loadTrajectoryFile(file, { minReward: 1 });
  t.same(solved.examples.map((e) => e.id), [`${file}:1`, `${file}:3`], 'minReward 1 keeps the solved ones');
  t.equal(solved.filtered, 1);
  const submitted = await loadTrajectoryFile(file, { minReward: 1, terminations: ['submitted'] });
  t.same(submitted.examples.map((e) => e.id), [`${file}:1`], 'and terminations the submitted ones');
  t.equal(submitted.filtered, 2);
});

t.test('records with nothing trained are counted, not trained on', async (t) => {
  const dir = new RunDirectory(t.testdir());
  const overBudget = trajectory('a prompt over its budget', [], 0, 'max_context');
  await dir.writeTrajectories(2, [overBudget, trajectory('p', [97, IM_END], 1, 'submitted')], () => ({}));
  const loaded = await loadTrajectoryFile(path.join(dir.trajectories, 'step-2.jsonl.gz'));
  t.equal(loaded.examples.length, 1);
  t.equal(loaded.untrained, 1);
});

t.test('failed turns (format errors, tool errors) stay in the context and out of the loss', async (t) => {
  const dir = new RunDirectory(t.testdir());
  const saved = trajectory('<|im_start|>user\nfix it<|im_end|>\n<|im_start|>assistant\n', [97, 98, IM_END, 99, 100, IM_END, 101, 102, IM_END], 1, 'submitted');
  const start = saved.promptTokens;
  const turn = (offset: number, extra: object) => ({ contextTokens: start + offset, responseTokens: 3, finishReason: 'stop' as const, response: '', observation: '', observationTokens: 0, generateMs: 0, stepMs: 0, ...extra });
  saved.turns = [turn(0, { toolError: 'ERROR: No replacement was performed' }), turn(3, { formatError: 'no tool call' }), turn(6, {})];
  await dir.writeTrajectories(1, [saved], () => ({}));
  const loaded = await loadTrajectoryFile(path.join(dir.trajectories, 'step-1.jsonl.gz'));
  t.equal(loaded.maskedTurns, 2);
  const mask = Array.from(loaded.examples[0]!.mask.subarray(start));
  t.same(mask, [0, 0, 0, 0, 0, 0, 1, 1, 1], 'only the turn that worked is learned');
  t.same(Array.from(loaded.examples[0]!.tokens), Array.from(saved.tokens), 'the failed turns stay in the context');

  saved.turns = [turn(0, { toolError: 'x' }), turn(3, { toolError: 'y' }), turn(6, { formatError: 'z' })];
  await dir.writeTrajectories(2, [saved], () => ({}));
  const nothing = await loadTrajectoryFile(path.join(dir.trajectories, 'step-2.jsonl.gz'));
  t.same([nothing.examples.length, nothing.untrained], [0, 1], 'a record whose every turn failed has nothing to learn');
});

t.test('a malformed record is refused naming the file, the line and the field', async (t) => {
  const dir = t.testdir();
  const good = { tokens: [1, 2, 3], mask: [0, 1, 1], logprobs: [0, -1, -1], reward: 1, termination: 'submitted' };
  const cases: [object | string, RegExp][] = [
    [{ ...good, mask: [0, 1] }, /:2 mask has 2 entries for 3 tokens/],
    [{ ...good, tokens: [1, 2.5, 3] }, /:2 tokens\[1\] is 2\.5; expected an integer/],
    [{ ...good, mask: [0, 2, 1] }, /:2 mask\[1\] is 2; expected an integer in \[0, 1\]/],
    [{ ...good, mask: [1, 1, 1] }, /:2 mask\[0\] is 1: the first token has nothing predicting it/],
    [{ ...good, logprobs: [0, null, 0] }, /:2 logprobs\[1\] is null; expected a finite number/],
    [{ ...good, reward: 'yes' }, /:2 reward is "yes"; expected a finite number/],
    [{ ...good, termination: undefined }, /:2 termination is undefined/],
    [{ ...good, turns: [{ contextTokens: 1, responseTokens: 5 }] }, /:2 turns\[0\] spans tokens 1 to 6, past the record's 3/],
    [{ ...good, turns: [{ contextTokens: 1, responseTokens: 1, toolError: 3 }] }, /:2 turns\[0\] toolError is 3; expected a string/],
    [[1, 2], /:2 is not a JSON object/],
    ['{"tokens": [1,', /:2 is not valid JSON/],
  ];
  for (const [i, [bad, message]] of cases.entries()) {
    const file = path.join(dir, `bad-${i}.jsonl.gz`);
    writeFileSync(file, gzipSync(`${JSON.stringify(good)}\n${typeof bad === 'string' ? bad : JSON.stringify(bad)}\n`));
    await t.rejects(loadTrajectoryFile(file), { code: 'ERR_SWERL_INVALID_ARG', message: new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}${message.source}`) }, message.source);
  }
  const truncated = path.join(dir, 'truncated.jsonl.gz');
  writeFileSync(truncated, gzipSync(`${JSON.stringify(good)}\n`.repeat(50)).subarray(0, 30));
  await t.rejects(loadTrajectoryFile(truncated), { message: /truncated\.jsonl\.gz cannot be read \(gzip\)/ }, 'a cut gzip file');
});

t.test('ids outside the model\'s vocabulary are refused with the example and the position', async (t) => {
  const e = { tokens: Int32Array.from([1, 2, 70000]), mask: Uint8Array.from([0, 1, 1]), source: 'f', id: 'runs/a/trajectories/step-1.jsonl.gz:4' };
  t.throws(() => assertFitsVocabulary([e], 265), { code: 'ERR_SWERL_INVALID_ARG', message: /^runs\/a\/trajectories\/step-1\.jsonl\.gz:4 tokens\[2\] is 70000, outside the model's vocabulary of 265 ids; trajectories are trained with the model/ });
  t.doesNotThrow(() => assertFitsVocabulary([e], 70001));
});
