/**
 * Generated tasks in the real local sandbox (bwrap), through the same validator as
 * `swerl tasks validate`: for each language x bug kind, and two-bug tasks of each language,
 * the gold patch scores 1, the untouched repository 0, and the visible tests pass at the base
 * state (an agent that runs them sees no failure it did not cause). About 20 s on 2 cores.
 */
import path from 'node:path';

import t from 'tap';

import { readFileSync } from 'node:fs';

import { gradePatch } from '../../../../lib/env/reward/grade.js';
import { parseTestLog } from '../../../../lib/env/reward/test-log.js';
import { LocalSandboxBackend } from '../../../../lib/env/sandbox/local.js';
import { loadTasks } from '../../../../lib/env/tasks/load.js';
import { BUG_KINDS } from '../../../../lib/env/swe-gen/bugs.js';
import { unifiedDiff } from '../../../../lib/env/swe-gen/diff.js';
import { generateSweGenTask } from '../../../../lib/env/swe-gen/generate.js';
import { writeSweGenSuite } from '../../../../lib/env/swe-gen/suite.js';
import type { Task } from '../../../../lib/env/task.js';
import { validateTasks } from '../../../../lib/env/validate.js';
import { hardCoded, issueChecks } from '../../../support/swe-gen-patches.js';

const root = t.testdir({ sandboxes: {}, suite: {} });
const backend = new LocalSandboxBackend({ root: path.join(root, 'sandboxes') });
const suite = path.join(root, 'suite');

/** The first train seed of each language x kind, and the first held-out two-bug seed of each language. */
function pickSeeds(): { split: 'train' | 'heldout'; seed: number; bugs: 1 | 2 }[] {
  const picked = new Map<string, { split: 'train' | 'heldout'; seed: number; bugs: 1 | 2 }>();
  for (let seed = 0; picked.size < 2 * BUG_KINDS.length; seed++) {
    const { language, kind } = generateSweGenTask('train', seed).metadata;
    if (!picked.has(`${language} ${kind}`)) picked.set(`${language} ${kind}`, { split: 'train', seed, bugs: 1 });
  }
  for (let seed = 0; picked.size < 2 * BUG_KINDS.length + 2; seed++) {
    const { language } = generateSweGenTask('heldout', seed, { bugs: 2 }).metadata;
    if (!picked.has(`${language} two`)) picked.set(`${language} two`, { split: 'heldout', seed, bugs: 2 });
  }
  return [...picked.values()];
}

async function visibleTestsAtBase(task: Task): Promise<{ exitCode: number; notPassing: string[]; ran: number }> {
  const sandbox = await backend.create({ repoDir: task.repoDir!, workdir: task.workdir });
  try {
    const result = await sandbox.exec(task.testCommand, { timeoutMs: 60_000 });
    const statuses = parseTestLog(task.logFormat, result.output);
    return { exitCode: result.exitCode, notPassing: [...statuses].filter(([, s]) => s !== 'PASSED').map(([id]) => id), ran: statuses.size };
  } finally {
    await sandbox.destroy();
  }
}

t.test('gold scores 1, the untouched repository 0, and the visible tests pass at the base state', async (t) => {
  const started = performance.now();
  for (const { split, seed, bugs } of pickSeeds()) await writeSweGenSuite(suite, { split, firstSeed: seed, count: 1, bugs, force: true });
  const { tasks } = await loadTasks(suite);
  const covered = new Set(tasks.flatMap((task) => (task.metadata.sweGen as { bugs: { kind: string }[] }).bugs.map((b) => `${task.metadata.language} ${b.kind}`)));
  t.equal(covered.size, 2 * BUG_KINDS.length, `${tasks.length} tasks cover every language x bug kind`);

  const results = await validateTasks(tasks, backend, { runs: 1, concurrency: 2 });
  for (const r of results) {
    t.ok(r.ok, `${r.id}: gold ${r.gold.map((g) => g.reward)} base ${r.base.map((b) => b.reward)}${r.problem ? `: ${r.problem}` : ''}`);
  }
  const visible: Awaited<ReturnType<typeof visibleTestsAtBase>>[] = [];
  for (let i = 0; i < tasks.length; i += 2) visible.push(...(await Promise.all(tasks.slice(i, i + 2).map(visibleTestsAtBase))));
  tasks.forEach((task, i) => {
    const v = visible[i]!;
    const passToPass = task.resolution.rule === 'swe-bench' ? task.resolution.passToPass : [];
    t.ok(v.exitCode === 0 && v.notPassing.length === 0 && v.ran === passToPass.length, `${task.id}: ${v.ran} visible test(s) ran and passed (exit ${v.exitCode}${v.notPassing.length ? `; not passing: ${v.notPassing.join(', ')}` : ''})`);
  });
  t.comment(`${tasks.length} tasks validated in ${((performance.now() - started) / 1000).toFixed(1)} s`);
});

t.test('a patch that special-cases the issue\'s calls scores 0 on every bug kind and language; special-casing every hidden call scores 1', async (t) => {
  for (const { split, seed, bugs } of pickSeeds()) await writeSweGenSuite(suite, { split, firstSeed: seed, count: 1, bugs, force: true });
  const { tasks } = await loadTasks(suite);
  const covered = new Set<string>();
  for (let i = 0; i < tasks.length; i += 2) {
    await Promise.all(tasks.slice(i, i + 2).map(async (task) => {
      const meta = task.metadata.sweGen as { file: string; language: string; bugs: { kind: string }[] };
      const source = readFileSync(path.join(task.repoDir!, meta.file), 'utf8');
      const perBug = issueChecks(task);
      // the issue shows each bug's first two failing calls (its example and "Same with ...")
      for (const checks of perBug) t.ok(checks.length >= 4, `${task.id}: ${checks.length} failing calls in the issue test`);
      const shown = perBug.flatMap((checks) => checks.slice(0, 2));
      for (const c of shown) t.ok(task.problemStatement.includes(`${c.fn}(${c.args})`), `${task.id}: the issue shows ${c.fn}(${c.args})`);
      const grade = (text: string) => gradePatch(backend, task, unifiedDiff(meta.file, source, text), { timeoutMs: 60_000 });
      const cheat = await grade(hardCoded(source, meta.language, shown));
      t.equal(cheat.reward, 0, `${task.id} (${meta.bugs.map((b) => b.kind).join(', ')}): the issue's calls special-cased score 0 (${cheat.reason})`);
      const all = await grade(hardCoded(source, meta.language, perBug.flat()));
      t.equal(all.reward, 1, `${task.id}: every hidden failing call special-cased scores 1, so the 0 above is the unseen calls' (${all.reason})`);
      for (const b of meta.bugs) covered.add(`${meta.language} ${b.kind}`);
    }));
  }
  t.equal(covered.size, 2 * BUG_KINDS.length, 'every language x bug kind');
});
