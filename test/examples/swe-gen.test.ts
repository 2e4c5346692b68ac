/**
 * examples/swe-gen.yaml as shipped, its first step (8 of its 200 train tasks x 4 samples at
 * T = 1): from models/swe-agent, GRPO++ on generated tasks has groups of mixed rewards and takes
 * an optimizer step (from a preset or the reader alone every group is all zeros: no step). The
 * step is the example's own, not a smaller one: at T = 1 the agent resolves ~20-30% of samples
 * and most groups are all zeros (16 tasks x 4: 5 mixed, 10 all zeros), so 4 tasks could all be
 * unmixed by the draw (with 4 tasks this agent drew 4 groups of all zeros).
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import { ROOT, runSwerl } from '../support/child-process.js';

t.test('examples/swe-gen.yaml: from the shipped agent, the first step has mixed groups and an optimizer step', async (t) => {
  const dir = t.testdir();
  const sandboxes = path.join(dir, 'sandboxes');
  const run = await runSwerl(
    ['train', path.join(ROOT, 'examples/swe-gen.yaml'), 'run.steps=1', 'run.plots=false', 'eval.every=0', 'tasks.generate.heldout=0', '--dir', path.join(dir, 'run')],
    { SWERL_SANDBOX_ROOT: sandboxes },
  );
  t.equal(run.code, 0, run.stderr.slice(-3000));
  const [metrics] = readFileSync(path.join(dir, 'run', 'metrics.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
  t.ok(metrics.groups.solvePartial >= 1, `groups of mixed rewards (all/none/partial ${metrics.groups.solveAll}/${metrics.groups.solveNone}/${metrics.groups.solvePartial})`);
  t.ok(metrics.loss.optimizerSteps >= 1, `an optimizer step (${metrics.loss.optimizerSteps})`);
  t.notMatch(run.stderr, /no optimizer step was taken/, 'and no warning that none was');
  t.same(readdirSync(sandboxes).filter((name) => !name.startsWith('.')), [], 'no sandbox is left');
});
