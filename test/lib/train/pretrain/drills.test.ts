/**
 * Reading drills read exactly like episodes: the same task's view, view_range, str_replace and
 * echo observations from the real SweEnv in the local sandbox equal the drill's, byte for byte;
 * drills are a pure function of seed and index, from train-split programs only, and never
 * teach the task's fix.
 */
import path from 'node:path';

import t from 'tap';

import { LocalSandboxBackend } from '../../../../lib/env/sandbox/local.js';
import { SweEnv } from '../../../../lib/env/swe-env.js';
import { loadTasks } from '../../../../lib/env/tasks/load.js';
import { generateSweGenTask } from '../../../../lib/env/swe-gen/generate.js';
import { writeSweGenSuite } from '../../../../lib/env/swe-gen/suite.js';
import { DEFAULT_DRILLS, makeDrill, type DrillOptions } from '../../../../lib/train/pretrain/drills.js';

const root = t.testdir({ sandboxes: {}, tasks: {} });
const options: DrillOptions = { ...DEFAULT_DRILLS, renameFiles: 0, partialViews: 0.5, turns: { min: 4, max: 4 }, programs: { split: 'train', firstSeed: 0, count: 40, functions: { min: 1, max: 2 }, lines: { min: 4, max: 20 } } };

t.test('a drill\'s observations are the environment\'s, byte for byte', async (t) => {
  await writeSweGenSuite(path.join(root, 'tasks'), { count: 40, functions: { min: 1, max: 2 }, lines: { min: 4, max: 20 } });
  const { tasks } = await loadTasks(path.join(root, 'tasks'));
  const backend = new LocalSandboxBackend({ root: path.join(root, 'sandboxes') });
  const kinds = new Set<string>();
  for (let index = 0; index < 8; index++) {
    const drill = makeDrill(3, index, options);
    const task = tasks.find((x) => x.id === drill.taskId)!;
    const env = new SweEnv(task, backend, { prompt: 'compact', maxSteps: options.maxSteps });
    try {
      const opening = await env.reset();
      t.same(opening, drill.messages.slice(0, 2), `${task.id}: the system prompt and the issue`);
      for (let turn = 2; turn < drill.messages.length - 1; turn += 2) {
        const call = drill.messages[turn]!.content as string;
        kinds.add(`${/command>(\w+)/.exec(call)?.[1] ?? 'bash'}${turn === 2 && call.includes('view_range') ? ' (partial first view)' : ''}`);
        const step = await env.step(call, { timeoutMs: 30_000, endsEpisode: false });
        t.equal(step.observation, drill.messages[turn + 1]!.content, `${task.id} turn ${turn / 2}: ${call.split('\n')[1]}`);
      }
    } finally {
      await env.close();
    }
  }
  t.ok(['view', 'view (partial first view)', 'str_replace', 'bash'].every((k) => kinds.has(k)), `turn kinds met: ${[...kinds].join(', ')}`);
});

t.test('pure in seed and index; train-split programs only; edits are never the fix', async (t) => {
  t.same(makeDrill(9, 17, options), makeDrill(9, 17, options));
  t.not(JSON.stringify(makeDrill(9, 17, options)), JSON.stringify(makeDrill(9, 18, options)));
  for (let i = 0; i < 200; i++) {
    const drill = makeDrill(1, i, { ...DEFAULT_DRILLS, mix: { lookup: 0, edit: 1, echo: 0 } });
    t.match(drill.taskId, /^gen-(py|js)-train-\d+$/);
    const seed = Number(/(\d+)$/.exec(drill.taskId)![1]);
    const fixes = generateSweGenTask('train', seed, {}).metadata.bugs;
    for (const m of drill.messages.filter((x) => x.role === 'assistant')) {
      const newStr = /<parameter=new_str>([\s\S]*?)<\/parameter>/.exec(m.content ?? '')?.[1];
      if (newStr !== undefined && fixes.some((b) => b.after.trim() === newStr.trim())) t.fail(`drill ${i} writes the fix of ${drill.taskId}`);
    }
  }
  t.pass('200 edit drills, no fix among them');
  const renamed = Array.from({ length: 100 }, (_, i) => makeDrill(2, i, DEFAULT_DRILLS));
  const madeUp = renamed.filter((d) => !/^(calc|stats|tools|util|helpers|scores|series|figures|metrics|numtools|basics|ops|lists)\./.test(d.file));
  t.ok(madeUp.length > 30 && madeUp.length < 70, `${madeUp.length} of 100 issues name a made-up file`);
  for (const d of madeUp.slice(0, 10)) {
    t.ok((d.messages[1]!.content as string).includes(`\`${d.file}\``), 'the issue names the made-up file');
    t.ok((d.messages[2]!.content as string).includes(`/testbed/${d.file}`), 'and the view opens it');
  }
});

t.test('partialViews: the first view from a random line past the first, lookups and edits within it; 0 leaves the drills as they were', async (t) => {
  const partial = { ...DEFAULT_DRILLS, partialViews: 1, turns: { min: 4, max: 4 } };
  const firsts = new Set<number>();
  for (let i = 0; i < 60; i++) {
    const drill = makeDrill(5, i, partial);
    const calls = drill.messages.filter((m) => m.role === 'assistant').map((m) => m.content as string);
    const range = /<parameter=view_range>\[(\d+), (\d+)\]/.exec(calls[0]!);
    const view = drill.messages[3]!.content as string;
    const numbers = [...view.matchAll(/^ {0,5}(\d+) /gm)].map((m) => Number(m[1]));
    t.ok(range, `drill ${i}: the first view is a view_range`);
    const first = Number(range![1]);
    firsts.add(first);
    t.ok(first >= 2 && first <= Math.ceil(Number(range![2]) / 2), `drill ${i}: from line ${first} of ${range![2]}`);
    t.same([numbers[0], numbers.at(-1)], [first, Number(range![2])], `drill ${i}: shows lines ${first} to the end`);
    for (const [turn, message] of drill.messages.entries()) {
      if (turn < 4 || message.role !== 'assistant') continue;
      const call = message.content as string;
      const lookup = /<parameter=view_range>\[(\d+), \d+\]/.exec(call);
      if (lookup) t.ok(Number(lookup[1]) >= first, `drill ${i}: a lookup of line ${lookup[1]}, shown`);
      const oldStr = /<parameter=old_str>([\s\S]*?)<\/parameter>/.exec(call)?.[1];
      // A line of the first view, or of an earlier edit's snippet where an edit changed it.
      const shown = drill.messages.slice(3, turn).filter((m) => m.role === 'user').flatMap((m) => (m.content as string).split('\n').map((l) => l.slice(7).trim()));
      if (oldStr !== undefined) t.ok(shown.includes(oldStr), `drill ${i}: old_str quotes a line shown`);
    }
  }
  t.ok(firsts.size >= 4, `first lines vary: ${[...firsts].sort((a, b) => a - b).join(', ')}`);
  // The option at 0 draws nothing: the drills of the shipped reader's pretraining are unchanged.
  const whole = Array.from({ length: 20 }, (_, i) => makeDrill(5, i, DEFAULT_DRILLS));
  t.ok(whole.every((d) => !(d.messages[2]!.content as string).includes('view_range')), 'partialViews 0: every first view is the whole file');
  const halfway = Array.from({ length: 20 }, (_, i) => makeDrill(5, i, { ...DEFAULT_DRILLS, partialViews: 0.5 }));
  const partialFirst = halfway.filter((d) => (d.messages[2]!.content as string).includes('view_range')).length;
  t.ok(partialFirst > 3 && partialFirst < 17, `at 0.5, ${partialFirst} of 20 first views partial`);
});
