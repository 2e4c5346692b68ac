/**
 * npm run validate:real — every vendored real SWE-bench row validated as `swerl tasks validate
 * --repos` validates it: the gold patch must score 1, the untouched repository 0, and every
 * PASS_TO_PASS test pass at the base, with each repository's own test command and log parser.
 * The rows: test/fixtures/swe-real (marshmallow) and test/fixtures/swe-breadth (sympy, astroid,
 * pydicom, requests; SOURCES.md beside them says where each row comes from and which rows were
 * tried and cannot run here, and why). On the local backend, and on the docker backend too where
 * a Docker API answers at DOCKER_HOST (`podman system service` gives one).
 *
 * Prints a table (row, repository, backend, gold, base, seconds) and writes
 * bench/results/validate-real.json and validate-real.md.
 *
 *   node dist/bench/validate-real.js [--concurrency N] [--only ID,...] [--out FILE.json]
 */
import path from 'node:path';

import { createSandboxBackend } from '../lib/env/sandbox/backends.js';
import { loadTasks } from '../lib/env/tasks/load.js';
import { validateTasks } from '../lib/env/validate.js';
import { packageRoot } from '../lib/native.js';
import { writeFileAtomic, writeJsonAtomic } from '../lib/util/atomic.js';
import { count, flag } from './args.js';

const FIXTURES = ['test/fixtures/swe-real', 'test/fixtures/swe-breadth'];
const concurrency = count('--concurrency', 2);
const only = flag('--only')?.split(',');
const out = flag('--out') ?? path.join(packageRoot(), 'bench', 'results', 'validate-real.json');
const backends = ['local', ...(process.env.DOCKER_HOST ? ['docker'] : [])];

interface Row {
  id: string;
  repository: string;
  backend: string;
  gold: number;
  base: number;
  brokenPassToPass: number;
  seconds: number;
  ok: boolean;
  problem?: string;
}

const rows: Row[] = [];
const started = performance.now();
for (const backendName of backends) {
  const backend = await createSandboxBackend(backendName, { label: `swerl-validate-real-${process.pid}` });
  for (const fixture of FIXTURES) {
    const dir = path.join(packageRoot(), fixture);
    const { tasks: all, problems } = await loadTasks(path.join(dir, 'rows.jsonl'), { onError: 'skip', repos: path.join(dir, 'repos') });
    for (const p of problems) console.error(`${fixture}: could not load line ${p.line}: ${p.message}`);
    const tasks = only ? all.filter((t) => only.includes(t.id)) : all;
    const results = await validateTasks(tasks, backend, { runs: 1, concurrency });
    for (const [i, r] of results.entries()) {
      const row: Row = {
        id: r.id,
        repository: String(tasks[i]!.metadata.repo ?? ''),
        backend: backendName,
        gold: r.gold[0]?.reward ?? 0,
        base: r.base[0]?.reward ?? 0,
        brokenPassToPass: r.base[0]?.brokenPassToPass.length ?? 0,
        seconds: (r.gold.concat(r.base).reduce((s, run) => s + run.durationMs, 0)) / 1000,
        ok: r.ok,
        ...(r.problem ? { problem: r.problem } : {}),
      };
      rows.push(row);
      console.log(`${row.ok ? 'ok  ' : 'FAIL'} ${backendName.padEnd(6)} ${row.id.padEnd(40)} gold ${row.gold} base ${row.base} ${row.seconds.toFixed(1)} s${row.problem ? `  ${row.problem.slice(0, 160)}` : ''}`);
    }
  }
}

const repositories = [...new Set(rows.map((r) => r.repository))];
const table = [
  '| row | repository | backend | gold | base | PASS_TO_PASS broken at base | seconds | result |',
  '|---|---|---|---|---|---|---|---|',
  ...rows.map((r) => `| ${r.id} | ${r.repository} | ${r.backend} | ${r.gold} | ${r.base} | ${r.brokenPassToPass} | ${r.seconds.toFixed(1)} | ${r.ok ? 'ok' : (r.problem ?? 'FAIL').replace(/\|/g, '\\|').slice(0, 200)} |`),
].join('\n');
const summary = `${rows.filter((r) => r.ok).length} of ${rows.length} validations ok; ${new Set(rows.map((r) => r.id)).size} rows of ${repositories.length} repositories (${repositories.join(', ')}); backends ${backends.join(', ')}; ${((performance.now() - started) / 60000).toFixed(1)} minutes`;
console.log(`\n${table}\n\n${summary}`);
await writeJsonAtomic(out, { date: new Date().toISOString(), machine: `${process.platform} ${process.arch}`, backends, summary, rows });
await writeFileAtomic(out.replace(/\.json$/, '.md'), `# npm run validate:real\n\n${summary}\n\n${table}\n\nRows that cannot run here, and why: test/fixtures/swe-breadth/SOURCES.md.\n`);
