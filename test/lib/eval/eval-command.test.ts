// swerl eval end to end on swe-mini in bwrap sandboxes: the oracle (gold patch) scores
// Pass@1 = 1 over two runs, the no-op 0; report.json, report.md and SWE-bench predictions.
// Best@k (--select) over the decoy policy's candidates (gold on one run of three, a harmless
// edit on the others) against the values worked out by hand: the tests find gold, a vote does
// not; and with a real (tiny, random) model as policy and judge, every rule runs and every
// episode is saved as SFT reads trajectories.
import { readFileSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import { DecoyPolicy } from '../../../lib/agent/scripted-policy.js';
import { presetConfig } from '../../../lib/model/model-config.js';
import { NativePolicy } from '../../../lib/model/native-policy.js';
import { loadSwerlTaskFolder } from '../../../lib/env/tasks/swerl-folder.js';
import { patchKey } from '../../../lib/tts/patch-key.js';
import { tokenizerId } from '../../../lib/model/tokenizer-id.js';
import { loadTrajectoryFile } from '../../../lib/train/sft/trajectories.js';
import { ROOT, runSwerl } from '../../support/child-process.js';

const SWE_MINI = path.join(ROOT, 'tasks/swe-mini');
const swerl = runSwerl;
// Every swe-mini task under the oracle and the no-op is test/lib/agent/scripted-policy.test.ts's
// job; here a few of both languages check the command and its outputs.
const SOME = ['js-color-hex', 'js-cron-next', 'py-lru-recency', 'py-money-negative', 'py-template-else'];

t.test('oracle: Pass@1 = 1 over 2 runs, predictions carry the gold patches', async (t) => {
  const out = path.join(t.testdir(), 'oracle');
  const r = await swerl(['eval', '--tasks', SWE_MINI, '--only', SOME.join(','), '--policy', 'oracle', '--runs', '2', '--concurrency', '4', '--out', out]);
  t.equal(r.code, 0, r.stderr);
  const report = JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8'));
  t.equal(report.tasks, SOME.length);
  t.same(report.passAt1, { mean: 1, sem: 0, perRun: [1, 1] });
  t.same(report.passAtK, { 'pass@1': 1, 'pass@2': 1 });
  t.same(report.terminations, { submitted: 2 * SOME.length });
  t.match(r.stdout, /\| Pass@1 \(mean ± SEM over runs\) \| 100\.0% ± 0\.0 \|/);
  const predictions = readFileSync(path.join(out, 'predictions.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  t.same(predictions.map((p) => p.instance_id), SOME);
  for (const p of predictions) {
    t.same(Object.keys(p).sort(), ['instance_id', 'model_name_or_path', 'model_patch']);
    t.match(p.model_patch, /^diff --git /, `${p.instance_id}: a patch`);
  }
  t.ok(readFileSync(path.join(out, 'predictions-run-1.jsonl'), 'utf8').length > 0, 'one predictions file per run');
  t.match(readFileSync(path.join(out, 'report.md'), 'utf8'), /\| js-color-hex \| 2\/2 \| 1 1 \|/);
});

t.test('no-op: Pass@1 = 0', async (t) => {
  const out = path.join(t.testdir(), 'noop');
  const r = await swerl(['eval', '--tasks', SWE_MINI, '--only', SOME.join(','), '--policy', 'noop', '--concurrency', '4', '--out', out]);
  t.equal(r.code, 0, r.stderr);
  const report = JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8'));
  t.same(report.passAt1, { mean: 0, sem: 0, perRun: [0] });
  const predictions = readFileSync(path.join(out, 'predictions.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  t.ok(predictions.every((p) => p.model_patch === ''), 'no change, empty patches');
});

t.test('bad arguments name the flag', async (t) => {
  const r = await swerl(['eval', '--tasks', SWE_MINI]);
  t.equal(r.code, 2);
  t.match(r.stderr, /give exactly one of --policy, --model, --server and --predictions/);
  const k = await swerl(['eval', '--tasks', SWE_MINI, '--policy', 'oracle', '--k', '3']);
  t.equal(k.code, 2);
  t.match(k.stderr, /--k 3 is more than --runs 1/);
});

const readJsonl = (file: string) => readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const SELECT_TASKS = ['js-color-hex', 'py-lru-recency', 'py-money-negative'];

t.test('--select over decoy candidates: Best@k, Pass@k, Pass@1 as worked out by hand', async (t) => {
  const out = path.join(t.testdir(), 'select');
  const r = await swerl(['eval', '--tasks', SWE_MINI, '--only', SELECT_TASKS.join(','), '--policy', 'decoy', '--samples', '3', '--select', 'execution,majority,random,oracle', '--test-writer', 'oracle', '--concurrency', '3', '--out', out]);
  t.equal(r.code, 0, r.stderr);
  const report = JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8'));
  const decoy = new DecoyPolicy({ every: 3 });
  const tasks = await Promise.all(SELECT_TASKS.map((id) => loadSwerlTaskFolder(path.join(SWE_MINI, id))));
  const goldRun = Object.fromEntries(tasks.map((task) => [task.id, decoy.goldSample(task)]));
  // Each task: one run of three resolves (the decoy policy's gold run), the others are the same decoy.
  for (const task of report.perTask) t.same(task.rewards, [0, 1, 2].map((run) => (run === goldRun[task.id] ? 1 : 0)), `${task.id}: gold on run ${goldRun[task.id]}`);
  const byRule = Object.fromEntries(report.selection.rules.map((rule: { rule: string }) => [rule.rule, rule]));
  t.same(Object.keys(byRule), ['execution', 'majority', 'random', 'oracle'], 'every rule, in the order asked');
  for (const rule of report.selection.rules) {
    t.equal(rule.passAtK, 1, `${rule.rule}: Pass@3 = 1 (each task has a resolving run)`);
    t.ok(Math.abs(rule.passAt1 - 1 / 3) < 1e-12, `${rule.rule}: Pass@1 = 1/3`);
    t.ok(rule.bestAtK <= rule.passAtK, `${rule.rule}: Best@k <= Pass@k`);
    for (const [i, pick] of rule.perTask.entries()) t.equal(pick.bestAtK, report.perTask[i].rewards[pick.selected] > 0 ? 1 : 0, `${rule.rule} ${pick.id}: Best@k is the picked run's reward`);
  }
  t.equal(byRule.execution.bestAtK, 1, 'execution: the reproduction tests pass only with gold');
  t.same(byRule.execution.perTask.map((p: { selected: number }) => p.selected), SELECT_TASKS.map((id) => goldRun[id]));
  t.equal(byRule.majority.bestAtK, 0, 'majority: two identical decoys outvote gold');
  t.equal(byRule.oracle.bestAtK, 1);
  for (const note of report.selection.perTask) {
    t.ok(note.regression.tests > 0, `${note.id}: regression tests ran`);
    t.ok(note.reproduction.tests > 0 && note.reproduction.passAtBase > 0, `${note.id}: reproduction tests kept and discarded`);
  }
  t.same(report.selection.cost.writerEpisodes, 3);
  t.same(report.selection.cost.regressionSandboxes, 9, 'the base and the two distinct patches of each task');

  const predictions = readJsonl(path.join(out, 'predictions.jsonl'));
  for (const [i, p] of predictions.entries()) t.equal(patchKey(p.model_patch), patchKey(tasks[i]!.goldPatch!), `${p.instance_id}: predictions.jsonl holds execution's pick, the gold patch`);
  const candidates = readJsonl(path.join(out, 'candidates.jsonl'));
  t.equal(candidates.length, 9);
  const gold = candidates.filter((c) => c.reward === 1);
  t.same(gold.map((c) => c.run), SELECT_TASKS.map((id) => goldRun[id]));
  t.ok(gold.every((c) => c.selectedBy.includes('execution') && c.selectedBy.includes('oracle') && c.reproduction > 0 && c.problemStatement.length > 0 && c.messages.some((m: { role: string }) => m.role === 'assistant')), 'gold candidates: picked, reproduced, with the whole episode');
  t.ok(candidates.filter((c) => c.reward === 0).every((c) => c.reproduction === 0), 'decoys pass no reproduction test');
  const tests = readJsonl(path.join(out, 'reproduction-tests.jsonl'));
  t.same(tests.map((x) => x.instance_id), SELECT_TASKS);
  t.match(readFileSync(path.join(out, 'report.md'), 'utf8'), /\| execution \| 100\.0% \| 100\.0% \| 33\.3% \|/);
  t.match(r.stdout, /\| majority \| 0\.0% \| 100\.0% \| 33\.3% \|/);
});

t.test('--select with a real model: the policy judges, hybrid runs, every score filled in', async (t) => {
  const dir = t.testdir();
  const model = await NativePolicy.load(presetConfig('qwen3-tiny', 265), { seed: 3 });
  await model.save(path.join(dir, 'model'));
  const tokenizer = tokenizerId(model.tokenizer);
  model.dispose();
  const out = path.join(dir, 'out');
  const r = await swerl(['eval', '--tasks', SWE_MINI, '--only', 'js-color-hex,py-lru-recency', '--model', path.join(dir, 'model'), '--samples', '2', '--max-turns', '2', '--max-tokens-per-turn', '24', '--prompt-budget', '100000',
    '--select', 'hybrid,judge,majority', '--keep', '1', '--test-writer', 'oracle', '--judge-budget', '1500', '--concurrency', '2', '--out', out]);
  t.equal(r.code, 0, r.stderr);
  const report = JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8'));
  t.same(report.selection.rules.map((x: { rule: string }) => x.rule), ['hybrid', 'judge', 'majority']);
  t.equal(report.selection.cost.judgedCandidates, 4);
  t.ok(report.selection.cost.judgeTokens > 4 * 1000 && report.selection.cost.judgeTokens <= 4 * 1500, `judge prompts within the budget (${report.selection.cost.judgeTokens} tokens for 4)`);
  const candidates = readJsonl(path.join(out, 'candidates.jsonl'));
  for (const c of candidates) {
    t.ok(c.judge > 0 && c.judge < 1, `${c.taskId} run ${c.run}: judge score ${c.judge} in (0, 1)`);
    t.ok(Number.isInteger(c.regression) && Number.isInteger(c.reproduction));
  }
  for (const [i, pick] of report.selection.rules[1].perTask.entries()) {
    const mine = candidates.filter((c) => c.taskId === pick.id);
    t.equal(pick.selected, mine.reduce((best, c) => (c.judge > best.judge ? c : best), mine[0]).run, `judge picks the highest p(YES) for task ${i}`);
  }
  // Every episode, as SFT on saved trajectories reads it (offline rejection fine-tuning names this folder in sft.data).
  const saved = await loadTrajectoryFile(path.join(out, 'trajectories', 'step-1.jsonl.gz'), {}, tokenizer);
  t.equal(saved.examples.length + saved.untrained, 4, 'the 4 episodes (2 tasks x 2 samples), read with the model\'s tokenizer');
  t.equal(saved.unlabeled, 0, 'each labeled with the tokenizer that made it');
  const none = await loadTrajectoryFile(path.join(out, 'trajectories', 'step-1.jsonl.gz'), { minReward: 2 });
  t.equal(none.filtered, 4, 'and filtered by reward as sft.minReward does');
});

t.test('--select: a bad flag is refused by the CLI before anything runs (the rest: args.test.ts)', async (t) => {
  const r = await swerl(['eval', '--tasks', SWE_MINI, '--policy', 'oracle', '--select', 'execution']);
  t.equal(r.code, 2);
  t.match(r.stderr, /needs reproduction tests and --policy oracle cannot write them; pass --test-writer oracle/);
});
