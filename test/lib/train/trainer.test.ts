/**
 * train() in process, on FrozenLake with the tiny model from scratch: what a run leaves
 * behind, the events it reports, the metrics it documents, that a step with a nonzero
 * advantage changes the weights, and a stop mid-rollout.
 *
 * A model from scratch almost never reaches the goal in two steps, so the runs add DAPO's
 * overlong penalty to grpo++: long turns (up to 64 sampled tokens, cut short when <|im_end|>
 * happens to be sampled) give every trajectory a shaped reward of its own, hence nonzero
 * advantages from the first step, whatever the policy does.
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import { train, type TrainSummary } from '../../../lib/train/trainer.js';
import type { TrainEvent } from '../../../lib/train/progress.js';
import { RunDirectory, type SavedTrajectory } from '../../../lib/train/run-dir.js';
import { readEvents } from './tracking/events-reader.js';


function config(dir: string, overrides: { run?: object; tasks?: object; eval?: object } = {}) {
  return {
    run: { dir, steps: 2, seed: 3, checkpointEvery: 1, keepCheckpoints: 3, progress: 'none', ...overrides.run },
    model: { preset: 'qwen3-tiny', threads: 1 },
    optimizer: { lr: 0.002, weightDecay: 0, maxGradNorm: 1 },
    tasks: { kind: 'frozenlake', size: 2, holeDensity: 0.2, maxSteps: 3, prompt: 'short', trainSeeds: [0, 1, 2, 3], formatWarmupSteps: 1, ...overrides.tasks },
    algorithm: { preset: 'grpo++', overlong: { maxLength: 384, bufferLength: 320 } },
    rollout: { tasksPerStep: 2, samplesPerTask: 4, concurrency: 8, maxTurns: 3, promptBudget: 256, responseBudget: 384, maxTokensPerTurn: 64 },
    eval: { every: 1, ...overrides.eval },
  };
}

function metricsRows(dir: string): Record<string, any>[] {
  return readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, any>);
}

function trajectories(dir: string, step: number): Promise<SavedTrajectory[]> {
  return new RunDirectory(dir).readTrajectories(step);
}

/** The tensor bytes of a checkpoint (model.safetensors after its JSON header). */
function weightBytes(dir: string, step: number): Buffer {
  const file = readFileSync(path.join(dir, 'checkpoints', `step-${step}`, 'model.safetensors'));
  return file.subarray(8 + Number(file.readBigUInt64LE(0)));
}

t.test('a 2-step FrozenLake run: summary, events, metrics, trajectories, checkpoints', async (t) => {
  const dir = path.join(t.testdir(), 'run');
  const events: TrainEvent[] = [];
  const summary: TrainSummary = await train(config(dir), { onEvent: (e) => events.push(e) });

  t.equal(summary.dir, dir);
  t.equal(summary.steps, 2);
  t.equal(summary.episodes, 2 * 8, 'the episodes its 2 steps played');
  t.equal(summary.stopped, false);
  t.same(summary.evals.map((e) => e.step), [0, 1, 2], 'greedy evals before RL and after each step (eval.every 1)');
  for (const e of summary.evals) t.ok(e.success >= 0 && e.success <= 1);
  t.equal(summary.checkpoint, path.join(dir, 'checkpoints', 'step-2'));
  t.equal(summary.last?.step, 2);
  t.same(JSON.parse(readFileSync(path.join(dir, 'summary.json'), 'utf8')), JSON.parse(JSON.stringify(summary)), 'summary.json is the returned summary');

  // Events: the warm-up first (it makes the step-0 policy), then the run, rollout progress
  // events collapsed into one entry per step.
  const order: string[] = [];
  for (const e of events) {
    const key = `${e.type}:${e.step}`;
    if (e.type === 'rollouts' && order.at(-1) === key) continue;
    order.push(key);
  }
  t.same(order, ['warmup:1', 'start:0', 'eval:0', 'rollouts:1', 'eval:1', 'step:1', 'checkpoint:1', 'rollouts:2', 'eval:2', 'step:2', 'checkpoint:2', 'done:2']);
  const start = events.find((e) => e.type === 'start');
  t.match(start, { resumed: false, steps: 2, dir });
  const progress = events.flatMap((e) => (e.type === 'rollouts' && e.step === 1 ? [e.progress] : []));
  t.same(progress.map((p) => p.done), [1, 2, 3, 4, 5, 6, 7, 8], 'one progress event per finished trajectory');
  t.ok(progress.every((p) => p.total === 8));

  // metrics.jsonl: the step-0 eval row, then one row per step with the documented fields.
  const rows = metricsRows(dir);
  t.same(rows.map((r) => r.step), [0, 1, 2]);
  t.same(rows[0], { step: 0, eval: { success: summary.evals[0]!.success } });
  const finite = (v: unknown) => typeof v === 'number' && Number.isFinite(v);
  for (const row of rows.slice(1)) {
    const step = row.step as number;
    t.equal(row.trajectories, 8, `step ${step}: tasksPerStep x samplesPerTask trajectories`);
    t.ok(finite(row.reward.mean) && finite(row.reward.shapedMean) && finite(row.reward.std), `step ${step}: reward`);
    t.ok(row.reward.shapedMean < 0, `step ${step}: the overlong penalty shaped the rewards`);
    t.equal(row.groups.solveAll + row.groups.solveNone + row.groups.solvePartial, 2, `step ${step}: groups.solveAll/None/Partial cover the 2 groups`);
    t.equal(row.groups.rounds, 1);
    t.equal(row.episodes, 8, `step ${step}: one round, its 8 episodes played`);
    t.same(Object.values(row.terminations as Record<string, number>).reduce((a, b) => a + b, 0), 8, `step ${step}: terminations count every trajectory`);
    t.equal(row.rewardHackAttempts, 0, `step ${step}: no trajectory changed test infrastructure`);
    for (const key of ['entropy', 'clipFracLow', 'clipFracHigh', 'approxKl', 'gradNorm', 'value', 'lr', 'ratioMax'])
      t.ok(finite(row.loss[key]), `step ${step}: loss.${key} = ${row.loss[key]}`);
    t.ok(row.loss.entropy > 0, `step ${step}: entropy of a model from scratch is high`);
    t.ok(row.loss.clipFracLow >= 0 && row.loss.clipFracLow <= 1 && row.loss.clipFracHigh >= 0 && row.loss.clipFracHigh <= 1);
    t.equal(row.loss.optimizerSteps, 1, `step ${step}: one mini-batch, one epoch`);
    t.ok(row.loss.lossTokens > 0);
    t.ok(finite(row.length.responseMean) && row.length.responseMean > 0 && row.length.responseMax >= row.length.responseMean);
    t.ok(finite(row.length.promptMean));
    t.ok(row.turns.mean >= 1 && row.turns.mean <= 3 && row.turns.max <= 3, `step ${step}: turns.mean ${row.turns.mean}`);
    for (const key of ['rolloutSeconds', 'trainSeconds', 'generateSecondsSum', 'envSecondsSum', 'tokensPerSecondTrain', 'stepSeconds', 'elapsedSeconds'])
      t.ok(finite(row.time[key]) && row.time[key] >= 0, `step ${step}: time.${key}`);
    t.ok(finite(row.eval.success) && finite(row.eval.seconds), `step ${step}: eval after the step`);
  }
  t.ok(rows[2]!.time.elapsedSeconds > rows[1]!.time.elapsedSeconds);

  // Trajectories: the saved shaping agrees with the metrics; the mask covers exactly what the
  // policy sampled.
  for (const step of [1, 2]) {
    const saved = await trajectories(dir, step);
    t.equal(saved.length, 8);
    t.same(saved.map((x) => [x.group, x.sample]), [0, 0, 0, 0, 1, 1, 1, 1].map((g, i) => [g, i % 4]));
    const filtered = saved.filter((x) => x.filtered).length;
    t.equal(filtered, rows[step]!.filtered, `step ${step}: filtered count`);
    for (const x of saved) {
      t.equal(x.filtered, ['max_context', 'max_steps', 'timeout'].includes(x.termination), `compact filter follows termination ${x.termination}`);
      const expected = new Array(x.tokens.length).fill(0);
      for (const turn of x.turns) expected.fill(1, turn.contextTokens, turn.contextTokens + turn.responseTokens);
      t.same(x.mask, expected, `step ${step} ${x.taskId}/${x.sample}: mask is 1 exactly on the sampled tokens`);
      t.ok(x.logprobs.every((lp, i) => (x.mask[i] === 1 ? lp <= 0 : lp === 0)), 'logprobs only where sampled');
    }
    // The advantage sums to zero in each group (leave-one-out), and some is nonzero.
    for (const g of [0, 1]) {
      const sum = saved.filter((x) => x.group === g).reduce((s, x) => s + x.advantage, 0);
      t.ok(Math.abs(sum) < 1e-4, `step ${step} group ${g}: advantages sum to 0`);
    }
    t.ok(saved.some((x) => x.kept && !x.filtered && x.advantage !== 0), `step ${step}: some trajectory trains with a nonzero advantage`);
  }

  // Checkpoints: step 0 (the warmed-up start) and one per step; the weights changed at each
  // step, since each step took an optimizer step with a nonzero advantage.
  t.same(readdirSync(path.join(dir, 'checkpoints')).sort(), ['step-0', 'step-1', 'step-2']);
  const state = JSON.parse(readFileSync(path.join(dir, 'checkpoints', 'step-2', 'swerl_state.json'), 'utf8'));
  t.match(state, { optimizerStep: 2, hasMoments: true, extra: { trainer: { step: 2 } } });
  const w0 = weightBytes(dir, 0);
  const w1 = weightBytes(dir, 1);
  const w2 = weightBytes(dir, 2);
  t.equal(w0.length, w1.length);
  t.notOk(w0.equals(w1), 'step 1 changed the weights');
  t.notOk(w1.equals(w2), 'step 2 changed the weights');
  t.ok(readFileSync(path.join(dir, 'curves.svg'), 'utf8').startsWith('<svg'), 'curves.svg');
  // TensorBoard: one events file holding every row of metrics.jsonl, read back independently.
  const eventFiles = readdirSync(path.join(dir, 'tensorboard'));
  t.equal(eventFiles.length, 1, 'tensorboard/ holds one events file');
  const tensorboard = readEvents(readFileSync(path.join(dir, 'tensorboard', eventFiles[0]!)));
  t.equal(tensorboard.tornBytes, 0);
  const scalars = tensorboard.events.filter((e) => e.scalars);
  t.same(scalars.map((e) => e.step), [0, 1, 2], 'the step-0 eval, then each step');
  for (const row of metricsRows(dir).filter((r) => r.step > 0)) {
    const logged = scalars.find((e) => e.step === row.step)!.scalars!;
    t.ok(Math.abs(logged.get('reward/mean')! - row.reward.mean) <= 1e-6 * Math.max(1, Math.abs(row.reward.mean)), `step ${row.step}: reward/mean`);
    t.equal(logged.get('critic/score/mean'), logged.get('reward/mean'), "verl's name for it beside");
  }
  t.match(JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8')), { run: { dir, steps: 2 }, algorithm: { preset: 'grpo++', truncation: 'mask', normLength: 384 } }, 'config.json is the resolved config');
});

t.test('eval.atStart false: a run that continues a measured checkpoint skips the step-0 eval, and evaluates after its steps', async (t) => {
  const dir = path.join(t.testdir(), 'run');
  const events: TrainEvent[] = [];
  const summary = await train(config(dir, { run: { steps: 2, checkpointEvery: 2 }, eval: { every: 2, atStart: false } }), { onEvent: (e) => events.push(e) });
  t.same(summary.evals.map((e) => e.step), [2]);
  t.same(events.filter((e) => e.type === 'eval').map((e) => e.step), [2]);
  t.notOk(metricsRows(dir).some((r) => r.step === 0), 'no step-0 metrics row');
});

t.test('a step without any nonzero advantage leaves the weights as they were', async (t) => {
  // Plain grpo++ on a model from scratch: no answer is ever a move, every trajectory scores 0.
  const dir = path.join(t.testdir(), 'run');
  const c = config(dir, { run: { steps: 1 }, tasks: { formatWarmupSteps: 0 }, eval: { every: 0 } });
  const summary = await train({ ...c, algorithm: { preset: 'grpo++' }, rollout: { ...c.rollout, maxTokensPerTurn: 4 } });
  t.equal(summary.steps, 1);
  const [row] = metricsRows(dir);
  t.equal(row!.reward.mean, 0);
  t.equal(row!.loss.optimizerSteps, 0, 'nothing to learn from: no optimizer step');
  t.match(row!.warnings, [/^no optimizer step was taken: every trajectory was filtered or had advantage 0/], 'and the metrics say so');
  t.ok((await trajectories(dir, 1)).every((x) => x.advantage === 0));
  t.ok(weightBytes(dir, 0).equals(weightBytes(dir, 1)), 'the weights did not move');
});

t.test('a step that cannot teach anything says why: prompts over the budget, most trajectories filtered, no loss token', async (t) => {
  const dir = path.join(t.testdir(), 'run');
  const c = config(dir, { run: { steps: 1 }, tasks: { formatWarmupSteps: 0 }, eval: { every: 0 } });
  const events: TrainEvent[] = [];
  await train({ ...c, rollout: { ...c.rollout, promptBudget: 8 } }, { onEvent: (e) => events.push(e) });
  const [row] = metricsRows(dir);
  const n = row!.trajectories as number;
  t.equal(row!.terminations.max_context, n, 'every episode ended before its first turn');
  t.match(row!.warnings, [
    new RegExp(`^${n} of ${n} episodes ended before sampling: their opening prompts \\(up to \\d+ tokens\\) exceed rollout\\.promptBudget \\(8\\); raise it to at least \\d+`),
    new RegExp(`^${n} of ${n} trajectories were filtered out of the loss \\(terminations: max_context ${n}\\)`),
    /^no optimizer step was taken/,
  ]);
  t.same(events.filter((e) => e.type === 'warning').map((e) => (e as { message: string }).message), row!.warnings, 'each warning is an event (the console prints it)');
});

t.test("DAPO's dynamic sampling: uninformative groups are set aside and more are drawn, up to resampleRounds", async (t) => {
  // As above, no answer of a model from scratch scores: every group is uninformative, so all
  // 1 + resampleRounds rounds run and the last round's batch is trained on (to no effect).
  const dir = path.join(t.testdir(), 'run');
  const c = config(dir, { run: { steps: 1 }, tasks: { formatWarmupSteps: 0 }, eval: { every: 0 } });
  const summary = await train({ ...c, algorithm: { preset: 'dapo', resampleRounds: 2 }, rollout: { ...c.rollout, maxTokensPerTurn: 4 } });
  const [row] = metricsRows(dir);
  t.equal(row!.groups.rounds, 3, 'every round ran');
  t.equal(row!.episodes, 3 * 2 * 4, 'the episodes of every round are counted, the set-aside ones included');
  t.equal(summary.episodes, 3 * 2 * 4, 'and the run\'s summary counts them');
  const saved = await trajectories(dir, 1);
  t.equal(saved.length, 2 * 4, 'one batch of tasksPerStep x samplesPerTask');
  t.same([...new Set(saved.map((x) => x.group))].sort(), [0, 1], 'groups numbered from 0');
});

t.test('rollout.mode async: the next batch is sampled while the learner trains, at most maxStaleness steps behind; a stop and a resume', async (t) => {
  const dir = path.join(t.testdir(), 'run');
  const c = config(dir, { run: { steps: 3 }, tasks: { formatWarmupSteps: 0 }, eval: { every: 0 } });
  const asyncConfig = { ...c, rollout: { ...c.rollout, mode: 'async', maxStaleness: 1 } };
  // Stopped once step 1 is done: step 2's batch, already being collected, is abandoned.
  const stop = new AbortController();
  const first = await train(asyncConfig, { signal: stop.signal, onEvent: (e) => e.type === 'step' && e.step === 1 && stop.abort() });
  t.match(first, { steps: 1, stopped: true });
  const summary = await train({ ...asyncConfig, run: { ...asyncConfig.run, resume: true } });
  t.match(summary, { steps: 3, stopped: false });

  const rows = metricsRows(dir);
  t.same(rows.map((r) => r.step), [1, 2, 3]);
  for (const row of rows) {
    t.match(row.async, { maxStaleness: 1, dropped: 0, staleness: { mean: Number, max: Number }, waitSeconds: Number, collectSeconds: Number }, `step ${row.step}: the async metrics`);
    t.ok(row.async.staleness.max <= 1, `step ${row.step}: no trajectory more than 1 step behind (${row.async.staleness.max})`);
  }
  t.equal(rows[0]!.async.staleness.max, 0, 'step 1 trains the weights that sampled it');
  t.equal(rows[2]!.async.staleness.max, 1, "step 3's batch was sampled (from its start) while step 2 trained: one step behind");
  const optimizerStepsPerStep = rows[0]!.loss.optimizerSteps as number;
  t.ok(optimizerStepsPerStep > 0);
  const third = await trajectories(dir, 3);
  // The resumed run starts at version 1 (optimizer steps = one step's); step 3's episodes began on those weights.
  t.ok(third.every((x) => x.weightVersion < 2 * optimizerStepsPerStep), "step 3's episodes began before step 2's update");
});

t.test('an abort mid-rollout stops the run with the earlier steps intact; resume completes it', async (t) => {
  const root = t.testdir();
  const dir = path.join(root, 'run');
  const c = config(dir, { run: { steps: 3 }, tasks: { formatWarmupSteps: 0 }, eval: { every: 0 } });
  const stop = new AbortController();
  const events: TrainEvent[] = [];
  const summary = await train(c, {
    signal: stop.signal,
    onEvent: (e) => {
      events.push(e);
      // The first trajectory of step 2 is done: the others are still being played.
      if (e.type === 'rollouts' && e.step === 2) stop.abort();
    },
  });
  t.equal(summary.stopped, true);
  t.equal(summary.steps, 1, 'step 1 finished, step 2 was dropped');
  t.equal(summary.checkpoint, path.join(dir, 'checkpoints', 'step-1'));
  t.match(events.at(-1), { type: 'stopped', step: 1 });
  t.notOk(events.some((e) => e.type === 'step' && e.step === 2));
  t.same(metricsRows(dir).map((r) => r.step), [1], 'metrics of the finished step only');
  t.same(readdirSync(path.join(dir, 'trajectories')), ['step-1.jsonl.gz']);
  t.notOk(existsSync(path.join(dir, 'checkpoints', 'step-2')));
  t.match(JSON.parse(readFileSync(path.join(dir, 'summary.json'), 'utf8')), { stopped: true, steps: 1 });
  const stepOne = await trajectories(dir, 1);

  const resumed = await train({ ...c, run: { ...c.run, resume: true } });
  t.equal(resumed.stopped, false);
  t.equal(resumed.steps, 3);
  t.same(metricsRows(dir).map((r) => r.step), [1, 2, 3], 'each step exactly once');
  t.same(await trajectories(dir, 1), stepOne, 'step 1 as it was');

  // A run straight through draws the same tasks at every step.
  const straightDir = path.join(root, 'straight');
  await train({ ...c, run: { ...c.run, dir: straightDir } });
  for (const step of [1, 2, 3]) {
    const [a, b] = [await trajectories(dir, step), await trajectories(straightDir, step)];
    t.same(a.map((x) => x.taskId), b.map((x) => x.taskId), `step ${step}: same tasks`);
    t.same(a.map((x) => x.tokens), b.map((x) => x.tokens), `step ${step}: same sampled tokens`);
  }
});

t.test('Ctrl-C during the format warm-up stops it within a warm-up step', async (t) => {
  const dir = t.testdir();
  const abort = new AbortController();
  let warmupSteps = 0, afterAbort = 0;
  const summary = await train(config(dir, { tasks: { formatWarmupSteps: 500 } }), {
    signal: abort.signal,
    onEvent: (e: TrainEvent) => {
      if (e.type !== 'warmup') return;
      warmupSteps++;
      if (abort.signal.aborted) afterAbort++;
      else abort.abort();
    },
  });
  // Counted in steps, not seconds (load moves seconds): it used to finish all 500.
  t.ok(warmupSteps > 0, 'the warm-up was under way');
  t.ok(afterAbort <= 1, `${afterAbort} warm-up step(s) reported after the abort`);
  t.match(summary, { steps: 0, stopped: true });
  t.notOk(existsSync(path.join(dir, 'checkpoints')) && readdirSync(path.join(dir, 'checkpoints')).length > 0, 'nothing was saved');
});

t.test('a policy whose numbers went non-finite stops the run with an error naming the last good checkpoint', async (t) => {
  const dir = t.testdir();
  const base = config(dir, { run: { steps: 1 }, tasks: { formatWarmupSteps: 0 }, eval: { every: 0 } });
  await train(base);
  // NaN in the final norm of checkpoint 1: every logit of the resumed policy is NaN.
  const file = path.join(dir, 'checkpoints', 'step-1', 'model.safetensors');
  const bytes = readFileSync(file);
  const headerLength = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString()) as Record<string, { data_offsets: [number, number] }>;
  const [start, end] = header['model.norm.weight']!.data_offsets;
  for (let i = 8 + headerLength + start; i < 8 + headerLength + end; i += 4) bytes.writeUInt32LE(0x7fc00000, i);
  writeFileSync(file, bytes);
  await t.rejects(train({ ...base, run: { ...base.run, steps: 2, resume: true } }), {
    code: 'ERR_SWERL_NUMERIC',
    message: /^step 2: 8 of 8 rollouts were sampled with non-finite logprobs .*; the run stopped and this step was not saved; the last good checkpoint is .*step-1 \(step 1\)\. Lower optimizer\.lr/,
  });
  t.same(metricsRows(dir).map((r) => r.step), [1], 'step 2 left no metrics');
});

t.test("budgets past a checkpoint's max_position_embeddings are refused before any rollout", async (t) => {
  const { writeTinyCheckpoint } = await import('../../support/tiny-checkpoint.js');
  const { Rng } = await import('../../reference/random.js');
  const tmp = t.testdir();
  const model = await writeTinyCheckpoint(path.join(tmp, 'model'), new Rng(7));
  const dir = path.join(tmp, 'run');
  const c = config(dir, { run: { steps: 1 }, tasks: { formatWarmupSteps: 0 }, eval: { every: 0 } });
  const events: TrainEvent[] = [];
  await t.rejects(
    train({ ...c, model: { path: model.dir, threads: 1 }, rollout: { ...c.rollout, promptBudget: 1024, responseBudget: 4000 } }, { onEvent: (e) => events.push(e) }),
    { code: 'ERR_SWERL_INVALID_ARG', message: /^config\.rollout\.promptBudget \+ responseBudget allows 5024 tokens, more than the model's max_position_embeddings \(4096\); lower the budgets, or give the model a longer context \(rope_scaling: yarn/ },
  );
  t.notOk(events.some((e) => e.type === 'rollouts'), 'no rollout ran');
});
