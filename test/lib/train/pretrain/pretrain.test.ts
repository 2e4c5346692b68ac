/**
 * pretrain() as a run: train() and `swerl pretrain` dispatch a config with a pretrain section to
 * it; each step is a pure function of the seed and the step (repeats alone during their warm-up,
 * then drills and repeats), so a run stopped and resumed ends with the weights of one run
 * straight through; metrics carry the copy probes; a config that cannot run is refused when it
 * loads, by field.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import { trainBpe } from '../../../../lib/model/bpe-train.js';
import { tokenizerFromFiles } from '../../../../lib/model/hf-tokenizer.js';
import { NativePolicy } from '../../../../lib/model/native-policy.js';
import { resolveTrainConfig } from '../../../../lib/train/config.js';
import { resolvePretrainConfig } from '../../../../lib/train/pretrain/options.js';
import { DEFAULT_DRILLS, drillText, lookupIds, repeatIds } from '../../../../lib/train/pretrain/drills.js';
import { stepExamples } from '../../../../lib/train/pretrain/pretrain.js';
import { train } from '../../../../lib/train/trainer.js';
import { runCli } from '../../../../lib/cli/program.js';

const root = t.testdir({ tokenizer: {} });
const tokenizerDir = path.join(root, 'tokenizer');
const bpe = trainBpe(Array.from({ length: 120 }, (_, i) => drillText(9, i, DEFAULT_DRILLS)), { vocabSize: 600 });
for (const [name, text] of Object.entries(bpe.files)) writeFileSync(path.join(tokenizerDir, name), text);
const tokenizer = tokenizerFromFiles(bpe.files);

const config = (dir: string, run: object = {}, pretrain: object = {}) => ({
  run: { dir, steps: 4, seed: 3, checkpointEvery: 2, keepCheckpoints: 5, progress: 'none', ...run },
  model: { preset: 'qwen3-tiny', tokenizer: tokenizerDir, threads: 1 },
  optimizer: { lr: 3e-3, warmupSteps: 1, schedule: 'cosine' },
  pretrain: {
    sequencesPerStep: 2,
    drills: { turns: { min: 1, max: 2 }, programs: { functions: { min: 1, max: 1 }, lines: { min: 4, max: 10 } } },
    repeats: { warmupSteps: 2, warmupSequences: 4, sequencesPerStep: 2, length: { min: 4, max: 12 } },
    probes: { every: 0, count: 2, seed: 1 },
    ...pretrain,
  },
});

t.test('a step\'s examples: repeats alone in the warm-up, then drills and repeats; pure in seed and step', async (t) => {
  const options = resolvePretrainConfig(config(path.join(root, 'x'))).pretrain;
  const warm = stepExamples(tokenizer, 3, 1, options);
  t.equal(warm.length, 4, 'warmupSequences repeats');
  for (const e of warm) {
    const ids = Array.from(e.tokens);
    const newline = tokenizer.encode('\n');
    const half = (ids.length - 1 - newline.length) / 2;
    t.same(ids.slice(1, 1 + half), ids.slice(1 + half + newline.length), 'the span, then the same span');
    t.ok(half >= 4 && half <= 12, `${half} ids`);
    t.notOk(ids.slice(1).some((id) => Object.values(tokenizer.specialTokens).includes(id) && !newline.includes(id)), 'no added token inside');
    t.equal(e.mask[0], 0);
    t.ok(e.mask.slice(1).every((m) => m === 1), 'every token trained');
  }
  const later = stepExamples(tokenizer, 3, 3, options);
  t.equal(later.length, 4, 'sequencesPerStep drills + repeats.sequencesPerStep');
  t.match(later[0]!.id, /^drill-3-0$/);
  t.match(later[2]!.id, /^repeat-3-8$/, 'repeat numbering goes on after the warm-up\'s 8');
  t.same(stepExamples(tokenizer, 3, 3, options).map((e) => Array.from(e.tokens)), later.map((e) => Array.from(e.tokens)), 'the same seed and step, the same examples');
  t.not(JSON.stringify(Array.from(stepExamples(tokenizer, 4, 3, options)[0]!.tokens)), JSON.stringify(Array.from(later[0]!.tokens)), 'another seed, others');
  t.same(repeatIds(tokenizer, 1, 2, { min: 5, max: 5 }), repeatIds(tokenizer, 1, 2, { min: 5, max: 5 }));
});

t.test('lookup sheets: a program\'s view, then lines asked for by number, each once, answered as the view numbers them', async (t) => {
  const drills = resolvePretrainConfig(config(path.join(root, 'x'))).pretrain.drills;
  const counts = new Set<number>();
  for (let i = 0; i < 30; i++) {
    const ids = lookupIds(tokenizer, 2, i, { min: 3, max: 12 }, drills);
    t.equal(ids[0], tokenizer.specialTokens['<|im_start|>']);
    const text = tokenizer.decode(ids.slice(1));
    t.equal(tokenizer.decode(tokenizer.encode(text)), text);
    const [view, ...asked] = text.split('view_range ');
    t.match(view!, /^Here's the result of running `cat -n` on the file: \/testbed\/\w+\.(py|js):\n/, `sheet ${i}: the editor's view first`);
    const shown = new Map([...view!.matchAll(/^ {0,5}(\d+) (.*)$/gm)].map((m) => [Number(m[1]), m[0]]));
    t.same([...shown.keys()], Array.from({ length: shown.size }, (_, k) => k + 1), `sheet ${i}: lines 1 to ${shown.size}`);
    const ks = asked.map((q) => {
      const m = /^\[(\d+), (\d+)\]\n(.*)\n$/.exec(q);
      t.ok(m && m[1] === m[2], `sheet ${i}: a lookup of one line: ${JSON.stringify(q)}`);
      const k = Number(m![1]);
      t.equal(m![3], shown.get(k), `sheet ${i}: line ${k} as the view shows it`);
      return k;
    });
    t.equal(new Set(ks).size, ks.length, `sheet ${i}: no line asked twice`);
    t.ok(ks.length >= Math.min(3, shown.size) && ks.length <= Math.min(12, shown.size), `sheet ${i}: ${ks.length} lookups of ${shown.size} lines`);
    counts.add(ks.length);
  }
  t.ok(counts.size >= 3, `the number of lookups varies: ${[...counts].join(', ')}`);
  t.same(lookupIds(tokenizer, 2, 5, { min: 3, max: 12 }, drills), lookupIds(tokenizer, 2, 5, { min: 3, max: 12 }, drills), 'pure in seed and index');
  t.not(JSON.stringify(lookupIds(tokenizer, 2, 5, { min: 3, max: 12 }, drills)), JSON.stringify(lookupIds(tokenizer, 2, 6, { min: 3, max: 12 }, drills)));

  const withSheets = resolvePretrainConfig(config(path.join(root, 'x'), {}, { lookups: { sequencesPerStep: 3, queries: { min: 2, max: 4 } } })).pretrain;
  const plain = resolvePretrainConfig(config(path.join(root, 'x'))).pretrain;
  t.equal(plain.lookups.sequencesPerStep, 0, 'none by default');
  t.same(stepExamples(tokenizer, 3, 2, withSheets).map((e) => e.id), stepExamples(tokenizer, 3, 2, plain).map((e) => e.id), 'none in the warm-up');
  const step4 = stepExamples(tokenizer, 3, 4, withSheets);
  const plain4 = stepExamples(tokenizer, 3, 4, plain);
  t.same(step4.map((e) => e.id), [...plain4.map((e) => e.id), 'lookup-3-3', 'lookup-3-4', 'lookup-3-5'], 'after the warm-up, after the drills and repeats, numbered on from step to step');
  t.same(step4.slice(0, plain4.length).map((e) => Array.from(e.tokens)), plain4.map((e) => Array.from(e.tokens)), 'the drills and repeats as without sheets');
  t.same(Array.from(step4.at(-1)!.tokens), lookupIds(tokenizer, 3, 5, { min: 2, max: 4 }, withSheets.drills));
  t.ok(step4.at(-1)!.mask.slice(1).every((m) => m === 1), 'every token trained');
});

t.test('a run: metrics with probes; stopped after step 2 and resumed, the weights of a run straight through', async (t) => {
  const straight = path.join(root, 'straight');
  const summary = await train(config(straight, {}, { probes: { every: 2, count: 2, seed: 1 } }));
  t.equal(summary.steps, 4);
  const rows = readFileSync(path.join(straight, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  t.equal(rows.length, 4);
  t.ok(rows.every((r) => Number.isFinite(r.loss.nll) && r.tokens.trained > 0));
  t.same(Object.keys(rows[1].probes).sort(), ['line', 'path', 'pathMadeUp', 'quote'], 'probes at step 2');
  t.ok(rows[3].probes && rows[0].probes === undefined, 'and at the last step only');
  t.same(rows.map((r) => r.drills), [0, 0, 2, 4], 'drills begin after the repeats\' warm-up');

  const halves = path.join(root, 'halves');
  await train(config(halves, { steps: 2 }));
  const resumed = await train(config(halves, { steps: 4, resume: true }));
  t.equal(resumed.steps, 4);
  const a = await NativePolicy.load(summary.checkpoint!, { threads: 1 });
  const b = await NativePolicy.load(resumed.checkpoint!, { threads: 1 });
  const ids = tokenizer.encode('def total(xs):\n    return 0\n');
  const [la] = await a.logprobs([ids]);
  const [lb] = await b.logprobs([ids]);
  t.same(Array.from(lb!), Array.from(la!), 'bit for bit');
  t.equal(a.config.native.vocabSize, 600, 'the tokenizer\'s vocabulary');
  a.dispose();
  b.dispose();
});

t.test('swerl pretrain runs a config, and refuses one without a pretrain section', async (t) => {
  const file = path.join(root, 'cli.json');
  writeFileSync(file, JSON.stringify(config(path.join(root, 'cli'), { steps: 3 })));
  t.equal(await runCli(['pretrain', file]), 0);
  // The run directory's config.json (every default written out, the drills' split with them) runs again: a resume from it.
  t.equal(await runCli(['pretrain', path.join(root, 'cli', 'config.json'), '--resume', '--steps', '4']), 0, 'the written config resumes the run');
  t.equal(readFileSync(path.join(root, 'cli', 'metrics.jsonl'), 'utf8').trim().split('\n').length, 4, 'to step 4');
  const sft = path.join(root, 'sft.json');
  writeFileSync(sft, JSON.stringify({ run: { dir: path.join(root, 'no') }, model: { preset: 'qwen3-tiny' } }));
  t.equal(await runCli(['pretrain', sft]), 2, 'a usage error');
});

t.test('configs that cannot run are refused when they load', async (t) => {
  const dir = path.join(root, 'bad');
  const bad = (pretrain: object, extra: Record<string, unknown> = {}) => () => resolvePretrainConfig({ ...config(dir, {}, pretrain), ...extra });
  t.throws(bad({ drills: { mix: { lookup: 0, edit: 0, echo: 0 } } }), { code: 'ERR_SWERL_INVALID_ARG', message: /config.pretrain.drills.mix gives every turn kind weight 0/ });
  t.throws(bad({ drills: { turns: { min: 3, max: 2 } } }), /config.pretrain.drills.turns has min 3 > max 2/);
  t.throws(bad({ drills: { turns: { min: 1, max: 9 } } }), /config.pretrain.drills.turns.max \(9\) leaves no step for the first view and finish within maxSteps 6/);
  t.throws(bad({ repeats: { length: { min: 0, max: 4 } } }), /config.pretrain.repeats.length.min must be at least 1/);
  t.throws(bad({ lookups: { sequencesPerStep: 1, queries: { min: 0, max: 4 } } }), /config.pretrain.lookups.queries.min must be at least 1/);
  t.throws(bad({ lookups: { queries: { min: 5, max: 4 } } }), /config.pretrain.lookups.queries has min 5 > max 4/);
  t.throws(bad({ lookups: { sequencesPerStep: -1 } }), /config.pretrain.lookups.sequencesPerStep must be >= 0/);
  t.throws(bad({ drills: { programs: { split: 'heldout' } } }), /config.pretrain.drills.programs.split is "heldout"; drills read train-split programs only \(the copy probes read held-out ones\); remove it/);
  t.throws(bad({ sequencesPerStep: 0 }), /config.pretrain.sequencesPerStep must be >= 1/);
  t.throws(bad({ probes: { every: -1 } }), /config.pretrain.probes.every must be >= 0/);
  t.throws(bad({ drills: { programs: { lines: { min: 1, max: 2 } } } }), /config.pretrain.drills.programs allow no \w+ task/, 'programs no generator can make');
  t.throws(bad({}, { sft: { data: ['x'] } }), /config.pretrain and config.sft make two jobs of one config/);
  t.throws(() => resolveTrainConfig({ ...config(dir), tasks: { kind: 'frozenlake' } }), /config.pretrain makes this a pretraining config/);
  t.throws(() => resolvePretrainConfig({ ...config(dir), model: { path: dir, tokenizer: tokenizerDir } }), /config.model.tokenizer goes with preset/);
  await t.rejects(train({ ...config(dir), model: { preset: 'qwen3-tiny', tokenizer: path.join(root, 'missing') } }), { code: 'ERR_SWERL_INVALID_ARG', message: /config.model.tokenizer names .*missing, which has no readable tokenizer.json \(ENOENT\); make one with swerl tokenizer train/ });
  const wordPiece = path.join(root, 'wordpiece');
  mkdirSync(wordPiece);
  writeFileSync(path.join(wordPiece, 'tokenizer.json'), JSON.stringify({ model: { type: 'WordPiece', vocab: { '[UNK]': 0 } } }));
  t.throws(() => resolvePretrainConfig({ ...config(dir), model: { preset: 'qwen3-tiny', tokenizer: wordPiece } }), /config.model.tokenizer names .*wordpiece\/tokenizer.json, whose model is "WordPiece", not BPE/);
  const notByteLevel = path.join(root, 'plain-bpe');
  mkdirSync(notByteLevel);
  writeFileSync(path.join(notByteLevel, 'tokenizer.json'), JSON.stringify({ model: { type: 'BPE', vocab: { a: 0 }, merges: [] }, pre_tokenizer: { type: 'Whitespace' } }));
  t.throws(() => resolvePretrainConfig({ ...config(dir), model: { preset: 'qwen3-tiny', tokenizer: notByteLevel } }), /a BPE that is not byte-level/);
  const broken = path.join(root, 'broken');
  mkdirSync(broken);
  writeFileSync(path.join(broken, 'tokenizer.json'), '{"model": ');
  t.throws(() => resolvePretrainConfig({ ...config(dir), model: { preset: 'qwen3-tiny', tokenizer: broken } }), /broken\/tokenizer.json, which is not valid JSON/);
});
