/** `swerl tasks generate`, run in process: what it writes, what it prints, what it refuses. */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import { loadTasks } from '../../../../lib/env/tasks/load.js';
import { cliInProcess as cli } from '../../../support/cli-in-process.js';


t.test('generate writes the suite its flags ask for and prints one line', async (t) => {
  const root = t.testdir();
  const dir = path.join(root, 'heldout');
  const r = await cli('tasks', 'generate', dir, '--count', '5', '--split', 'heldout', '--languages', 'python', '--kinds', 'comparison,off-by-one', '--functions', '3', '--lines', '10-60');
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /^wrote 5 task\(s\) to .*heldout \(heldout seeds 0-4; python 5; bugs: [a-z -]+\d+[^\n]*\)\n$/);
  const { tasks } = await loadTasks(dir);
  t.same(tasks.map((task) => task.id), [0, 1, 2, 3, 4].map((seed) => `gen-py-heldout-00000${seed}`));
  for (const task of tasks) {
    const meta = task.metadata.sweGen as { kind: string; file: string };
    t.ok(['comparison', 'off-by-one'].includes(meta.kind), `${task.id}: ${meta.kind}`);
    const source = readFileSync(path.join(task.repoDir!, meta.file), 'utf8');
    t.equal((source.match(/^def /gm) ?? []).length, 3, `${task.id}: three functions`);
  }

  const ranged = path.join(root, 'ranged');
  const s = await cli('tasks', 'generate', ranged, '--seeds', '10-12', '--bugs', '2');
  t.equal(s.code, 0, s.stderr);
  const { tasks: rangedTasks } = await loadTasks(ranged);
  t.same(rangedTasks.map((task) => task.id.replace(/^gen-(py|js)-/, '')), ['train-000010', 'train-000011', 'train-000012']);
  t.ok(rangedTasks.every((task) => task.resolution.rule === 'swe-bench' && task.resolution.failToPass.length === 2), 'two bugs, two issue tests');
});

t.test('a non-empty folder needs --force; an overlapping suite is refused with --disjoint-from', async (t) => {
  const root = t.testdir();
  const dir = path.join(root, 'suite');
  t.equal((await cli('tasks', 'generate', dir, '--count', '2')).code, 0);
  const again = await cli('tasks', 'generate', dir, '--count', '2');
  t.equal(again.code, 2);
  t.match(again.stderr, /^swerl: dir ".*suite" is not empty \(2 entries\); give a new or empty folder, or force \(--force\)/);
  const forced = await cli('tasks', 'generate', dir, '--count', '3', '--force');
  t.equal(forced.code, 0, forced.stderr);
  t.equal((await loadTasks(dir)).tasks.length, 3);
  const overlapping = await cli('tasks', 'generate', path.join(root, 'other'), '--seeds', '2-4', '--disjoint-from', dir);
  t.equal(overlapping.code, 2);
  t.match(overlapping.stderr, /^swerl: disjointFrom ".*suite" overlaps the suite asked for in 1 task\(s\): gen-(py|js)-train-000002 and gen-(py|js)-train-000002 share a seed/);
  const heldout = await cli('tasks', 'generate', path.join(root, 'heldout'), '--count', '3', '--split', 'heldout', '--disjoint-from', dir);
  t.equal(heldout.code, 0, heldout.stderr);
});

t.test('bad flags get a usage error naming the flag and the fix', async (t) => {
  const dir = path.join(t.testdir(), 'never');
  const cases: [string[], RegExp][] = [
    [['--kinds', 'operator,typo'], /--kinds has "typo"; give a comma-separated list of operator, comparison, off-by-one, wrong-variable, missing-case/],
    [['--languages', 'rust'], /--languages has "rust"; give a comma-separated list of python, javascript/],
    [['--functions', '4-2'], /--functions is "4-2"; give N or A-B, whole numbers >= 1 with A <= B/],
    [['--functions', '1', '--bugs', '2'], /functions\.min is 1 but bugs is 2: each bug needs a function of its own; give functions\.min >= 2/],
    [['--bugs', '3'], /--bugs is "3"; give 1 or 2/],
    [['--split', 'test'], /argument 'test' is invalid\. Allowed choices are train, heldout/],
    [['--count', '3', '--seeds', '1-2'], /--count and --seeds both given/],
    [['--lines', '1-4'], /allow no (python|javascript) task .* 1-4 lines\); allow more lines/],
  ];
  for (const [flags, message] of cases) {
    const r = await cli('tasks', 'generate', dir, ...flags);
    t.equal(r.code, 2, flags.join(' '));
    t.match(r.stderr, message, flags.join(' '));
  }
  t.match((await cli('tasks', 'generate', '--help')).stdout, /Usage: swerl tasks generate \[options\] <out-dir>[\s\S]*--seeds <a-b>[\s\S]*--disjoint-from <suite>/);
});

t.test('swerl tasks validate passes on what generate wrote', async (t) => {
  const dir = path.join(t.testdir(), 'suite');
  t.equal((await cli('tasks', 'generate', dir, '--count', '2')).code, 0);
  const r = await cli('tasks', 'validate', dir, '--runs', '1');
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /^2 valid, 0 invalid$/m);
});
