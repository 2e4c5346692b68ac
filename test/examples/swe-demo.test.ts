/**
 * `npm run demo:swe -- --size smoke --model DIR` as a user runs it: every phase (the edit
 * oracle, SFT, RFT on the SFT policy's own samples, GRPO++ and continued RFT, the held-out measure
 * after each, the memorization baseline) from a Hugging Face-layout Qwen3 checkpoint with its
 * own tokenizer — written by test/support/tiny-checkpoint.ts, not by swerl's save path — to
 * demo.json and demo.svg. Too small to learn: this is that the phases run and connect.
 */
import { cpSync, existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';

import t from 'tap';

import { EditOraclePolicy, distractorLine } from '../../lib/agent/scripted-policy.js';
import { writeSweGenSuite } from '../../lib/env/swe-gen/index.js';
import { loadSwerlTaskFolder } from '../../lib/env/tasks/swerl-folder.js';
import { tierOptions, unsolvedPools } from '../../lib/train/curriculum.js';
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
  const args = (lr: string, dir = out) => ['--size', 'smoke', '--model', model, '--dir', dir, '--seeds', '3', '--rl-steps', '2', '--rl-samples', '3', '--rl-pool', 'unsolved', '--rl-temperature', '1.2', '--rl-lr', lr];
  const { code, output } = await runTs(DEMO, args('5e-5'), env);
  t.equal(code, 0, `the demo exits 0 (last output: ${output.slice(-1500)})`);

  const demo = JSON.parse(readFileSync(path.join(out, 'demo.json'), 'utf8'));
  t.equal(demo.model, model, 'the checkpoint given');
  t.equal(demo.size, 'smoke');
  t.equal(demo.sftTasks, 'default', 'the oracle\'s SFT tasks come from the default distribution unless told');
  t.equal(demo.rlStartTier, null, 'the RL arms place themselves from the first tier unless told');
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
  // Then two more rounds (by default), each on the pool tasks no earlier sample resolved.
  t.equal(demo.rftExtraRounds, 2, 'two extra sampling rounds unless told');
  const roundOf = (x: { sample: number }) => Math.floor(x.sample / demo.budget.rftSamples);
  const solvedBefore = (round: number) => new Set(samples.filter((x) => roundOf(x) < round && x.reward === 1).map((x) => x.taskId));
  const roundZero = [...new Set(samples.filter((x) => roundOf(x) === 0).map((x) => x.taskId))];
  t.equal(roundZero.length, 3 * demo.budget.pool, 'round 0 played every pool task of the 3 tiers');
  const expectedRounds = [];
  for (let round = 0; round <= 2; round++) {
    const played = samples.filter((x) => roundOf(x) === round);
    const open = roundZero.filter((id) => !solvedBefore(round).has(id));
    if (open.length === 0) break;
    t.same([...new Set(played.map((x) => x.taskId))].sort(), [...open].sort(), `RFT round ${round} played the pool tasks no earlier sample resolved (${open.length})`);
    t.ok(open.every((id) => played.filter((x) => x.taskId === id).length === demo.budget.rftSamples), `each ${demo.budget.rftSamples} times`);
    expectedRounds.push({ tasks: open.length, sampled: played.length, resolved: played.filter((x) => x.reward === 1).length, newlySolved: solvedBefore(round + 1).size - solvedBefore(round).size });
  }
  t.equal(samples.length, expectedRounds.reduce((n, r) => n + r.sampled, 0), 'no sample outside those rounds');
  t.same(seed.rftRounds, expectedRounds, 'each round\'s counts recorded');
  t.equal(demo.points[1].episodes, samples.length, 'the RFT point counts every round\'s episodes');
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
    t.equal(config.tasks.curriculum.startTier, undefined, `${arm}: from the first tier`);
    if (arm === 'grpo++') {
      t.equal(config.run.steps, 2, 'GRPO++: --rl-steps');
      t.match(config.algorithm, { groupFilter: 'informative', resampleRounds: 0, miniBatches: 1, entropyCoef: 0 }, 'GRPO++: mixed groups only, one round and one optimizer step a step, no entropy term by default');
    } else {
      // Each round plays the smoke budget's 1 task x --rl-samples 3.
      t.equal(config.run.steps * 3, seed.summaries['grpo++'].episodes, `continued RFT: as many episodes as GRPO++ played (${seed.summaries['grpo++'].episodes})`);
    }
    t.match(config.rollout, { tasksPerStep: 1, samplesPerTask: 3 }, `${arm}: a round is the smoke budget's 1 task, --rl-samples 3 times`);
    t.equal(config.rollout.temperature, 1.2, `${arm}: sampled at --rl-temperature`);
    t.ok(seed.summaries[arm].episodes >= config.run.steps * 3, `${arm}: the episodes it played are counted (${seed.summaries[arm].episodes})`);
    // How far the arm moved the weights: 0 exactly when it took no optimizer step (the smoke's groups may all be equal).
    const optimizerSteps = readFileSync(path.join(out, 'seed-3', `4-${arm}`, 'metrics.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line)).reduce((n, row) => n + (row.loss?.optimizerSteps ?? 0), 0);
    t.ok(optimizerSteps > 0 ? seed.summaries[arm].moved > 0 && seed.summaries[arm].moved < 1 : seed.summaries[arm].moved === 0, `${arm}: ${optimizerSteps} optimizer steps moved the weights ${seed.summaries[arm].moved} from the RFT checkpoint`);
    t.match(output, new RegExp(`seed 3 ${arm.replaceAll('+', '\\+')}: the weights moved \\d+\\.\\d\\d% from the RFT checkpoint`), `${arm}: and printed`);
    t.equal(config.tasks.generate.firstSeed, 3 * demo.taskSeedsPerSeed, `${arm}: seed 3's tasks`);
    // --rl-pool unsolved: the pool tasks (one a tier) less those every RFT sample of which resolved, a tier solved whole kept whole.
    t.same(config.tasks.only, unsolvedPools(poolIds.map((id) => [id]), samples), `${arm}: --rl-pool unsolved narrows the pools`);
    t.equal(config.optimizer.lr, arm === 'grpo++' ? 5e-5 : demo.lr.rftContinued, `${arm}: its learning rate (--rl-lr is GRPO++'s)`);
    if (arm === 'rft-continued') {
      t.match(config.optimizer, demo.rftContinuedOptimizer, 'continued RFT: the optimizer given whole, no preset default under it');
      t.equal(config.algorithm.rejection.distinct, false, 'continued RFT learns every resolved copy by default');
    }
  }
  t.match(output, /GRPO\+\+ vs continued RFT .* McNemar p = /, 'the comparison is printed');
  t.match(output, /RFT vs SFT \(paired, \d+ tasks\): [+-]\d+\.\d points; only RFT solved \d+, only SFT \d+; McNemar p = /, 'and RFT against SFT');
  const heldout = Object.keys(seed.outcomes.sft);
  const onlyRft = heldout.filter((id) => seed.outcomes.rft[id] && !seed.outcomes.sft[id]).length;
  t.match(demo.rftOverSft, { pairs: heldout.length, onlyA: onlyRft }, 'paired per held-out task, RFT first');
  t.ok(existsSync(path.join(out, 'demo.svg')), 'and the chart drawn');
  // By bug kind: each held-out task counted under the kind its task.json records, with its outcome.
  const kindOf = (id: string) => JSON.parse(readFileSync(path.join(out, 'seed-3', 'tasks', id, 'task.json'), 'utf8')).swe_gen.kind as string;
  t.same(Object.keys(demo.byKind), [...new Set(heldout.map(kindOf))].sort(), 'demo.json has the held-out tasks\' bug kinds');
  for (const phase of ['sft', 'rft', 'grpo++', 'rft-continued']) {
    const expected = Object.fromEntries(Object.keys(demo.byKind).map((kind) => [kind, { tasks: heldout.filter((id) => kindOf(id) === kind).length, resolved: heldout.filter((id) => kindOf(id) === kind && seed.outcomes[phase][id]).length }]));
    t.match(Object.fromEntries(Object.entries(demo.byKind).map(([kind, rates]) => [kind, (rates as Record<string, unknown>)[phase]])), expected, `${phase}: tasks and resolved by kind`);
  }
  t.match(output, /held-out resolved by bug kind, seeds pooled: sft, rft, grpo\+\+, rft-continued/, 'and printed');
  for (const phase of ['sft', 'rft', 'grpo++', 'rft-continued']) {
    const measured = JSON.parse(readFileSync(path.join(out, 'seed-3', `heldout-${phase}.json`), 'utf8'));
    t.same([measured.outcomes, measured.point], [seed.outcomes[phase], demo.points.find((p: { phase: string }) => p.phase === phase)], `${phase}: its held-out outcomes written as it was measured`);
  }

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

  // --from: only the RL arms run, from the finished seed's SFT and RFT phases, with another RL setting.
  const armsDir = path.join(root, 'arms');
  const arms = await runTs(DEMO, [...args('1e-4', armsDir), '--from', out, '--rl-mini-batches', '2', '--rl-resample-rounds', '1', '--rl-epochs', '2', '--rl-start-tier', 'all', '--rl-entropy-coef=-0.05', '--rl-partial-credit', '0.5', '--rl-empty-patch-penalty', '0.25', '--rft-continued-distinct'], env);
  t.equal(arms.code, 0, `the --from run exits 0 (last output: ${arms.output.slice(-1500)})`);
  t.match(arms.output, /seed 3: SFT and RFT as .*seed-3 ran them/, 'it says whose SFT and RFT it took');
  t.notMatch(arms.output, /oracle:|RFT samples:/, 'no oracle, SFT or RFT phase runs');
  t.notOk(existsSync(path.join(armsDir, 'seed-3', '2-sft')), 'and none is written');
  const armsDemo = JSON.parse(readFileSync(path.join(armsDir, 'demo.json'), 'utf8'));
  t.equal(armsDemo.from, out, 'demo.json names the run it came from');
  const armsSeed = armsDemo.perSeed[0];
  t.equal(armsSeed.reusedFrom, path.join(out, 'seed-3'));
  t.same([armsSeed.outcomes.sft, armsSeed.outcomes.rft], [seed.outcomes.sft, seed.outcomes.rft], 'SFT and RFT outcomes are the earlier run\'s');
  t.same(armsDemo.points.slice(0, 2), demo.points.slice(0, 2), 'and their points');
  t.same(armsSeed.memorization, seed.memorization, 'the same held-out tasks: the same memorization baseline');
  t.ok(armsSeed.minutes > demo.points[1].minutes, 'the seed\'s minutes go on from the earlier run\'s RFT');
  const armsGrpo = JSON.parse(readFileSync(path.join(armsDir, 'seed-3', '4-grpo++', 'config.json'), 'utf8'));
  t.equal(armsGrpo.model.path, path.join(out, 'seed-3', '3-rft', 'checkpoints', 'step-2'), 'GRPO++ starts from the earlier run\'s RFT checkpoint');
  t.equal(armsGrpo.optimizer.lr, 1e-4, 'at this run\'s --rl-lr');
  t.match(armsGrpo.algorithm, { miniBatches: 2, resampleRounds: 1, epochs: 2, entropyCoef: -0.05 }, '--rl-mini-batches, --rl-resample-rounds, --rl-epochs and --rl-entropy-coef');
  t.equal(armsDemo.rlEntropyCoef, -0.05, 'demo.json records the entropy coefficient');
  t.equal(armsGrpo.algorithm.partialCredit, 0.5, '--rl-partial-credit reaches GRPO++');
  t.equal(armsDemo.rlPartialCredit, 0.5, 'and demo.json');
  t.equal(armsGrpo.algorithm.emptyPatchPenalty, 0.25, '--rl-empty-patch-penalty reaches GRPO++');
  t.equal(armsDemo.rlEmptyPatchPenalty, 0.25, 'and demo.json');
  const rftArm = JSON.parse(readFileSync(path.join(armsDir, 'seed-3', '4-rft-continued', 'config.json'), 'utf8'));
  t.notOk(rftArm.algorithm.partialCredit, 'continued RFT keeps resolved episodes only: no partial credit');
  t.notOk(rftArm.algorithm.emptyPatchPenalty, 'and no empty-patch penalty');
  t.equal(rftArm.algorithm.rejection.distinct, true, '--rft-continued-distinct reaches continued RFT');
  t.equal(armsDemo.rftContinuedDistinct, true, 'and demo.json');
  const graded = gunzipSync(readFileSync(path.join(armsDir, 'seed-3', '4-grpo++', 'trajectories', 'step-1.jsonl.gz'))).toString('utf8').trim().split('\n').map((line) => JSON.parse(line));
  t.ok(graded.length > 0, `${graded.length} episodes of step 1`);
  for (const x of graded.filter((x) => x.termination !== 'error')) {
    t.ok(x.goldSimilarity >= 0 && x.goldSimilarity <= 1, `${x.taskId}: similarity ${x.goldSimilarity} to the gold patch`);
    t.equal(x.shapedReward, x.filtered ? 0 : x.reward === 1 ? 1 : Math.fround(0.5 * x.goldSimilarity), `${x.taskId}: shaped reward ${x.shapedReward}`);
  }
  for (const arm of ['grpo++', 'rft-continued']) {
    const curriculum = JSON.parse(readFileSync(path.join(armsDir, 'seed-3', `4-${arm}`, 'config.json'), 'utf8')).tasks.curriculum;
    t.match(curriculum, { startTier: 'all', placement: true, tiers: demo.curriculum.tiers }, `${arm}: starts at --rl-start-tier, the tiers otherwise the demo's`);
  }
  t.equal(armsDemo.rlStartTier, 'all', 'demo.json records it');
  t.equal(armsGrpo.tasks.path, path.join(armsDir, 'seed-3', 'tasks'), 'on tasks written into its own --dir');
  t.same(armsGrpo.tasks.only, unsolvedPools(poolIds.map((id) => [id]), samples), 'the unsolved pool from the earlier run\'s RFT samples');
  t.ok(existsSync(path.join(armsDir, 'seed-3', '4-rft-continued', 'checkpoints')), 'continued RFT ran again: its own settings differ (--rl-start-tier, --rft-continued-distinct)');
  t.notOk(armsSeed.continuedRftFrom, 'and demo.json names no earlier arm');

  // --from with only GRPO++'s settings changed: continued RFT would be --from's arm over (same checkpoint, tasks, settings, episode count), so it is taken from there.
  const grpoOnlyDir = path.join(root, 'grpo-only');
  const grpoOnly = await runTs(DEMO, [...args('1e-4', grpoOnlyDir), '--from', out, '--rl-mini-batches', '2', '--rl-entropy-coef=-0.05', '--rl-estimator', 'maxrl'], env);
  t.equal(grpoOnly.code, 0, `the GRPO++-only --from run exits 0 (last output: ${grpoOnly.output.slice(-1500)})`);
  const grpoOnlySeed = JSON.parse(readFileSync(path.join(grpoOnlyDir, 'demo.json'), 'utf8')).perSeed[0];
  if (grpoOnlySeed.summaries['grpo++'].episodes === seed.summaries['rft-continued'].episodes) {
    t.match(grpoOnly.output, /seed 3 rft-continued: as .*seed-3 ran it \(only GRPO\+\+'s settings differ; \d+ episodes each\): held-out resolved/, 'it says whose continued-RFT arm it took');
    t.notOk(existsSync(path.join(grpoOnlyDir, 'seed-3', '4-rft-continued')), 'and trains none');
    t.same(grpoOnlySeed.outcomes['rft-continued'], seed.outcomes['rft-continued'], 'its held-out outcomes are --from\'s');
    t.same(grpoOnlySeed.summaries['rft-continued'], seed.summaries['rft-continued'], 'and its summary');
    t.equal(grpoOnlySeed.continuedRftFrom, path.join(out, 'seed-3'), 'demo.json names the seed it came from');
  } else {
    // Possible only if GRPO++ played other episodes than --from's (it does not resample here), which would be a bug.
    t.fail(`GRPO++ played ${grpoOnlySeed.summaries['grpo++'].episodes} episodes, --from's ${seed.summaries['rft-continued'].episodes}`);
  }
  t.ok(existsSync(path.join(grpoOnlyDir, 'seed-3', '4-grpo++', 'checkpoints')), 'GRPO++ ran, at its own settings');
  t.match(JSON.parse(readFileSync(path.join(grpoOnlyDir, 'seed-3', '4-grpo++', 'config.json'), 'utf8')).algorithm, { miniBatches: 2, entropyCoef: -0.05, estimator: 'maxrl' }, '--rl-estimator reaches GRPO++');
  t.equal(JSON.parse(readFileSync(path.join(grpoOnlyDir, 'demo.json'), 'utf8')).rlEstimator, 'maxrl', 'and demo.json');
  const nowhere = await runTs(DEMO, [...args('1e-4', path.join(root, 'nowhere')), '--from', path.join(root, 'missing')], env);
  t.not(nowhere.code, 0, 'a --from that does not exist is refused');
  t.match(nowhere.output, /--from is .*missing: no such directory; give the --dir of a finished demo:swe run/);
  const unfinished = await runTs(DEMO, [...args('1e-4', path.join(root, 'seed-4')), '--seeds', '4', '--from', out], env);
  t.not(unfinished.code, 0, 'a seed --from never finished is refused');
  t.match(unfinished.output, /--from .* has no seed 4 whose SFT and RFT phases finished \(no .*seed-4\/result.json, no .*seed-4\/before-rl.json\); run it there first, or drop --from/);
  const otherSize = await runTs(DEMO, [...args('1e-4', path.join(root, 'quick')), '--size', 'quick', '--from', out], env);
  t.not(otherSize.code, 0, 'a --from run of another size is refused');
  t.match(otherSize.output, /--from .*: seed 3 ran with other settings before RL \(size, budget, taskSeedsPerSeed[^)]*differ\); give the same ones, or drop --from/, 'naming the settings');
  t.notMatch(otherSize.output, /grpo\+\+: held-out resolved/, 'before any arm runs');

  const single = await runTs(DEMO, [...args('5e-5'), '--rl-samples', '1'], env);
  t.not(single.code, 0, '--rl-samples 1 is refused: a group of one is never mixed');
  t.match(single.output, /--rl-samples is "1"; give an integer >= 2/, 'naming the flag and what to give');
  const hot = await runTs(DEMO, [...args('5e-5'), '--rl-temperature', '50'], env);
  t.not(hot.code, 0, 'a temperature past the config\'s bound is refused');
  t.match(hot.output, /--rl-temperature is 50; give a temperature in \[0.01, 10\]/, 'before any phase runs');
  t.notMatch(hot.output, /oracle:/);
  const typo = await runTs(DEMO, [...args('5e-5'), '--rl-pool', 'solved'], env);
  t.not(typo.code, 0, 'an unknown --rl-pool is refused');
  t.match(typo.output, /--rl-pool is "solved"; use one of fresh, all, unsolved/, 'naming the flag and the choices');
  const badTier = await runTs(DEMO, [...args('5e-5'), '--rl-start-tier', 'hard'], env);
  t.not(badTier.code, 0, 'an unknown --rl-start-tier is refused');
  t.match(badTier.output, /--rl-start-tier is "hard"; use one of operators, bounds, all/, 'naming the flag and the tiers');
  t.notMatch(badTier.output, /oracle:/, 'before any phase runs');
  const badCoef = await runTs(DEMO, [...args('5e-5'), '--rl-entropy-coef=-1e3'], env);
  t.not(badCoef.code, 0, 'an entropy coefficient past the loss\'s bound is refused');
  t.match(badCoef.output, /--rl-entropy-coef is "-1e3"; give a number in \[-100, 100\]/, 'naming the flag and the bounds');
  const badCredit = await runTs(DEMO, [...args('5e-5'), '--rl-partial-credit', '1'], env);
  t.not(badCredit.code, 0, 'partial credit of 1 (a resolved episode\'s) is refused');
  t.match(badCredit.output, /--rl-partial-credit is "1"; give a number in \[0, 0.99\]/, 'naming the flag and the bounds');
  const badPenalty = await runTs(DEMO, [...args('5e-5'), '--rl-empty-patch-penalty=-0.5'], env);
  t.not(badPenalty.code, 0, 'a negative empty-patch penalty (a reward for submitting nothing) is refused');
  t.match(badPenalty.output, /--rl-empty-patch-penalty is "-0.5"; give a number in \[0, 1\]/, 'naming the flag and the bounds');
  const badEstimator = await runTs(DEMO, [...args('5e-5'), '--rl-estimator', 'grpo'], env);
  t.not(badEstimator.code, 0, 'an estimator the demo does not offer is refused');
  t.match(badEstimator.output, /--rl-estimator is "grpo"; use one of rloo, maxrl/, 'naming the flag and the choices');
  const negativeMaxrl = await runTs(DEMO, [...args('5e-5'), '--rl-estimator', 'maxrl', '--rl-empty-patch-penalty', '0.25'], env);
  t.not(negativeMaxrl.code, 0, 'maxrl with an empty-patch penalty (a negative reward) is refused');
  t.match(negativeMaxrl.output, /--rl-estimator maxrl divides by a group's mean reward, and --rl-empty-patch-penalty makes rewards negative/, 'naming both flags');
  t.notMatch(negativeMaxrl.output, /oracle:/, 'before any phase runs');
  const badSource = await runTs(DEMO, [...args('5e-5'), '--sft-tasks', 'held-out'], env);
  t.not(badSource.code, 0, 'an unknown --sft-tasks is refused');
  t.match(badSource.output, /--sft-tasks is "held-out"; use one of default, tiers/, 'naming the flag and the choices');

  // The oracle's SFT tasks are all of the default distribution (the last tier's); --sft-tasks tiers draws each tier's own.
  const tiersDir = path.join(root, 'sft-tiers');
  const fromOther = await runTs(DEMO, [...args('5e-5', tiersDir), '--sft-tasks', 'tiers', '--rft-extra-rounds', '0', '--from', out], env);
  t.not(fromOther.code, 0, '--from a run whose SFT tasks came from elsewhere, and whose RFT sampled more rounds, is refused');
  t.match(fromOther.output, /seed 3 ran with other settings before RL \((?=[^)]*\bsftTasks\b)(?=[^)]*\brftExtraRounds\b)[^)]*differ\)/, 'naming the settings');
  const badRounds = await runTs(DEMO, [...args('5e-5'), '--rft-extra-rounds=-1'], env);
  t.not(badRounds.code, 0, 'a negative count of RFT rounds is refused');
  t.match(badRounds.output, /--rft-extra-rounds is "-1"; give an integer >= 0/, 'naming the flag and what to give');
  t.notMatch(badRounds.output, /oracle:/, 'before any phase runs');
  const badRetry = await runTs(DEMO, [...args('5e-5'), '--sft-retry', '1.5'], env);
  t.not(badRetry.code, 0, 'a retry share past 1 is refused');
  t.match(badRetry.output, /--sft-retry is "1.5"; give a number in \[0, 1\]/, 'naming the flag and the bounds');
  const retryFrom = await runTs(DEMO, [...args('5e-5', path.join(root, 'retry-from')), '--sft-retry', '1', '--sft-recover-elsewhere', '0', '--from', out], env);
  t.not(retryFrom.code, 0, '--from a run whose oracle made no retries, and recovered elsewhere, is refused');
  t.match(retryFrom.output, /seed 3 ran with other settings before RL \(oracleRecoverElsewhere, oracleRetry differ\)/, 'naming the settings');
  const badElsewhere = await runTs(DEMO, [...args('5e-5'), '--sft-recover-elsewhere', '2'], env);
  t.not(badElsewhere.code, 0, 'a share of recoveries past 1 is refused');
  t.match(badElsewhere.output, /--sft-recover-elsewhere is "2"; give a number in \[0, 1\]/, 'naming the flag and the bounds');
  // This run's oracle also makes a wrong fix first on every one-bug SFT task it can (--sft-retry 1);
  // its recoveries copy another line than the buggy one, as by default. Its RFT samples one round.
  const sftTiers = await runTs(DEMO, [...args('5e-5', tiersDir), '--sft-tasks', 'tiers', '--sft-retry', '1', '--rft-extra-rounds', '0'], env);
  t.equal(sftTiers.code, 0, `the --sft-tasks tiers run exits 0 (last output: ${sftTiers.output.slice(-1500)})`);
  const tiersDemo = JSON.parse(readFileSync(path.join(tiersDir, 'demo.json'), 'utf8'));
  t.equal(tiersDemo.rftExtraRounds, 0, 'demo.json records the extra rounds');
  const tiersSamples = gunzipSync(readFileSync(path.join(tiersDir, 'seed-3', '3-rft-samples', 'trajectories', 'step-1.jsonl.gz'))).toString('utf8').trim().split('\n');
  t.equal(tiersSamples.length, 3 * demo.budget.pool * demo.budget.rftSamples, `--rft-extra-rounds 0: RFT sampled every pool task of the 3 tiers ${demo.budget.rftSamples} times, once`);
  t.same(tiersDemo.perSeed[0].rftRounds, [{ tasks: 3 * demo.budget.pool, sampled: tiersSamples.length, resolved: tiersSamples.filter((l) => JSON.parse(l).reward === 1).length, newlySolved: new Set(tiersSamples.filter((l) => JSON.parse(l).reward === 1).map((l) => JSON.parse(l).taskId)).size }], 'one round recorded');
  t.equal(tiersDemo.points[1].episodes, tiersSamples.length, 'and the RFT point counts its episodes');
  t.equal(tiersDemo.sftTasks, 'tiers', 'demo.json records where the SFT tasks came from');
  t.equal(tiersDemo.oracleRetry, 1, 'and the retry share');
  t.equal(tiersDemo.oracleRecoverElsewhere, 1, 'and the share of recoveries elsewhere: all, unless told');
  t.equal(demo.oracleRetry, 0, 'none unless told');
  t.equal(demo.perSeed[0].oracle.retries, 0, 'so no episode retried');
  const oracleRecords = gunzipSync(readFileSync(path.join(tiersDir, 'seed-3', '1-oracle', 'trajectories', 'step-1.jsonl.gz'))).toString('utf8').trim().split('\n').map((l) => JSON.parse(l));
  const retriedRecords = oracleRecords.filter((r) => r.turns.map((turn: { tool?: string }) => turn.tool).join(',') === 'file_editor,file_editor,execute_bash,file_editor,execute_bash,finish');
  t.equal(tiersDemo.perSeed[0].oracle.retries, retriedRecords.length, `the retries counted are the episodes that made a wrong fix (${retriedRecords.length} of ${oracleRecords.length})`);
  t.ok(oracleRecords.every((r) => r.reward === 1), 'every oracle episode resolved, retried or not');
  // A recovery's refused copy is of a line that is not buggy, and the next edit fixes the buggy one.
  const oldStrOf = (response: string) => /<parameter=old_str>([\s\S]*?)<\/parameter>/.exec(response)![1]!;
  const recoveredRecords = oracleRecords.filter((r) => r.turns[1]?.toolError?.includes('`new_str` is the same as `old_str`'));
  t.ok(recoveredRecords.length > 0, `some oracle episodes recover (${recoveredRecords.length})`);
  for (const r of recoveredRecords) {
    const [copied, fixed] = [oldStrOf(r.turns[1].response), oldStrOf(r.turns[2].response)];
    if (copied !== fixed) t.ok(!fixed.includes(copied) && !copied.includes(fixed), `${r.taskId}: the refused copy (${JSON.stringify(copied)}) is another line than the fixed one (${JSON.stringify(fixed)})`);
    else {
      const meta = JSON.parse(readFileSync(path.join(tiersDir, 'seed-3', 'tasks', r.taskId, 'task.json'), 'utf8')).swe_gen;
      const source = readFileSync(path.join(tiersDir, 'seed-3', 'tasks', r.taskId, 'repo', meta.file), 'utf8');
      t.equal(distractorLine(source, [{ oldStr: fixed }], r.taskId), null, `${r.taskId}: the buggy line copied only where the file has no other to copy`);
    }
  }
  t.ok(recoveredRecords.some((r) => oldStrOf(r.turns[1].response) !== oldStrOf(r.turns[2].response)), 'and some copy another line');
  const drawn = new EditOraclePolicy({ recovery: tiersDemo.oracleRecovery, retry: 1 });
  const sftTaskList = await Promise.all(oracleRecords.map((r) => loadSwerlTaskFolder(path.join(tiersDir, 'seed-3', 'tasks', r.taskId))));
  t.equal(
    tiersDemo.perSeed[0].oracle.retries + tiersDemo.perSeed[0].oracle.replayed,
    sftTaskList.filter((task) => drawn.mistakeTurns(task).length > 0).length,
    'every SFT task with a wrong fix to make made it: a retry, or played again when the call could not tell',
  );
  for (const r of retriedRecords) {
    const [wrong, , fix] = r.turns.slice(1) as { contextTokens: number; responseTokens: number }[];
    t.ok(r.mask.slice(wrong!.contextTokens, wrong!.contextTokens + wrong!.responseTokens).every((m: number) => m === 0), `${r.taskId}: the wrong fix is out of the loss`);
    t.ok(r.mask.slice(fix!.contextTokens, fix!.contextTokens + fix!.responseTokens).every((m: number) => m === 1), `${r.taskId}: the fix after it is in`);
  }
  const last = tierOptions(demo.curriculum, demo.knobs).at(-1)!;
  const oracleIds = (dir: string) => gunzipSync(readFileSync(path.join(dir, 'seed-3', '1-oracle', 'trajectories', 'step-1.jsonl.gz'))).toString('utf8').trim().split('\n').map((l) => JSON.parse(l).taskId as string);
  const sweGenOf = (dir: string, id: string) => JSON.parse(readFileSync(path.join(dir, 'seed-3', 'tasks', id, 'task.json'), 'utf8')).swe_gen;
  const regenerated = path.join(root, 'regenerated');
  for (const id of oracleIds(out)) {
    const meta = sweGenOf(out, id);
    const [task] = (await writeSweGenSuite(path.join(regenerated, id), { ...last, split: 'train', firstSeed: meta.seed, count: 1 })).tasks;
    t.same(meta, JSON.parse(readFileSync(path.join(regenerated, id, task!.id, 'task.json'), 'utf8')).swe_gen, `SFT task ${id} is train seed ${meta.seed} of the default distribution`);
  }
  const metas = (dir: string) => oracleIds(dir).map((id) => sweGenOf(dir, id));
  t.notSame(metas(tiersDir), metas(out), 'not the tasks --sft-tasks tiers drew from the same seeds');

  // --rl-pool fresh: the RL arms draw new train tasks of the default distribution, as many as their steps draw, none a held-out program.
  // --from a seed stopped during its RL arms: its SFT and RFT phases, as its before-rl.json and held-out files record them.
  const stopped = path.join(root, 'stopped');
  cpSync(path.join(out, 'seed-3'), path.join(stopped, 'seed-3'), { recursive: true });
  for (const gone of ['result.json', '4-rft-continued', 'heldout-rft-continued.json']) rmSync(path.join(stopped, 'seed-3', gone), { recursive: true });
  const freshDir = path.join(root, 'fresh');
  const withoutPool = (list: string[]) => list.filter((a, i) => a !== '--rl-pool' && list[i - 1] !== '--rl-pool');
  const fresh = await runTs(DEMO, [...withoutPool(args('1e-4', freshDir)), '--from', stopped], env);
  t.equal(fresh.code, 0, `the --rl-pool fresh run exits 0 (last output: ${fresh.output.slice(-1500)})`);
  t.match(fresh.output, /seed 3: SFT and RFT as .*stopped\/seed-3 ran them/, 'it took the stopped seed\'s SFT and RFT');
  const freshDemo = JSON.parse(readFileSync(path.join(freshDir, 'demo.json'), 'utf8'));
  t.equal(freshDemo.rlPool, 'fresh', 'the default pool, recorded in demo.json');
  const armConfig = (arm: string) => JSON.parse(readFileSync(path.join(freshDir, 'seed-3', `4-${arm}`, 'config.json'), 'utf8'));
  const freshIds = armConfig('grpo++').tasks.only as string[];
  t.equal(freshIds.length, 2, 'one task for each task a step draws: --rl-steps 2 x the smoke budget\'s 1');
  t.same(freshDemo.perSeed[0].rlPool, { tasks: 2, of: 2 }, 'and its size recorded');
  t.same(Object.keys(freshDemo.perSeed[0].outcomes['grpo++']), Object.keys(seed.outcomes.sft), 'on the held-out tasks of --from\'s run');
  t.same([freshDemo.perSeed[0].outcomes.sft, freshDemo.perSeed[0].outcomes.rft, freshDemo.perSeed[0].oracle, freshDemo.perSeed[0].rftRounds], [seed.outcomes.sft, seed.outcomes.rft, seed.oracle, seed.rftRounds], 'SFT\'s and RFT\'s outcomes, the oracle\'s counts and RFT\'s rounds as the stopped seed recorded them');
  t.same(freshDemo.points.slice(0, 2), demo.points.slice(0, 2), 'and their points');
  t.equal(armConfig('grpo++').model.path, path.join(stopped, 'seed-3', '3-rft', 'checkpoints', 'step-2'), 'GRPO++ starts from the stopped seed\'s RFT checkpoint');
  for (const id of freshIds) {
    const meta = sweGenOf(freshDir, id);
    t.ok(meta.seed >= 2 ** 30 && !poolIds.includes(id) && !Object.keys(seed.outcomes.sft).includes(id), `fresh task ${id}: a train seed past every tier pool, dev slice and SFT task, not held out`);
    const [task] = (await writeSweGenSuite(path.join(regenerated, 'fresh', id), { ...last, split: 'train', firstSeed: meta.seed, count: 1 })).tasks;
    t.same(meta, JSON.parse(readFileSync(path.join(regenerated, 'fresh', id, task!.id, 'task.json'), 'utf8')).swe_gen, `fresh task ${id} is of the default distribution`);
  }
  for (const arm of ['grpo++', 'rft-continued']) {
    const config = armConfig(arm);
    t.same(config.tasks.only, freshIds, `${arm}: draws from the fresh pool`);
    t.notOk(config.tasks.curriculum ?? config.tasks.generate, `${arm}: a suite of its own, with no tiers`);
  }
  const stepTasks = (step: number) => gunzipSync(readFileSync(path.join(freshDir, 'seed-3', '4-grpo++', 'trajectories', `step-${step}.jsonl.gz`))).toString('utf8').trim().split('\n').map((l) => JSON.parse(l).taskId as string);
  t.same([...new Set([...stepTasks(1), ...stepTasks(2)])].sort(), [...freshIds].sort(), 'GRPO++\'s two steps played the two fresh tasks, one each');
  const tierAndFresh = await runTs(DEMO, [...withoutPool(args('1e-4', path.join(root, 'fresh-tier'))), '--from', out, '--rl-start-tier', 'all'], env);
  t.not(tierAndFresh.code, 0, '--rl-start-tier with the fresh pool is refused');
  t.match(tierAndFresh.output, /--rl-start-tier names a curriculum tier, and --rl-pool fresh \(the default\) has none.*give --rl-pool all/, 'naming both flags and the fix');
  t.notMatch(tierAndFresh.output, /held-out resolved/, 'before any arm runs');
  // Fresh pools take train seeds from 2^30 up, seed s the s-th stretch of them: seeds whose stretch or tier pools would run past are refused.
  const pastSplit = await runTs(DEMO, [...withoutPool(args('1e-4', path.join(root, 'past-split'))), '--seeds', '200000000'], env);
  t.not(pastSplit.code, 0, 'a seed whose fresh pool runs past the train split is refused');
  t.match(pastSplit.output, /--seeds 200000000 with --rl-pool fresh runs past the train split's seeds \(2147483648\); give smaller seeds/, 'naming the flag and the fix');
  const intoFresh = await runTs(DEMO, [...withoutPool(args('1e-4', path.join(root, 'into-fresh'))), '--seeds', '130000000'], env);
  t.not(intoFresh.code, 0, 'a seed whose tier pools reach the fresh pools\' seeds is refused');
  t.match(intoFresh.output, /--seeds 130000000's tier pools and SFT tasks reach the fresh RL pools' train seeds \(from 1073741824\); give smaller seeds/);
  t.notMatch(intoFresh.output, /oracle:/, 'before any phase runs');
});

