/**
 * Rejection fine-tuning's step (the rft preset): on synthetic trajectories, the loss is the
 * token-mean NLL over exactly the kept tokens (resolved trajectories, format-error turns out);
 * in train(), on FrozenLake, each step fine-tunes on what resolved and says so in its metrics.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import type { Trajectory, TurnRecord } from '../../../../lib/agent/trajectory.js';
import { presetConfig } from '../../../../lib/model/model-config.js';
import { NativePolicy } from '../../../../lib/model/native-policy.js';
import { optimizerStepsPerRun, PRESETS, warmupWarning } from '../../../../lib/train/algorithms.js';
import { resolveTrainConfig } from '../../../../lib/train/config.js';
import { rejectionLearn } from '../../../../lib/train/rft/learn.js';
import { RunDirectory } from '../../../../lib/train/run-dir.js';
import { train } from '../../../../lib/train/trainer.js';
import { Rng, testSeed } from '../../../reference/random.js';

const seed = testSeed();
t.comment(`seed ${seed} (replay with SWERL_TEST_SEED=${seed})`);
const rng = new Rng(seed);

/** A trajectory of `turns` assistant turns of `length` tokens between observations; turns in `broken` broke the format. */
function trajectory(taskId: string, reward: number, turns: number, broken: number[] = []): Trajectory {
  const prompt = 20, length = 6, observation = 5;
  const tokens: number[] = Array.from({ length: prompt }, () => rng.int(265));
  const mask: number[] = new Array(prompt).fill(0);
  const records: TurnRecord[] = [];
  for (let k = 0; k < turns; k++) {
    const record: TurnRecord = { contextTokens: tokens.length, responseTokens: length, finishReason: 'stop', response: '', observation: '', observationTokens: observation, generateMs: 0, stepMs: 0 };
    if (broken.includes(k)) record.formatError = 'no tool call';
    records.push(record);
    for (let i = 0; i < length; i++) (tokens.push(rng.int(265)), mask.push(1));
    for (let i = 0; i < observation; i++) (tokens.push(rng.int(265)), mask.push(0));
  }
  return {
    taskId, group: 0, sample: 0, tokens: Int32Array.from(tokens), mask: Uint8Array.from(mask), logprobs: new Float32Array(tokens.length),
    promptTokens: prompt, responseTokens: tokens.length - prompt, turns: records, termination: 'submitted', reward, rewardReason: '', attempts: 1, weightVersion: 0,
    timings: { totalMs: 0, generateMs: 0, envMs: 0, rewardMs: 0 },
  };
}

t.test('the loss is the NLL of exactly the kept tokens: resolved trajectories, well-formed turns', async (t) => {
  const policy = await NativePolicy.load(presetConfig('qwen3-tiny', 265), { seed: 2 });
  t.teardown(() => policy.dispose());
  const batch = [trajectory('a', 1, 3, [1]), trajectory('b', 0, 2), trajectory('c', 1, 2), trajectory('d', 1, 1, [0])];
  // Independently: the kept tokens' NLL under the weights before the step.
  const lps = await policy.logprobs(batch.map((x) => x.tokens));
  let sum = 0, count = 0;
  const keptTurns: Record<number, number[]> = { 0: [0, 2], 2: [0, 1] };
  for (const [i, turns] of Object.entries(keptTurns)) {
    for (const k of turns) {
      const turn = batch[Number(i)]!.turns[k]!;
      for (let j = turn.contextTokens; j < turn.contextTokens + turn.responseTokens; j++) (sum -= lps[Number(i)]![j]!), count++;
    }
  }
  const step = await rejectionLearn(policy, batch, { epochs: 1, sequencesPerStep: 8, distinct: false }, 1, 1);
  t.match(step.round, { sampled: 4, resolved: 3, maskedTurns: 2, emptyAfterMasking: 1, tasksSolved: 3, examples: 2, copies: 0 });
  t.equal(step.results.length, 1, 'two examples, eight to a step: one optimizer step');
  t.ok(Math.abs(step.results[0]!.loss - sum / count) < 1e-5, `loss ${step.results[0]!.loss} = NLL of the ${count} kept tokens ${sum / count}`);
  t.equal(step.results[0]!.lossTokens, count, `every kept token, no other (${step.results[0]!.lossTokens})`);

  const twice = await rejectionLearn(policy, batch, { epochs: 2, sequencesPerStep: 1, distinct: false }, 1, 2);
  t.equal(twice.results.length, 4, 'two examples, one to a step, two epochs: four steps');
  t.same((await rejectionLearn(policy, [trajectory('e', 0, 2)], { epochs: 1, sequencesPerStep: 8, distinct: false }, 1, 3)).results, [], 'nothing resolved: no step');
});

t.test('distinct: a task\'s resolved copies (equal token for token) are counted, and kept once when asked', async (t) => {
  const policy = await NativePolicy.load(presetConfig('qwen3-tiny', 265), { seed: 3 });
  t.teardown(() => policy.dispose());
  const a = trajectory('a', 1, 2);
  const copy = { ...a, sample: 1, tokens: a.tokens.slice(), mask: a.mask.slice() };
  const other = trajectory('a', 1, 2);
  // The same tokens under another task are not a copy: the task is part of the episode.
  const elsewhere = { ...a, taskId: 'b', sample: 0 };
  const batch = [a, copy, other, elsewhere, { ...copy, sample: 2 }];
  // Independently: the token-mean NLL of the learned tokens of the listed trajectories, before the step.
  const lps = await policy.logprobs(batch.map((x) => x.tokens));
  const nll = (kept: number[]) => {
    let sum = 0, count = 0;
    for (const i of kept) batch[i]!.mask.forEach((m, j) => m === 1 && ((sum -= lps[i]![j]!), count++));
    return sum / count;
  };
  const all = await rejectionLearn(policy, batch, { epochs: 1, sequencesPerStep: 8, distinct: false }, 1, 1);
  t.match(all.round, { resolved: 5, copies: 2, examples: 5, tasksSolved: 2 }, 'off: the copies are counted and kept');
  t.ok(Math.abs(all.results[0]!.loss - nll([0, 1, 2, 3, 4])) < 1e-5, 'off: the loss weighs a copied episode by its copies');
  const fresh = await NativePolicy.load(presetConfig('qwen3-tiny', 265), { seed: 3 });
  t.teardown(() => fresh.dispose());
  const once = await rejectionLearn(fresh, batch, { epochs: 1, sequencesPerStep: 8, distinct: true }, 1, 1);
  t.match(once.round, { resolved: 5, copies: 2, examples: 3, tasksSolved: 2 }, 'on: one of each');
  t.ok(Math.abs(once.results[0]!.loss - nll([0, 2, 3])) < 1e-5, `on: the loss is the NLL of the distinct episodes (${once.results[0]!.loss} vs ${nll([0, 2, 3])})`);
});

t.test("the rft preset: Nebius's optimizer defaults where the config sets none, one sample per task allowed", async (t) => {
  const base = {
    run: { dir: 'x', steps: 4 }, model: { preset: 'qwen3-tiny' },
    tasks: { kind: 'frozenlake', trainSeeds: [0, 1] },
    algorithm: { preset: 'rft' },
    rollout: { tasksPerStep: 2, samplesPerTask: 1, maxTurns: 3, promptBudget: 256, responseBudget: 256, maxTokensPerTurn: 8 },
  };
  const c = resolveTrainConfig(base);
  t.match(c.optimizer, { lr: 5e-6, weightDecay: 0.1, warmupSteps: 10, schedule: 'cosine' });
  t.same(c.algorithm.rejection, { epochs: 1, sequencesPerStep: 8, distinct: false });
  t.same(resolveTrainConfig({ ...base, algorithm: { preset: 'rft', rejection: { epochs: 2, sequencesPerStep: 4 } } }).algorithm.rejection, { epochs: 2, sequencesPerStep: 4, distinct: false }, 'a rejection section without distinct keeps every copy');
  t.throws(() => resolveTrainConfig({ ...base, algorithm: { preset: 'rft', rejection: { epochs: 1, sequencesPerStep: 8, distinct: 'yes' } } }), /config\.algorithm\.rejection\.distinct/, 'distinct must be a boolean, named');
  t.match(resolveTrainConfig({ ...base, optimizer: { lr: 1e-4 } }).optimizer, { lr: 1e-4, weightDecay: 0.1 }, 'a field the config sets stays');
  t.equal(optimizerStepsPerRun(c.algorithm, 4, 2), 4, 'at most ceil(2 / 8) = 1 step per training step');
  t.match(
    warmupWarning(c.algorithm, c.optimizer.warmupSteps, 4),
    /^optimizer\.warmupSteps \(10\) is half or more of the run's 4 optimizer steps at most \(rejection .*\): the learning rate stays below optimizer\.lr .*; set optimizer\.warmupSteps lower/,
    "the preset's warm-up in a short run is said, with the fix",
  );
  t.equal(warmupWarning(c.algorithm, 10, 21), null, 'under half the run: nothing');
  t.equal(warmupWarning(c.algorithm, 0, 1), null, 'no warm-up: nothing');
  t.match(warmupWarning({ ...PRESETS['grpo++'], preset: 'grpo++' }, 5, 10), /^optimizer\.warmupSteps \(5\) is half or more of the run's 10 optimizer steps: /, 'a policy gradient: the count is exact');
  t.equal(optimizerStepsPerRun({ ...PRESETS['grpo++'], preset: 'grpo++', miniBatches: 2, epochs: 3 }, 4, 16), 24);
  t.throws(() => resolveTrainConfig({ ...base, algorithm: { preset: 'grpo++' } }), /samplesPerTask/, 'a policy gradient still needs groups');
});

t.test('train() with the rft preset on FrozenLake: each step fine-tunes on what resolved', async (t) => {
  const dir = path.join(t.testdir(), 'run');
  await train({
    run: { dir, steps: 3, seed: 5, checkpointEvery: 3, progress: 'none' },
    model: { preset: 'qwen3-tiny', threads: 1 },
    optimizer: { lr: 0.002, weightDecay: 0, warmupSteps: 0 },
    tasks: { kind: 'frozenlake', size: 2, holeDensity: 0, maxSteps: 3, prompt: 'short', trainSeeds: [0, 1, 2, 3], formatWarmupSteps: 20, formatWarmupLr: 0.01 },
    algorithm: { preset: 'rft', rejection: { epochs: 1, sequencesPerStep: 4, distinct: true } },
    // Cool enough that a task's samples repeat (copies to count), warm enough that they differ too.
    rollout: { temperature: 0.3, tasksPerStep: 4, samplesPerTask: 4, concurrency: 16, maxTurns: 3, promptBudget: 256, responseBudget: 256, maxTokensPerTurn: 8 },
    eval: { every: 0 },
  });
  const rows = readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
  t.equal(rows.length, 3);
  const run = new RunDirectory(dir);
  for (const row of rows) {
    const r = row.rejection as { sampled: number; resolved: number; examples: number; emptyAfterMasking: number; copies: number };
    t.equal(r.sampled, 16);
    t.equal(r.resolved, Math.round(row.reward.mean * 16), `step ${row.step}: resolved = reward 1 trajectories`);
    // Independently, from the step's saved episodes: resolved ones whose task and tokens came before.
    const resolved = (await run.readTrajectories(row.step)).filter((x) => x.reward === 1).map((x) => `${x.taskId} ${x.tokens.join(',')}`);
    t.equal(r.copies, resolved.length - new Set(resolved).size, `step ${row.step}: ${r.copies} copies of ${r.resolved} resolved`);
    t.equal(r.examples, r.resolved - r.copies - r.emptyAfterMasking, 'distinct: the copies are not learned');
    t.equal(row.loss.optimizerSteps, Math.ceil(r.examples / 4), `step ${row.step}: ${r.examples} kept, four to a step`);
    if (r.examples === 0) t.match(row.warnings, [/^no trajectory was kept to fine-tune on/]);
  }
  t.ok(rows.some((row) => row.rejection.examples > 0), 'some step learned from resolved episodes');
  t.ok(rows.some((row) => row.rejection.copies > 0), 'a tiny policy on 2x2 maps samples copies: the count is tested on some');
});
