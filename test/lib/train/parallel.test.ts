// Data-parallel training end to end with real processes on loopback (Gloo): `swerl train
// --nproc 2` on FrozenLake takes the steps one process takes (the same rewards, weights equal
// within fp32 summation noise, the ranks bit-identical), rank 0 alone writes the run; a rank
// killed mid-run stops the group with a clear message and leaves no process behind. Also the
// torchrun environment's parsing, the shares, and the gather through a group of one.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import type { Trajectory } from '../../../lib/agent/trajectory.js';
import { presetConfig } from '../../../lib/model/model-config.js';
import { NativePolicy } from '../../../lib/model/native-policy.js';
import { allGatherBytes, gatherTrajectories, parallelFromEnv, rankShare } from '../../../lib/train/parallel.js';
import { RunDirectory } from '../../../lib/train/run-dir.js';
import { train } from '../../../lib/train/trainer.js';
import { ROOT, runSwerl, spawnTs } from '../../support/child-process.js';
import { checkpointWeights, freePort } from '../../support/process-group.js';

const CLI = path.join(ROOT, 'lib/cli.ts');
const FROZENLAKE = path.join(ROOT, 'examples/frozenlake.json');
const RUN = ['run.steps=2', 'model.threads=1', 'eval.every=0', 'run.plots=false'];
/** With a KL term: each rank reads the reference from rank 0's step-0 checkpoint. */
const KL = ['algorithm.kl={coef: 0.05}'];

/** The pids of live processes whose environment holds MASTER_PORT=port (the ranks of one launch). */
function ranksOf(port: number): { pid: number; rank: string }[] {
  const found: { pid: number; rank: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const env = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (env.includes(`MASTER_PORT=${port}`)) found.push({ pid: Number(entry), rank: env.find((e) => e.startsWith('RANK='))?.slice(5) ?? '?' });
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

const rows = (dir: string) => readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));

t.test('swerl train --nproc 2 (with a KL term): the steps of one process, ranks bit-identical, rank 0 writes', async (t) => {
  const dir = t.testdir();
  const port = await freePort();
  const [parallel, single] = await Promise.all([
    runSwerl(['train', FROZENLAKE, ...RUN, ...KL, '--dir', path.join(dir, 'dp'), '--nproc', '2', '--master-port', String(port)]),
    runSwerl(['train', FROZENLAKE, ...RUN, ...KL, '--dir', path.join(dir, 'one')]),
  ]);
  t.equal(parallel.code, 0, parallel.stderr.slice(-3000));
  t.equal(single.code, 0, single.stderr.slice(-3000));
  t.notMatch(parallel.stderr, /\[rank 1\] step/, 'rank 1 does not report progress');
  const summary = JSON.parse(readFileSync(path.join(dir, 'dp', 'summary.json'), 'utf8'));
  t.same(summary.parallel, { worldSize: 2, identicalWeights: true }, 'the ranks ended bit-identical');
  const [dp, one] = [rows(path.join(dir, 'dp')), rows(path.join(dir, 'one'))];
  t.equal(dp.length, 2, 'one metrics row a step: rank 0 alone writes');
  t.same(dp.map((r) => r.reward), one.map((r) => r.reward), 'the same rollouts, gathered');
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

t.test('a SWE task in a group: each rank plays its share in its own bwrap sandboxes, rank 0 writes every trajectory, none is left', async (t) => {
  const dir = t.testdir();
  const port = await freePort();
  const sandboxes = path.join(dir, 'sandboxes');
  const run = await runSwerl(
    ['train', path.join(ROOT, 'examples/swe-mini.json'), 'run.steps=1', 'model.threads=1', 'eval.every=0', 'run.plots=false', '--dir', path.join(dir, 'run'), '--nproc', '2', '--master-port', String(port)],
    { SWERL_SANDBOX_ROOT: sandboxes },
  );
  t.equal(run.code, 0, run.stderr.slice(-3000));
  const summary = JSON.parse(readFileSync(path.join(dir, 'run', 'summary.json'), 'utf8'));
  t.same(summary.parallel, { worldSize: 2, identicalWeights: true });
  const saved = await new RunDirectory(path.join(dir, 'run')).readTrajectories(1);
  t.equal(saved.length, 4, 'tasksPerStep 2 x samplesPerTask 2, gathered from both ranks');
  t.ok(saved.every((x) => x.turns.length > 0 && x.termination !== 'error'), 'every episode ran in a sandbox');
  t.same(readdirSync(sandboxes).filter((name) => !name.startsWith('.')), [], 'no sandbox is left');
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

t.test('a data-parallel config the group cannot run yet is refused before anything starts', async (t) => {
  const dir = t.testdir();
  const config = JSON.parse(readFileSync(FROZENLAKE, 'utf8'));
  const parallel = { rank: 0, worldSize: 2, localRank: 0, masterAddr: '127.0.0.1', masterPort: 1, timeoutMs: 1000 };
  await t.rejects(train({ ...config, run: { ...config.run, dir: path.join(dir, 'remote') }, sampler: { kind: 'remote', launch: 1 } }, { parallel }), { code: 'ERR_SWERL_INVALID_ARG', message: /config\.sampler\.kind is "remote" and this run is data parallel/ });
  await t.rejects(train({ ...config, run: { ...config.run, dir: path.join(dir, 'async') }, rollout: { ...config.rollout, mode: 'async' } }, { parallel }), { message: /config\.rollout\.mode is "async" .* and this run is data parallel/ });
  t.same(readdirSync(dir), [], 'no run directory was made');
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
