/** The console view of a run, as a log file gets it: a line per step with elapsed time, ETA and rates. */
import t from 'tap';

import type { RolloutProgress } from '../../../lib/agent/rollout.js';
import { consoleReporter, RunClock } from '../../../lib/train/progress.js';

function captureStderr(run: () => void): string {
  let text = '';
  const write = process.stderr.write;
  process.stderr.write = ((chunk: string | Uint8Array) => ((text += chunk.toString()), true)) as typeof process.stderr.write;
  try {
    run();
  } finally {
    process.stderr.write = write;
  }
  return text;
}

const progress = (done: number): RolloutProgress => ({ done, total: 8, running: 8 - done, rewardSum: done * 0.5, solved: done, retries: 0, sampledTokens: done * 100 });

t.test("lines mode: a line per step with the step's rates, elapsed time and the run's ETA; warnings and the stop", async (t) => {
  const report = consoleReporter('lines', 4);
  const metrics = (step: number) => ({
    step,
    reward: { mean: 0.25 },
    groups: { solveAll: 0, solveNone: 1, solvePartial: 1 },
    loss: { entropy: 1.5, gradNorm: 0.75 },
    turns: { mean: 2 },
    time: { stepSeconds: 2, episodesPerSecond: 4, sampledTokensPerSecond: 400 },
  });
  const text = captureStderr(() => {
    report({ type: 'start', step: 1, steps: 4, resumed: true, dir: '/runs/a' });
    report({ type: 'rollouts', step: 2, progress: progress(4) });
    report({ type: 'step', step: 2, metrics: metrics(2) });
    report({ type: 'warning', step: 2, message: 'no token reached the loss' });
    report({ type: 'stopped', step: 2, reason: 'stop requested' });
  });
  t.match(text, /^swerl: resuming at step 2 for 4 steps in \/runs\/a\n/);
  t.match(text, /^step 2\/4  reward 0\.250  solved all\/none\/partial 0\/1\/1  entropy 1\.500  gradNorm 0\.750  turns 2\.0  2\.0s  4\.00 ep\/s  400 tok\/s  elapsed \d+s  ETA \d+s$/m);
  t.match(text, /^swerl: warning at step 2: no token reached the loss$/m);
  t.match(text, /^swerl: stopped after step 2: stop requested$/m);
  t.notMatch(text, /\r|\x1b/, 'no carriage return or escape code in a log');
  t.notMatch(text, /episodes/, 'a rollout line only after 30 s of a step');
});

t.test('none: nothing at all', async (t) => {
  const report = consoleReporter('none', 4);
  t.equal(captureStderr(() => report({ type: 'start', step: 0, steps: 4, resumed: false, dir: '/runs/a' })), '');
});

t.test("a step's rollout rates count from when the step could start, not from its first report", async (t) => {
  const clock = new RunClock(4);
  clock.begin(0);
  // The first report of a step comes once an episode is done, here 50 ms or more on.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const first = clock.stepSeconds();
  t.ok(first >= 0.045, `the first step's time counts from the run's start (${first.toFixed(3)} s)`);
  clock.finished(1);
  t.ok(clock.stepSeconds() < first, 'the next step counts from the end of the last');
});
