/**
 * train() with the sampler/learner split: rollouts sampled by swerl serve servers over HTTP
 * (one the test starts with other weights, which the run's first sync must replace; and one the
 * run launches itself), the learner learning in process. Checked: the servers carry the
 * learner's weights (the sampler-learner logprob gap is fp32 noise), each step's trajectories
 * record the weights they were sampled with, and the servers load the new ones every step.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

import t, { type Test } from 'tap';

import { presetConfig } from '../../../lib/model/model-config.js';
import { NativePolicy } from '../../../lib/model/native-policy.js';
import { startServer } from '../../../lib/serve/server.js';
import { resolveTrainConfig } from '../../../lib/train/config.js';
import { RunDirectory } from '../../../lib/train/run-dir.js';
import { train } from '../../../lib/train/trainer.js';

function config(dir: string, sampler: object) {
  return {
    run: { dir, steps: 2, seed: 5, checkpointEvery: 1, progress: 'none' },
    model: { preset: 'qwen3-tiny', threads: 1 },
    optimizer: { lr: 0.002, weightDecay: 0, maxGradNorm: 1 },
    tasks: { kind: 'frozenlake', size: 2, holeDensity: 0.2, maxSteps: 3, prompt: 'short', trainSeeds: [0, 1, 2, 3], formatWarmupSteps: 1 },
    algorithm: { preset: 'grpo++', overlong: { maxLength: 384, bufferLength: 320 } },
    rollout: { tasksPerStep: 2, samplesPerTask: 4, concurrency: 8, maxTurns: 3, promptBudget: 256, responseBudget: 384, maxTokensPerTurn: 64 },
    eval: { every: 1 },
    sampler,
  };
}

function metricsRows(dir: string): Record<string, any>[] {
  return readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Record<string, any>);
}

async function checkRun(t: Test, dir: string) {
  const rows = metricsRows(dir).filter((r) => r.sampler);
  t.equal(rows.length, 2, 'sampler metrics on every training step');
  for (const r of rows) {
    t.ok(r.sampler.tokens > 0, `step ${r.step}: ${r.sampler.tokens} sampled tokens compared`);
    t.ok(r.sampler.gapMax < 1e-3, `step ${r.step}: sampler-learner gap mean ${r.sampler.gapMean.toExponential(2)}, max ${r.sampler.gapMax.toExponential(2)}`);
    t.ok(r.loss.optimizerSteps >= 1, `step ${r.step}: the learner stepped`);
  }
  const run = new RunDirectory(dir);
  const first = await run.readTrajectories(1);
  const second = await run.readTrajectories(2);
  t.ok(first.every((tr) => tr.weightVersion === 0), 'step 1 was sampled with the starting weights');
  t.ok(second.every((tr) => tr.weightVersion === rows[0]!.sampler.weightVersion && tr.weightVersion > 0), `step 2 with the weights after step 1 (version ${rows[0]!.sampler.weightVersion})`);
  t.same(readdirSync(path.join(dir, 'sampler-weights')), [`step-${rows[1]!.sampler.weightVersion}`], 'only the latest synced weights are kept');
}

t.test('external servers: the first sync replaces their weights; every step syncs', async (t) => {
  const served = await NativePolicy.load(presetConfig('qwen3-tiny', 265), { seed: 1234 });
  const dir = path.join(t.testdir(), 'run');
  // The run writes its weights under dir; the server loads from nowhere else.
  const server = await startServer(served, { port: 0, weightsRoot: path.dirname(dir) });
  t.teardown(async () => {
    await server.close();
    served.dispose();
  });
  const summary = await train(config(dir, { kind: 'remote', servers: [server.url] }));
  t.equal(summary.steps, 2);
  await checkRun(t, dir);
  t.equal(served.weights.version, 3, 'the server loaded weights 3 times: the start and after each step');
});

t.test('launched servers', async (t) => {
  const dir = path.join(t.testdir(), 'run');
  const summary = await train(config(dir, { kind: 'remote', launch: 2 }));
  t.equal(summary.steps, 2);
  await checkRun(t, dir);
});

t.test('async rollouts on a launched server: the next batch is sampled on the synced version before, at most k = 1 behind', async (t) => {
  const dir = path.join(t.testdir(), 'run');
  const c = config(dir, { kind: 'remote', launch: 1 });
  const summary = await train({ ...c, run: { ...c.run, steps: 3 }, eval: { every: 0 }, rollout: { ...c.rollout, mode: 'async', maxStaleness: 1 } });
  t.equal(summary.steps, 3);
  const rows = metricsRows(dir);
  t.same(rows.map((r) => r.async.staleness.max), [0, 1, 1], 'steps 2 and 3 train on batches sampled one version back');
  const versions = rows.map((r) => r.sampler.weightVersion as number);
  t.ok(versions[0]! > 0 && versions[1]! > versions[0]!, `the server loaded each step's weights (versions ${versions.join(', ')})`);
  const run = new RunDirectory(dir);
  t.ok((await run.readTrajectories(2)).every((tr) => tr.weightVersion === 0), "step 2's batch was sampled on the starting weights, while step 1 trained");
  t.ok((await run.readTrajectories(3)).every((tr) => tr.weightVersion === versions[0]), "step 3's on step 1's weights, while step 2 trained");
});

t.test('config refusals', async (t) => {
  const bad = (sampler: object, message: RegExp) => t.throws(() => resolveTrainConfig(config('/tmp/x', sampler)), { code: 'ERR_SWERL_INVALID_ARG', message });
  bad({ kind: 'remote' }, /config.sampler with kind "remote" needs exactly one of servers/);
  bad({ kind: 'remote', servers: ['http://127.0.0.1:1'], launch: 1 }, /needs exactly one of servers/);
  bad({ kind: 'native', servers: ['http://127.0.0.1:1'] }, /config.sampler.kind is "native" but servers or launch is set/);
  bad({ kind: 'remote', servers: ['localhost:8000'] }, /config.sampler.servers\/0|config.sampler.servers.0/);
  bad({ kind: 'remote', launch: 1, protocol: 'sglang' }, /config.sampler.protocol must be "openai" with launch/);
});
