// swerl_policy_bench --profile (native/tools/policy_bench.cc, native/src/core/profile.h) on the
// CPU with a tiny model: every phase a GPU run reports exists here, entered as often as the model
// says, and the phases account for the whole step. Times are not asserted (load moves them);
// what is asserted is the attribution's structure.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import t from 'tap';

import { packageRoot } from '../../lib/native.js';

interface Phase { phase: string; msPerStep: number; hostMsPerStep: number; share: number; entriesPerStep: number }
interface Report {
  device: string;
  params: number;
  train: { sequences: number; length: number; seconds: number; tokensPerSecond: number; phases: Phase[] }[];
  generation: { batch: number; newTokens: number; seconds: number; tokensPerSecond: number; decodePhases: Phase[] }[];
}

const binary = join(packageRoot(), 'build', 'swerl_policy_bench');
const LAYERS = 2; // the tool's tiny model

const entries = (phases: Phase[]) => Object.fromEntries(phases.map((p) => [p.phase, p.entriesPerStep]));

t.test('swerl_policy_bench --profile on the CPU', async (t) => {
  t.ok(existsSync(binary), `${binary} is built with the addon`);
  const dir = mkdtempSync(join(tmpdir(), 'swerl-policy-bench-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const out = join(dir, 'profile.json');
  const run = spawnSync(binary, ['--device', 'cpu', '--model', 'tiny', '--train', '2x48', '--batches', '1,3', '--prompt', '12', '--new', '6', '--repeats', '1', '--profile', '--out', out], { encoding: 'utf8', timeout: 120_000 });
  t.equal(run.status, 0, `exit status (stderr: ${run.stderr.trim()})`);
  t.match(run.stdout, /decode step, batch 3: [\d.]+ ms a step under the profiler, [\d.]+% in named phases/, 'prints each profile with its named share');
  const report = JSON.parse(readFileSync(out, 'utf8')) as Report;
  t.equal(report.device, 'cpu');
  t.equal(report.train.length, 1);
  t.same(report.generation.map((g) => g.batch), [1, 3]);

  for (const phases of [...report.train.map((r) => r.phases), ...report.generation.map((g) => g.decodePhases)]) {
    const shares = phases.reduce((sum, p) => sum + p.share, 0);
    t.ok(Math.abs(shares - 1) < 1e-6, `the phases add up to the whole step (${shares})`);
    t.ok(phases.every((p) => p.msPerStep >= 0 && p.hostMsPerStep >= 0), 'no negative interval');
    t.equal(phases[0]!.phase, 'other', 'time outside every phase is reported first, as "other"');
  }

  // norm: each layer's input and post-attention norms and the final one; the q/k norms are in
  // rotary's entries (model/norm.h: one step with the rotary, one kernel on CUDA).
  const train = entries(report.train[0]!.phases);
  t.match(train, {
    embedding: 1, 'attention.proj': 2 * LAYERS, attention: LAYERS, mlp: LAYERS, norm: 2 * LAYERS + 1, rotary: 2 * LAYERS + 1,
    loss: 1, backward: 1, 'backward.mlp': LAYERS, 'backward.attention': LAYERS, 'loss.backward': 1,
    'grad.norm': 1, optimizer: 1, 'weights.copy': 1,
  }, 'a packed train step of 2 sequences in one micro-batch enters each phase as the model says');

  for (const g of report.generation) {
    const decode = entries(g.decodePhases);
    t.match(decode, {
      embedding: 1, 'attention.mask': 1, 'kv-cache': LAYERS, attention: LAYERS, mlp: LAYERS, norm: 2 * LAYERS + 1,
      'lm-head': 1, sampler: 1, 'host-copy': 3, rotary: 2 * LAYERS + 1,
    }, `batch ${g.batch}: one decode step's phases (host copies: positions, sampling parameters, results)`);
    t.notOk('optimizer' in decode || 'backward' in decode, 'no training phase in a decode step');
    t.ok(g.tokensPerSecond > 0 && g.newTokens === 6, 'generation measured');
  }
});

t.test('swerl_policy_bench --ragged: every step new lengths around the shape, the mean reported', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'swerl-policy-bench-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const out = join(dir, 'ragged.json');
  const run = spawnSync(binary, ['--device', 'cpu', '--model', 'tiny', '--train', '6x40', '--ragged', '--batches', '1', '--prompt', '4', '--new', '2', '--repeats', '2', '--out', out], { encoding: 'utf8', timeout: 120_000 });
  t.equal(run.status, 0, `exit status (stderr: ${run.stderr.trim()})`);
  const report = JSON.parse(readFileSync(out, 'utf8')) as Report & { train: { ragged: boolean }[] };
  const row = report.train[0]!;
  t.equal(row.ragged, true);
  // 4 batches of 6 lengths in [20, 60]: their mean total lies in [120, 360], and equal to 240
  // only by chance (the fixed seed's draw is not the shape).
  const tokens = row.tokensPerSecond * row.seconds;
  t.ok(tokens >= 120 && tokens <= 360 && Math.abs(tokens - 240) > 1e-6, `mean tokens a step ${tokens} around 6 x 40, not exactly it`);
});

t.test('swerl_policy_bench refuses what it cannot run', async (t) => {
  const run = spawnSync(binary, ['--device', 'cpu', '--model', 'qwen9'], { encoding: 'utf8' });
  t.equal(run.status, 1);
  t.match(run.stderr, /--model must be qwen3-0\.6b or tiny, not 'qwen9'/);
  const usage = spawnSync(binary, ['--frobnicate'], { encoding: 'utf8' });
  t.equal(usage.status, 2);
  t.match(usage.stderr, /usage: swerl_policy_bench/);
});
