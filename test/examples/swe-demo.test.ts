/**
 * `npm run demo:swe -- --size smoke --model DIR` as a user runs it: every phase (the edit
 * oracle, SFT, RFT on the SFT policy's own samples, GRPO++ and continued RFT, the held-out measure
 * after each, the memorization baseline) from a Hugging Face-layout Qwen3 checkpoint with its
 * own tokenizer — written by test/support/tiny-checkpoint.ts, not by swerl's save path — to
 * demo.json and demo.svg. Too small to learn: this is that the phases run and connect.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';

import t from 'tap';

import { unsolvedPools } from '../../lib/train/curriculum.js';
import { Rng } from '../reference/random.js';
import { ROOT, runTs } from '../support/child-process.js';
import { writeTinyCheckpoint } from '../support/tiny-checkpoint.js';

const DEMO = path.join(ROOT, 'examples/swe-demo.ts');
// Every phase in real sandboxes, run twice: 7.5 minutes for the first beside a training
// job, past the suite's 10-minute default beside heavier ones. A hang still ends here.
t.setTimeout(30 * 60_000);

t.test('demo:swe --size smoke --model DIR: every phase from a Hugging Face checkpoint, with its own tokenizer', async (t) => {
  const root = t.testdir();
  const model = path.join(root, 'hf-qwen3');
  await writeTinyCheckpoint(model, new Rng(11));
  const out = path.join(root, 'demo');
  const env = { SWERL_SANDBOX_ROOT: path.join(root, 'sandboxes') };
  const args = (lr: string) => ['--size', 'smoke', '--model', model, '--dir', out, '--seeds', '3', '--rl-steps', '2', '--rl-samples', '3', '--rl-pool', 'unsolved', '--rl-temperature', '1.2', '--rl-lr', lr];
  const { code, output } = await runTs(DEMO, args('5e-5'), env);
  t.equal(code, 0, `the demo exits 0 (last output: ${output.slice(-1500)})`);

  const demo = JSON.parse(readFileSync(path.join(out, 'demo.json'), 'utf8'));
  t.equal(demo.model, model, 'the checkpoint given');
  t.equal(demo.size, 'smoke');
  t.same(demo.points.map((p: { phase: string }) => p.phase), ['sft', 'rft', 'grpo++', 'rft-continued'], 'a held-out point after every phase');
  t.ok(demo.points.every((p: { heldout: { tasks: number } }) => p.heldout.tasks === 2), 'each on the 2 held-out tasks');
  const seed = demo.perSeed[0];
  // The oracle's trajectories are tokenized with the checkpoint's tokenizer, and SFT refuses
  // trajectories of another: SFT having run says they matched.
  t.ok(seed.oracle.tasks > 0 && seed.oracle.resolved === seed.oracle.tasks, `the edit oracle resolved every SFT task (${seed.oracle.resolved} of ${seed.oracle.tasks})`);
  t.match(seed.memorization, { all: { tasks: 2 } }, 'the memorization baseline on the same held-out tasks');
  const heldoutSeeds = Object.keys(seed.outcomes.sft).map((id) => Number(id.split('-')[3]));
  t.ok(
    heldoutSeeds.every((s) => s >= 3 * demo.taskSeedsPerSeed && s < 4 * demo.taskSeedsPerSeed),
    `seed 3 has held-out tasks of its own: seeds ${heldoutSeeds.join(', ')} in [3, 4) x ${demo.taskSeedsPerSeed}`,
  );
  // RFT: the SFT policy played every RL-pool task (one a tier) rftSamples times; SFT from the SFT checkpoint on those samples and the oracle's.
  const samples = gunzipSync(readFileSync(path.join(out, 'seed-3', '3-rft-samples', 'trajectories', 'step-1.jsonl.gz'))).toString('utf8').trim().split('\n').map((l) => JSON.parse(l));
  t.equal(samples.length, 3 * demo.budget.pool * demo.budget.rftSamples, `RFT sampled every pool task of the 3 tiers ${demo.budget.rftSamples} times`);
  t.equal(demo.points[1].episodes, samples.length, 'the RFT point counts those episodes');
  const poolIds = [...new Set(samples.map((s: { taskId: string }) => s.taskId))] as string[];
  t.equal(demo.rlPool, 'unsolved');
  t.same(seed.rlPool, { tasks: unsolvedPools(poolIds.map((id) => [id]), samples).length, of: poolIds.length }, 'the RL pool\'s size is recorded');
  const rftConfig = JSON.parse(readFileSync(path.join(out, 'seed-3', '3-rft', 'config.json'), 'utf8'));
  t.same(rftConfig.sft.data, [path.join(out, 'seed-3', '3-rft-samples'), path.join(out, 'seed-3', '1-oracle')], 'RFT trains on its samples beside the oracle trajectories');
  t.equal(rftConfig.model.path, path.join(out, 'seed-3', '2-sft', 'checkpoints', 'step-2'), 'from the SFT checkpoint');
  t.match(rftConfig.optimizer, demo.rftOptimizer, 'with its own optimizer');
  for (const arm of ['grpo++', 'rft-continued']) {
    const config = JSON.parse(readFileSync(path.join(out, 'seed-3', `4-${arm}`, 'config.json'), 'utf8'));
    t.equal(config.model.path, path.join(out, 'seed-3', '3-rft', 'checkpoints', 'step-2'), `${arm} starts from the RFT checkpoint`);
    t.equal(config.tasks.curriculum.placement, true, `${arm} places itself in the curriculum`);
    if (arm === 'grpo++') {
      t.equal(config.run.steps, 2, 'GRPO++: --rl-steps');
      t.match(config.algorithm, { groupFilter: 'informative', resampleRounds: demo.rlResampleRounds }, 'GRPO++: dynamic sampling');
    } else {
      // Each round plays the smoke budget's 1 task x --rl-samples 3.
      t.equal(config.run.steps * 3, seed.summaries['grpo++'].episodes, `continued RFT: as many episodes as GRPO++ played (${seed.summaries['grpo++'].episodes})`);
    }
    t.match(config.rollout, { tasksPerStep: 1, samplesPerTask: 3 }, `${arm}: a round is the smoke budget's 1 task, --rl-samples 3 times`);
    t.equal(config.rollout.temperature, 1.2, `${arm}: sampled at --rl-temperature`);
    t.ok(seed.summaries[arm].episodes >= config.run.steps * 3, `${arm}: the episodes it played are counted (${seed.summaries[arm].episodes})`);
    t.equal(config.tasks.generate.firstSeed, 3 * demo.taskSeedsPerSeed, `${arm}: seed 3's tasks`);
    // --rl-pool unsolved: the pool tasks (one a tier) less those every RFT sample of which resolved, a tier solved whole kept whole.
    t.same(config.tasks.only, unsolvedPools(poolIds.map((id) => [id]), samples), `${arm}: --rl-pool unsolved narrows the pools`);
    t.equal(config.optimizer.lr, arm === 'grpo++' ? 5e-5 : demo.lr.rftContinued, `${arm}: its learning rate (--rl-lr is GRPO++'s)`);
    if (arm === 'rft-continued') t.match(config.optimizer, demo.rftContinuedOptimizer, 'continued RFT: the optimizer given whole, no preset default under it');
  }
  t.match(output, /GRPO\+\+ vs continued RFT .* McNemar p = /, 'the comparison is printed');
  t.match(output, /RFT vs SFT \(paired, \d+ tasks\): [+-]\d+\.\d points; only RFT solved \d+, only SFT \d+; McNemar p = /, 'and RFT against SFT');
  const heldout = Object.keys(seed.outcomes.sft);
  const onlyRft = heldout.filter((id) => seed.outcomes.rft[id] && !seed.outcomes.sft[id]).length;
  t.match(demo.rftOverSft, { pairs: heldout.length, onlyA: onlyRft }, 'paired per held-out task, RFT first');
  t.ok(existsSync(path.join(out, 'demo.svg')), 'and the chart drawn');

  // Run again into the same --dir: the finished seed is read back, not rerun; other settings are refused.
  const again = await runTs(DEMO, args('5e-5'), env);
  t.equal(again.code, 0, `the second run exits 0 (last output: ${again.output.slice(-1500)})`);
  t.match(again.output, /seed 3: finished in an earlier run/, 'seed 3 is read from its result.json');
  t.notMatch(again.output, /oracle:/, 'and no phase runs');
  const reread = JSON.parse(readFileSync(path.join(out, 'demo.json'), 'utf8'));
  t.same(reread.perSeed, demo.perSeed, 'the same outcomes, memorization and minutes');
  t.same(reread.comparison, demo.comparison);
  const other = await runTs(DEMO, args('1e-4'), env);
  t.not(other.code, 0, 'a run with another learning rate into the same --dir fails');
  t.match(other.output, /seed 3 of a run with other settings \(lr differ\); give another --dir, or remove/, 'naming the setting and the fix');
  const single = await runTs(DEMO, [...args('5e-5'), '--rl-samples', '1'], env);
  t.not(single.code, 0, '--rl-samples 1 is refused: a group of one is never mixed');
  t.match(single.output, /--rl-samples is "1"; give an integer >= 2/, 'naming the flag and what to give');
  const hot = await runTs(DEMO, [...args('5e-5'), '--rl-temperature', '50'], env);
  t.not(hot.code, 0, 'a temperature past the config\'s bound is refused');
  t.match(hot.output, /--rl-temperature is 50; give a temperature in \[0.01, 10\]/, 'before any phase runs');
  t.notMatch(hot.output, /oracle:/);
  const typo = await runTs(DEMO, [...args('5e-5'), '--rl-pool', 'solved'], env);
  t.not(typo.code, 0, 'an unknown --rl-pool is refused');
  t.match(typo.output, /--rl-pool is "solved"; use one of all, unsolved/, 'naming the flag and the choices');
});

