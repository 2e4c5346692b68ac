/**
 * The config's sft section: defaults, data paths from the config file's folder (and from the
 * working directory when typed as an override), tasks optional, and every refusal naming the
 * field (a mistyped one with the nearest name).
 */
import path from 'node:path';

import t from 'tap';

import { applyOverrides } from '../../../../lib/train/config-file.js';
import { isSftConfig, resolveTrainConfig } from '../../../../lib/train/config.js';
import { resolveSftConfig } from '../../../../lib/train/sft/options.js';

const BASE = '/srv/experiments';
const config = (sft: unknown, more: Record<string, unknown> = {}) => ({ run: { dir: 'runs/s' }, model: { preset: 'qwen3-tiny' }, sft, ...more });

t.test('defaults, and paths from the config file\'s folder', async (t) => {
  const c = resolveSftConfig(config({ data: ['chat.jsonl', '/abs/run'] }), BASE);
  t.same(c.sft, { data: [path.join(BASE, 'chat.jsonl'), '/abs/run'], format: 'auto', trainOn: 'assistant', maxLength: 32768, overlong: 'drop', sequencesPerStep: 8, heldOutFraction: 0, heldOutEvery: 10 });
  t.equal(c.tasks, undefined, 'tasks are optional');
  t.equal(c.run.dir, path.resolve('runs/s'), 'run.dir from the working directory');
  t.same(resolveSftConfig(config({ data: 'one.jsonl' }), BASE).sft.data, [path.join(BASE, 'one.jsonl')], 'a single path as a string');
  const withTasks = resolveSftConfig(config({ data: ['a.jsonl'], minReward: 1, terminations: ['submitted'] }, { tasks: { kind: 'frozenlake' }, eval: { every: 5 } }), BASE);
  t.match(withTasks, { tasks: { kind: 'frozenlake' }, eval: { every: 5 }, sft: { minReward: 1, terminations: ['submitted'] } });
  t.ok(isSftConfig(config({ data: ['a'] })) && !isSftConfig({ run: {} }) && !isSftConfig(null));
});

t.test('refusals name the field', async (t) => {
  const refuses = (value: unknown, message: RegExp) => t.throws(() => resolveSftConfig(value, BASE), { code: 'ERR_SWERL_INVALID_ARG', message }, message.source);
  refuses(config({ data: ['a.jsonl'], sequencesPerStp: 4 }), /^config\.sft\.sequencesPerStp is not a known option \(did you mean sequencesPerStep\?\); known: data, format/);
  refuses(config({}), /^config\.sft\.data is required/);
  refuses(config({ data: [] }), /^config\.sft\.data must NOT have fewer than 1 items/);
  refuses(config({ data: ['a'], format: 'sharegpt' }), /^config\.sft\.format must be one of "auto", "chat", "trajectories"/);
  refuses(config({ data: ['a'], overlong: 'wrap' }), /^config\.sft\.overlong must be one of "drop", "truncate"/);
  refuses(config({ data: ['a'], heldOutFraction: 0.9 }), /^config\.sft\.heldOutFraction must be <= 0\.5/);
  refuses(config({ data: ['a'], maxLength: 1 }), /^config\.sft\.maxLength must be >= 2/);
  refuses(config({ data: ['a'], terminations: ['done'] }), /^config\.sft\.terminations\.0 must be one of "submitted"/);
  refuses(config('a.jsonl'), /^config\.sft must be an object/);
  refuses({ run: { dir: 'r' }, model: { preset: 'qwen3-tiny' } }, /^config\.sft is required for supervised fine-tuning/);
  refuses(config({ data: ['a'] }, { sfts: {} }), /^config\.sfts is not a known section \(did you mean sft\?\)/);
  t.throws(() => resolveTrainConfig(config({ data: ['a'] }, { tasks: { kind: 'frozenlake' } }), BASE), { message: /^config\.sft makes this a supervised fine-tuning config; run it with swerl sft/ }, 'the RL resolver does not take an SFT config');
});

t.test('sft.data typed on the command line is taken from the working directory', async (t) => {
  const overridden = applyOverrides({ sft: { data: ['in-file.jsonl'] } }, ['sft.data=[a.jsonl, /abs/b]'], '/home/me');
  t.same(overridden.sft, { data: ['/home/me/a.jsonl', '/abs/b'] });
  t.same(applyOverrides({}, ['sft.data=c.jsonl'], '/home/me').sft, { data: '/home/me/c.jsonl' });
});
