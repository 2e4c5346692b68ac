// Data parallelism on PyTorch's c10d (Gloo over loopback TCP), with real processes: two ranks
// that start from different random weights join a group, get rank 0's, train on their halves
// of each global batch (token weights of the whole batch; policy-gradient and NLL steps in
// turn) and end bit-identical to each other
// and equal, within fp32 summation-order noise, to one process training on the whole batches.
// A rank that dies makes the other's next collective fail with ERR_SWERL_DIST, promptly.
import path from 'node:path';

import t from 'tap';

import { presetConfig } from '../../../lib/model/model-config.js';
import { NativePolicy } from '../../../lib/model/native-policy.js';
import { ProcessGroupChannel } from '../../../lib/model/process-group.js';
import { native } from '../../../lib/native.js';
import { spawnTs } from '../../support/child-process.js';
import { DP_VOCAB, globalBatch, stepObjective } from '../../support/dp-batch.js';
import { checkpointWeights, freePort } from '../../support/process-group.js';

const WORKER = path.resolve(import.meta.dirname, '../../support/dp-worker.ts');
const STEPS = 3;
const SEED = Math.floor(Math.random() * 1e6);

function rank(args: object): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = performance.now();
  const child = spawnTs(WORKER, {}, [JSON.stringify(args)]);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr, ms: performance.now() - started })));
}

// CPU ranks run on Gloo. A build against PyTorch's wheels (which ship no Gloo headers) has NCCL
// alone: there the Gloo tests skip, and a Gloo group must be refused by name.
const { processGroups: gloo, nccl } = native().buildInfo();
const noGloo = gloo ? false : 'the addon has no Gloo (a build against PyTorch\'s wheels, which ship no Gloo headers)';

t.test('the addon has Gloo process groups, or (NCCL alone) refuses a Gloo group by name', async (t) => {
  if (!nccl) t.equal(gloo, true, 'a CPU build has Gloo (Debian: libgloo-dev)');
  if (gloo) return;
  const policy = await NativePolicy.load(presetConfig('qwen3-tiny', DP_VOCAB), { seed: 1 });
  t.teardown(() => policy.dispose());
  const refusal = { code: 'ERR_SWERL_DIST', message: /no Gloo process groups \(CPU ranks\).*backend "nccl".*libgloo-dev/ };
  await t.rejects(policy.joinGroup({ rank: 0, worldSize: 1, masterPort: await freePort() }), refusal, 'a CPU policy');
  await t.rejects(ProcessGroupChannel.join({ rank: 0, worldSize: 1, masterPort: await freePort() }), refusal, 'a channel');
});

t.test(`two ranks on loopback: bit-identical to each other, equal to one process on the global batch (seed ${SEED})`, { skip: noGloo }, async (t) => {
  const dir = t.testdir();
  const port = await freePort();
  const runs = await Promise.all([0, 1].map((r) => rank({ rank: r, worldSize: 2, port, out: path.join(dir, `rank${r}`), steps: STEPS, seed: SEED })));
  for (const [r, run] of runs.entries()) t.equal(run.code, 0, `rank ${r} exits 0: ${run.stderr.slice(-2000)}`);
  const first = runs.map((run) => JSON.parse(run.stdout.split('\n')[0]!));
  t.same(first.map((f) => f.sums), [[1, 2], [1, 2]], 'allReduce sums over both ranks');
  t.same(first.map((f) => f.group), [{ rank: 0, worldSize: 2 }, { rank: 1, worldSize: 2 }]);
  const steps = runs.map((run) => run.stdout.trim().split('\n').slice(1).map((l) => JSON.parse(l)));
  t.same(steps[0]!.map((s: { loss: number }) => s.loss), steps[1]!.map((s: { loss: number }) => s.loss), 'the loss is the group\'s on both ranks');

  const [a, b] = [await checkpointWeights(path.join(dir, 'rank0')), await checkpointWeights(path.join(dir, 'rank1'))];
  for (const [name, values] of a) t.ok(Buffer.from(values.buffer).equals(Buffer.from(b.get(name)!.buffer)), `${name}: bit-identical on both ranks`);

  // One process, rank 0's seed, the whole batches.
  const single = await NativePolicy.load(presetConfig('qwen3-tiny', DP_VOCAB), { seed: 100, optimizer: { lr: 1e-3 }, threads: 1 });
  const losses: number[] = [];
  for (let step = 0; step < STEPS; step++) losses.push((await single.trainStep({ sequences: globalBatch(step, SEED), loss: { objective: stepObjective(step) } })).loss);
  await single.save(path.join(dir, 'single'));
  single.dispose();
  const reference = await checkpointWeights(path.join(dir, 'single'));
  // Summation order differs (two halves all-reduced vs one batch), and Adam divides by sqrt(v):
  // where a gradient is near 0 that noise moves a coordinate's update by a visible fraction of
  // lr, so a few coordinates drift past fp32 noise (seen: 0-2 of 115,648, by up to 5.8e-5; one
  // CI run failed a 5e-5 bound on the worst alone). A wrong reduction or token weighting moves
  // whole tensors by about lr per step: that is what the two bounds below catch.
  let worst = 0;
  let past = 0;
  let total = 0;
  for (const [name, values] of reference) {
    const other = a.get(name)!;
    for (let i = 0; i < values.length; i++) {
      const gap = Math.abs(values[i]! - other[i]!) / Math.max(1, Math.abs(values[i]!));
      worst = Math.max(worst, gap);
      if (gap > 1e-5) past++;
    }
    total += values.length;
  }
  t.ok(past <= total / 10_000, `weights equal to the single process's within fp32 noise but for ${past} of ${total} coordinates (at most 1 in 10,000)`);
  t.ok(worst <= 0.5e-3, `and none apart by half a step of lr or more (worst relative gap ${worst.toExponential(2)}, lr 1e-3)`);
  steps[0]!.forEach((s: { loss: number }, i: number) => t.ok(Math.abs(s.loss - losses[i]!) <= 1e-5 * Math.max(1, Math.abs(losses[i]!)), `step ${i}: the group's loss ${s.loss} is the global batch's ${losses[i]}`));
});

t.test('a rank that dies: the other fails its next collective with ERR_SWERL_DIST and exits', { skip: noGloo }, async (t) => {
  const dir = t.testdir();
  const port = await freePort();
  const [survivor, dead] = await Promise.all([
    rank({ rank: 0, worldSize: 2, port, out: path.join(dir, 'rank0'), steps: STEPS, seed: SEED, timeoutMs: 30_000 }),
    rank({ rank: 1, worldSize: 2, port, out: path.join(dir, 'rank1'), steps: STEPS, seed: SEED, timeoutMs: 30_000, dieAfterJoin: true }),
  ]);
  t.equal(dead.code, 3, 'the dying rank exited after joining');
  t.not(survivor.code, 0, 'the survivor does not finish as if nothing happened');
  t.match(survivor.stdout + survivor.stderr, /ERR_SWERL_DIST/, `the survivor names the failure: ${survivor.stderr.slice(-500)}`);
  // It exits by itself (a hang would be the test's own timeout); how soon is the machine's.
  t.comment(`the survivor exited after ${(survivor.ms / 1000).toFixed(1)} s`);
});

t.test('bad group options are refused by name', { skip: noGloo }, async (t) => {
  const policy = await NativePolicy.load(presetConfig('qwen3-tiny', DP_VOCAB), { seed: 1 });
  t.teardown(() => policy.dispose());
  await t.rejects(policy.joinGroup({ rank: 2, worldSize: 2 }), { code: 'ERR_SWERL_INVALID_ARG', message: /options\.rank is 2 and worldSize 2/ });
  await t.rejects(policy.joinGroup({ rank: 0, worldSize: 0 }), { code: 'ERR_SWERL_INVALID_ARG', message: /worldSize/ });
  await t.rejects(policy.joinGroup({ rank: 0, worldSize: 1, masterPort: 70000 }), { code: 'ERR_SWERL_INVALID_ARG', message: /masterPort/ });
  await t.rejects(policy.joinGroup({ rank: 0, worldSize: 1, backend: 'mpi' as 'gloo' }), { code: 'ERR_SWERL_INVALID_ARG', message: /options\.backend/ });
  await t.rejects(policy.joinGroup({ rank: 0, worldSize: 1, backend: 'nccl' }), { code: 'ERR_SWERL_INVALID_ARG', message: /options\.backend is "nccl" and this policy is on the CPU/ });
  t.equal(policy.group, null, 'not in a group');
  await t.rejects(policy.allReduce([1]), { code: 'ERR_SWERL_DIST', message: /in no process group: call joinGroup first/ });
  const port = await freePort();
  await policy.joinGroup({ rank: 0, worldSize: 1, masterPort: port });
  t.same(policy.group, { rank: 0, worldSize: 1 });
  t.same(Array.from(await policy.allReduce([1.5, -2])), [1.5, -2], 'a group of one sums to itself');
  await t.rejects(policy.joinGroup({ rank: 0, worldSize: 1, masterPort: port }), { message: /already in a process group/ });
});

// A GPU machine has one device here: NCCL in a group of one (its collectives are identities, and a
// train step in the group must equal one outside it). Two CUDA ranks need two GPUs.
t.test('NCCL (CUDA): a group of one all-reduces on the device, and its train step is an ungrouped one\'s', { skip: nccl ? false : 'the addon has no NCCL (a CUDA build against PyTorch\'s libtorch)' }, async (t) => {
  const options = { seed: 7, device: 'cuda', optimizer: { lr: 1e-3 } } as const;
  const [grouped, alone] = [await NativePolicy.load(presetConfig('qwen3-tiny', DP_VOCAB), options), await NativePolicy.load(presetConfig('qwen3-tiny', DP_VOCAB), options)];
  t.teardown(() => (grouped.dispose(), alone.dispose()));
  await grouped.joinGroup({ rank: 0, worldSize: 1, masterPort: await freePort() });
  t.same(Array.from(await grouped.allReduce([2.5, -1])), [2.5, -1], 'float64 sums through the device');
  for (let step = 0; step < 2; step++) {
    const batch = { sequences: globalBatch(step, SEED), loss: { objective: stepObjective(step) } };
    const [a, b] = [await grouped.trainStep(batch), await alone.trainStep(batch)];
    t.equal(a.loss, b.loss, `step ${step}: the same loss`);
  }
  t.same(Array.from(grouped.weightsFingerprint()), Array.from(alone.weightsFingerprint()), 'the same weights, bit for bit');
});

t.test('a process group channel of its own (the async producers\' gathers): joins, sums, refuses what it cannot do, closes', { skip: noGloo }, async (t) => {
  await t.rejects(ProcessGroupChannel.join({ rank: 1, worldSize: 1 }), { code: 'ERR_SWERL_INVALID_ARG', message: /options\.rank is 1 and worldSize 1/ });
  await t.rejects(ProcessGroupChannel.join({ rank: 0, worldSize: 1, backend: 'nccl' }), { code: 'ERR_SWERL_INVALID_ARG', message: /options\.backend is "nccl"/ });
  const channel = await ProcessGroupChannel.join({ rank: 0, worldSize: 1, masterPort: await freePort() });
  t.same(Array.from(await channel.allReduce([3, -0.5])), [3, -0.5], 'a group of one sums to itself');
  channel.close();
  channel.close();
  t.throws(() => channel.allReduce([1]), { code: 'ERR_SWERL_DISPOSED' });
});
