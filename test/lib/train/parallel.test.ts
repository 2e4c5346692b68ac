// Data-parallel training end to end with real processes on loopback (Gloo): `swerl train
// --nproc 2` on FrozenLake takes the steps one process takes (the same rewards, weights equal
// within fp32 summation noise, the ranks bit-identical), rank 0 alone writes the run; a rank
// killed mid-run stops the group with a clear message and leaves no process behind. Also the
// torchrun environment's parsing, the shares, and the gather through a group of one.
// (Groups that sample through servers, SWE tasks and async rollouts: parallel-sampling.test.ts.)
import { readFileSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import type { Trajectory } from '../../../lib/agent/trajectory.js';
import { presetConfig } from '../../../lib/model/model-config.js';
import { NativePolicy } from '../../../lib/model/native-policy.js';
import { allGatherBytes, gatherTrajectories, parallelFromEnv, rankShare } from '../../../lib/train/parallel.js';
import { ROOT, runSwerl, spawnTs } from '../../support/child-process.js';
import { checkpointWeights, FROZENLAKE, freePort, KL, ranksOf, rows, RUN } from '../../support/process-group.js';

const CLI = path.join(ROOT, 'lib/cli.ts');
// Two ranks training through c10d: minutes alone, 9.5 for the first case beside a training job,
// past the suite's 10-minute default. A hung group still ends here.
t.setTimeout(30 * 60_000);

t.test('swerl train --nproc 2 (with a KL term), stopped after a step and resumed: the steps of one process, ranks bit-identical, rank 0 writes', async (t) => {
  const dir = t.testdir();
  const port = await freePort();
  const group = (...args: string[]) => runSwerl(['train', FROZENLAKE, ...RUN, ...KL, '--dir', path.join(dir, 'dp'), '--nproc', '2', '--master-port', String(port), ...args]);
  const [first, single] = await Promise.all([group('run.steps=1'), runSwerl(['train', FROZENLAKE, ...RUN, ...KL, '--dir', path.join(dir, 'one')])]);
  t.equal(first.code, 0, first.stderr.slice(-3000));
  t.equal(single.code, 0, single.stderr.slice(-3000));
  // The whole group resumes: rank 0 from its checkpoint, the other from rank 0 through the join.
  const parallel = await group('--resume');
  t.equal(parallel.code, 0, parallel.stderr.slice(-3000));
  t.notMatch(parallel.stderr, /\[rank 1\] step/, 'rank 1 does not report progress');
  const summary = JSON.parse(readFileSync(path.join(dir, 'dp', 'summary.json'), 'utf8'));
  t.same(summary.parallel, { worldSize: 2, identicalWeights: true }, 'the ranks ended bit-identical');
  const [dp, one] = [rows(path.join(dir, 'dp')), rows(path.join(dir, 'one'))];
  t.equal(dp.length, 2, 'one metrics row a step: rank 0 alone writes');
  t.same(dp.map((r) => r.reward), one.map((r) => r.reward), 'the same rollouts, gathered, across the resume');
  t.same(dp.map((r) => r.parallel), [{ worldSize: 2 }, { worldSize: 2 }]);
  const [a, b] = [await checkpointWeights(path.join(dir, 'dp/checkpoints/step-2')), await checkpointWeights(path.join(dir, 'one/checkpoints/step-2'))];
  const before = await checkpointWeights(path.join(dir, 'one/checkpoints/step-0'));
  let worst = 0;
  let moved = 0;
  for (const [name, values] of a) {
    const other = b.get(name)!;
    const start = before.get(name)!;
    for (let i = 0; i < values.length; i++) {
      worst = Math.max(worst, Math.abs(values[i]! - other[i]!) / Math.max(1, Math.abs(other[i]!)));
      moved = Math.max(moved, Math.abs(other[i]! - start[i]!));
    }
  }
  t.ok(moved > 1e-4, `the steps changed the weights (by up to ${moved.toExponential(2)})`);
  t.ok(worst <= 1e-5, `the group's weights equal one process's within fp32 noise (worst relative gap ${worst.toExponential(2)})`);
});

t.test('a rank killed mid-run: the launcher stops the group, says which, and nothing is left', async (t) => {
  const dir = t.testdir();
  const port = await freePort();
  const launcher = spawnTs(CLI, {}, ['train', FROZENLAKE, 'run.steps=50', 'model.threads=1', 'eval.every=0', '--dir', path.join(dir, 'run'), '--nproc', '2', '--master-port', String(port)]);
  let stderr = '';
  // Rank 0's progress comes through the launcher's stderr.
  const stepped = new Promise<void>((resolve) =>
    launcher.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (/step 1\/50/.test(stderr)) resolve();
    }),
  );
  const exited = new Promise<number | null>((resolve) => launcher.on('close', (code) => resolve(code)));
  await Promise.race([stepped, exited]);
  const victim = ranksOf(port).find((r) => r.rank === '1');
  t.ok(victim, 'rank 1 is running');
  process.kill(victim!.pid, 'SIGKILL');
  const code = await exited;
  t.not(code, 0, `the launcher fails (exit ${code})`);
  t.match(stderr, /swerl train: rank 1 exited with SIGKILL; stopping the other ranks/);
  await new Promise((r) => setTimeout(r, 500));
  t.same(ranksOf(port), [], 'no rank is left running');
});

t.test("torchrun's environment, parsed and checked", async (t) => {
  t.equal(parallelFromEnv({}), undefined);
  t.equal(parallelFromEnv({ WORLD_SIZE: '1', RANK: '0' }), undefined, 'a world of one is one process');
  t.same(parallelFromEnv({ WORLD_SIZE: '4', RANK: '3', LOCAL_RANK: '1', MASTER_ADDR: '10.0.0.2', MASTER_PORT: '29400' }), { rank: 3, worldSize: 4, localRank: 1, masterAddr: '10.0.0.2', masterPort: 29400, timeoutMs: 1_800_000 });
  t.same(parallelFromEnv({ WORLD_SIZE: '2', RANK: '0' }), { rank: 0, worldSize: 2, localRank: 0, masterAddr: '127.0.0.1', masterPort: 29500, timeoutMs: 1_800_000 }, "torchrun's defaults");
  t.throws(() => parallelFromEnv({ WORLD_SIZE: '2' }), { code: 'ERR_SWERL_INVALID_ARG', message: /RANK is unset and WORLD_SIZE is 2/ });
  t.throws(() => parallelFromEnv({ WORLD_SIZE: '2', RANK: '2' }), { message: /the environment variable RANK is "2"; give an integer in \[0, 1\]/ });
  t.throws(() => parallelFromEnv({ WORLD_SIZE: 'two', RANK: '0' }), { message: /WORLD_SIZE is "two"/ });
  t.throws(() => parallelFromEnv({ WORLD_SIZE: '2', RANK: '0', MASTER_PORT: '70000' }), { message: /MASTER_PORT is "70000"/ });
  t.same(rankShare([0, 1, 2, 3, 4], { rank: 1, worldSize: 2 }), [1, 3]);
  t.same(rankShare([0, 1, 2], undefined), [0, 1, 2]);
});

t.test('gathering through a group of one gives back what went in, in (group, sample) order', async (t) => {
  const policy = await NativePolicy.load(presetConfig('qwen3-tiny', 265), { seed: 1 });
  t.teardown(() => policy.dispose());
  const parallel = { rank: 0, worldSize: 1, localRank: 0, masterAddr: '127.0.0.1', masterPort: await freePort(), timeoutMs: 30_000 };
  await policy.joinGroup({ rank: 0, worldSize: 1, masterPort: parallel.masterPort });
  const bytes = Uint8Array.from({ length: 4099 }, () => Math.floor(Math.random() * 256));
  const [back] = await allGatherBytes(policy, parallel, bytes);
  t.ok(Buffer.from(back!).equals(Buffer.from(bytes)), 'bytes round-trip (a length that is not a multiple of 4)');
  const trajectory = (group: number, sample: number): Trajectory => ({
    taskId: `t${group}`, group, sample, tokens: Int32Array.from([1, 2, 3]), mask: Uint8Array.from([0, 1, 1]), logprobs: Float32Array.from([0, Math.fround(-0.1), Math.fround(-2.5e-8)]),
    promptTokens: 1, responseTokens: 2, turns: [], termination: 'submitted', reward: group, rewardReason: 'r', attempts: 1, weightVersion: 0, timings: { totalMs: 1, generateMs: 0, envMs: 0, rewardMs: 0 },
  });
  const gathered = await gatherTrajectories(policy, parallel, [trajectory(1, 1), trajectory(0, 1), trajectory(1, 0)]);
  t.same(gathered.map((g) => [g.group, g.sample]), [[0, 1], [1, 0], [1, 1]]);
  t.ok(gathered[0]!.logprobs instanceof Float32Array && gathered[0]!.logprobs[2] === Math.fround(-2.5e-8), 'typed arrays come back exact');
});
