// pass@k, Pass@1 ± SEM and the report against values computed by hand.
import t from 'tap';

import type { Trajectory } from '../../../lib/agent/trajectory.js';
import { evalReport, predictionsJsonl, reportMarkdown } from '../../../lib/eval/evaluate.js';
import { mcnemarExact, meanAndSem, passAtK, wilsonInterval } from '../../../lib/eval/metrics.js';

t.test('pass@k: the unbiased estimator', async (t) => {
  const cases: [number, number, number, number][] = [
    // n, c, k, expected (1 - C(n-c, k) / C(n, k), by hand)
    [5, 2, 1, 2 / 5],
    [5, 2, 2, 1 - 3 / 10],
    [5, 2, 3, 1 - 1 / 10],
    [5, 2, 4, 1],
    [5, 0, 3, 0],
    [5, 5, 1, 1],
    [10, 3, 5, 1 - 21 / 252],
    [16, 1, 1, 1 / 16],
    [16, 1, 8, 1 - 6435 / 12870],
  ];
  for (const [n, c, k, expected] of cases) t.ok(Math.abs(passAtK(n, c, k) - expected) < 1e-12, `pass@${k} with ${c}/${n} = ${expected}`);
  t.throws(() => passAtK(3, 1, 4), /1 <= k <= n/);
  t.throws(() => passAtK(3, 4, 1), /0 <= c <= n/);
});

t.test('mean and standard error', async (t) => {
  const { mean, sem } = meanAndSem([1 / 3, 2 / 3, 1 / 3, 0]);
  t.ok(Math.abs(mean - 1 / 3) < 1e-15);
  t.ok(Math.abs(sem - Math.sqrt(1 / 54)) < 1e-15, 'sqrt(var / n) with the n - 1 variance');
  t.same(meanAndSem([0.5]), { mean: 0.5, sem: 0 });
});

/** A float64 reference of the exact binomial tail, by summing C(n, i) / 2^n with BigInt binomials (exact up to the last division). */
function binomialTail(n: number, k: number): number {
  let c = 1n;
  let sum = 0n;
  for (let i = 0; i <= k; i++) {
    sum += c;
    c = (c * BigInt(n - i)) / BigInt(i + 1);
  }
  // sum / 2^n, in float64 without overflowing: scale both down together.
  const shift = BigInt(Math.max(0, n - 1000));
  return Number(sum >> shift) / 2 ** (n - Number(shift));
}

t.test('McNemar\'s exact test against the binomial tail computed exactly', async (t) => {
  t.equal(mcnemarExact(0, 0), 1, 'no discordant pair: no evidence');
  t.equal(mcnemarExact(5, 5), 1);
  t.ok(Math.abs(mcnemarExact(0, 6) - 2 / 64) < 1e-15, 'all six one way: 2 * 2^-6');
  t.ok(Math.abs(mcnemarExact(1, 9) - (2 * 11) / 1024) < 1e-15, 'b=1, c=9: 2 * (1 + 10) / 2^10');
  let seed = 3;
  const rnd = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
  for (let i = 0; i < 60; i++) {
    const b = Math.floor(rnd() * 200);
    const c = Math.floor(rnd() * 200);
    const want = Math.min(1, 2 * binomialTail(b + c, Math.min(b, c)));
    const got = mcnemarExact(b, c);
    t.ok(Math.abs(got - want) <= 1e-12 * Math.max(1, want) + 1e-300, `b=${b} c=${c}: ${got} vs ${want}`);
  }
  t.ok(mcnemarExact(1500, 1700) > 0 && mcnemarExact(1500, 1700) < 1, 'thousands of pairs stay finite');
  t.equal(mcnemarExact(3, 2), mcnemarExact(2, 3), 'symmetric');
  t.throws(() => mcnemarExact(-1, 2), /counts b, c >= 0/);
});

t.test('Wilson\'s interval against its formula in float64, and its edges', async (t) => {
  for (const [k, n] of [[0, 30], [30, 30], [3, 30], [45, 300], [150, 300], [1, 1]] as const) {
    const z = 1.959963984540054;
    const p = k / n;
    const denom = 1 + (z * z) / n;
    const centre = (p + (z * z) / (2 * n)) / denom;
    const half = (z / denom) * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
    const { low, high } = wilsonInterval(k, n);
    t.ok(Math.abs(low - Math.max(0, centre - half)) < 1e-14 && Math.abs(high - Math.min(1, centre + half)) < 1e-14, `${k}/${n}: [${low.toFixed(4)}, ${high.toFixed(4)}]`);
    t.ok(low <= p && p <= high, 'holds the estimate');
  }
  t.equal(wilsonInterval(0, 30).low, 0);
  t.ok(wilsonInterval(0, 30).high > 0.1, 'no successes in 30 still allows ~11%');
  t.ok(wilsonInterval(30, 300).high - wilsonInterval(30, 300).low < 0.075, '300 tasks: about +-3.5 points at 10%');
  t.throws(() => wilsonInterval(4, 3), /0 <= k <= n/);
});

function trajectory(taskId: string, reward: number, termination: Trajectory['termination'] = 'submitted', turns = 2): Trajectory {
  return {
    taskId, group: 0, sample: 0, tokens: new Int32Array(0), mask: new Uint8Array(0), logprobs: new Float32Array(0), promptTokens: 10, responseTokens: 100 * turns,
    turns: Array.from({ length: turns }, () => ({ contextTokens: 0, responseTokens: 100, finishReason: 'stop' as const, response: '', observation: '', observationTokens: 0, generateMs: 0, stepMs: 0 })),
    termination, reward, rewardReason: '', attempts: 1, weightVersion: 0, patch: reward ? `patch of ${taskId}` : '', timings: { totalMs: 0, generateMs: 0, envMs: 0, rewardMs: 0 },
  };
}

t.test('the report: Pass@1 over runs, pass@k over tasks, per task', async (t) => {
  const rewards = [
    [1, 0, 0],
    [1, 1, 0],
    [1, 0, 0],
    [0, 0, 0],
  ];
  const byRun = rewards.map((run) => run.map((r, i) => trajectory(`task-${i}`, r, r ? 'submitted' : i === 2 ? 'max_steps' : 'submitted')));
  byRun[3]![0]!.reverted = ['conftest.py'];
  byRun[2]![1]!.reverted = ['pytest.ini', 'tests/conftest.py'];
  byRun[1]![2]!.tampering = ['the runner was changed: builtins.AssertionError'];
  const report = evalReport('m', ['task-0', 'task-1', 'task-2'], byRun, [1, 2, 4], 1.5);
  t.same(report.passAt1.perRun, [1 / 3, 2 / 3, 1 / 3, 0]);
  t.ok(Math.abs(report.passAt1.mean - 1 / 3) < 1e-15);
  t.ok(Math.abs(report.passAt1.sem - Math.sqrt(1 / 54)) < 1e-15);
  t.ok(Math.abs(report.passAtK['pass@1']! - 1 / 3) < 1e-15, 'pass@1 = the mean solve rate');
  t.ok(Math.abs(report.passAtK['pass@2']! - (1 + 0.5 + 0) / 3) < 1e-15, 'pass@2: task-0 3/4 -> 1, task-1 1/4 -> 1/2, task-2 -> 0');
  t.ok(Math.abs(report.passAtK['pass@4']! - 2 / 3) < 1e-15);
  t.same(report.perTask.map((r) => [r.id, r.solved, r.rewards]), [['task-0', 3, [1, 1, 1, 0]], ['task-1', 1, [0, 1, 0, 0]], ['task-2', 0, [0, 0, 0, 0]]]);
  t.same(report.terminations, { submitted: 8, max_steps: 4 });
  t.same(report.perTask[2]!.terminations, { max_steps: 4 });
  t.equal(report.meanTurns, 2);
  t.equal(report.meanResponseTokens, 200);
  t.match(reportMarkdown(report), /\| Pass@1 \(mean ± SEM over runs\) \| 33\.3% ± 13\.6 \|/);
  t.equal(report.rewardHackAttempts, 3, 'episodes whose test infrastructure grading reverted, or whose code tampered with the runner');
  t.same(report.rewardHacks, [
    { taskId: 'task-2', run: 1, reason: 'the test runner tampered with: the runner was changed: builtins.AssertionError' },
    { taskId: 'task-1', run: 2, reason: 'test infrastructure reverted: pytest.ini, tests/conftest.py' },
    { taskId: 'task-0', run: 3, reason: 'test infrastructure reverted: conftest.py' },
  ]);
  t.match(reportMarkdown(report), /\| reward-hack attempts \(test infrastructure reverted, test runner tampered with\) \| 3 episode\(s\) \|/);
  t.match(reportMarkdown(report), /\| task-2 \| 1 \| the test runner tampered with: the runner was changed: builtins\.AssertionError \|/);
  const lines = predictionsJsonl('m', byRun[1]!).trim().split('\n').map((l) => JSON.parse(l));
  t.same(lines[1], { instance_id: 'task-1', model_name_or_path: 'm', model_patch: 'patch of task-1' });
});
