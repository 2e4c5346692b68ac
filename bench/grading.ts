/**
 * npm run bench:grading — what grading a generated task costs, Python under grading's own runner
 * for plain pytest files (lib/env/reward/plain-pytest.ts) and under pytest, and JavaScript (node's
 * test runner) beside them: gradePatch on the local backend, one at a time, gold and empty
 * patches. Wall time a grade (median) and machine-wide CPU a grade (so run it idle), blocks of
 * each way alternating. Prints a table and writes bench/results/grading.json.
 *
 *   node dist/bench/grading.js [--quick] [--tasks N] [--blocks N] [--out FILE]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { packageRoot } from '../lib/native.js';
import { gradePatch } from '../lib/env/reward/grade.js';
import { LocalSandboxBackend } from '../lib/env/sandbox/local.js';
import { writeSweGenSuite } from '../lib/env/swe-gen/suite.js';
import { loadTasks } from '../lib/env/tasks/load.js';
import type { Task } from '../lib/env/task.js';
import { writeJsonAtomic } from '../lib/util/atomic.js';
import { count, flag } from './args.js';
import { machineCounters, median } from './stats.js';

const quick = process.argv.includes('--quick');
const TASKS = count('--tasks', quick ? 4 : 12);
const BLOCKS = count('--blocks', quick ? 2 : 4);
const out = flag('--out') ?? path.join(packageRoot(), 'bench', 'results', quick ? 'grading-quick.json' : 'grading.json');

interface Way {
  name: string;
  language: 'python' | 'javascript';
  plainRunner: boolean;
}

const WAYS: Way[] = [
  { name: 'python, plain-pytest runner', language: 'python', plainRunner: true },
  { name: 'python, pytest', language: 'python', plainRunner: false },
  { name: 'javascript, node --test-reporter=tap', language: 'javascript', plainRunner: true },
];

interface Row {
  way: string;
  patch: 'gold' | 'empty';
  grades: number;
  medianMs: number;
  cpuMsPerGrade: number | null;
  resolved: number;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'swerl-bench-grading-'));
  try {
    const backend = new LocalSandboxBackend({ root: path.join(dir, 'sandboxes') });
    const tasks: Record<Way['language'], Task[]> = { python: [], javascript: [] };
    for (const language of ['python', 'javascript'] as const) {
      await writeSweGenSuite(path.join(dir, language), { split: 'train', firstSeed: 0, count: TASKS, languages: [language] });
      tasks[language] = (await loadTasks(path.join(dir, language))).tasks;
    }
    const samples = new Map<string, { times: number[]; cpu: number; grades: number; resolved: number }>();
    const grade = async (way: Way, patch: 'gold' | 'empty') => {
      const key = `${way.name}|${patch}`;
      const sample = samples.get(key) ?? { times: [], cpu: 0, grades: 0, resolved: 0 };
      samples.set(key, sample);
      const before = machineCounters();
      for (const task of tasks[way.language]) {
        const t0 = performance.now();
        const result = await gradePatch(backend, task, patch === 'gold' ? task.goldPatch! : '', { timeoutMs: 60_000, plainRunner: way.plainRunner });
        sample.times.push(performance.now() - t0);
        sample.grades++;
        sample.resolved += result.reward;
      }
      const after = machineCounters();
      sample.cpu = before && after ? sample.cpu + (after.cpuSeconds - before.cpuSeconds) * 1000 : NaN;
    };
    await grade(WAYS[0]!, 'gold'); // warm-up: the page cache, the first sandbox
    samples.clear();
    for (let block = 0; block < BLOCKS; block++) {
      for (const way of WAYS) for (const patch of ['gold', 'empty'] as const) await grade(way, patch);
    }
    const rows: Row[] = [...samples].map(([key, s]) => {
      const [way, patch] = key.split('|') as [string, 'gold' | 'empty'];
      return { way, patch, grades: s.grades, medianMs: median(s.times), cpuMsPerGrade: Number.isFinite(s.cpu) ? s.cpu / s.grades : null, resolved: s.resolved };
    });
    console.log(`grading one generated task, local backend, one at a time (${TASKS} tasks a language x ${BLOCKS} blocks a way)`);
    console.log('| way | patch | grades | median ms | CPU ms a grade | resolved |');
    console.log('|---|---|---|---|---|---|');
    for (const r of rows) console.log(`| ${r.way} | ${r.patch} | ${r.grades} | ${r.medianMs.toFixed(1)} | ${r.cpuMsPerGrade?.toFixed(1) ?? 'n/a'} | ${r.resolved} |`);
    writeJsonAtomic(out, { date: new Date().toISOString(), machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model ?? 'unknown' }, tasks: TASKS, blocks: BLOCKS, rows });
    console.log(`wrote ${out}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
