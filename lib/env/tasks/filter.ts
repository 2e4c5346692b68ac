/**
 * Curation of dataset rows, as DeepSWE and Nebius did before training: patch-size limits,
 * excluded repositories (DeepSWE dropped SWE-bench Verified's), validation in sandboxes (gold
 * must pass, the base must fail, tests that change outcome across N runs are flaky), and solve
 * rates from `swerl eval` reports (Nebius's stage 2: drop what is solved >= 2/3 of the time,
 * and what is never solved). Rows are kept as they came, except that flaky PASS_TO_PASS tests
 * are dropped from them; every dropped row and test is reported with its reason.
 */
import { readFile, stat } from 'node:fs/promises';

import { invalidArg } from '../../errors.js';
import type { TaskValidation } from '../task.js';
import { readRows } from './rows.js';

/** How often a task was solved: the fields of a `swerl eval` report's perTask entries read here. */
export interface SolveRate {
  runs: number;
  solved: number;
}

export interface FilterOptions {
  /** Most files the gold patch may change. */
  maxFiles?: number;
  /** Most lines (added + removed) the gold patch may change. */
  maxLines?: number;
  /** Repositories (owner/name) whose rows are dropped. */
  excludeRepos?: ReadonlySet<string>;
  /** Per-task results of `swerl eval` (runs, solved) for solve-rate filtering. */
  solveRates?: ReadonlyMap<string, SolveRate>;
  /** Drop rows solved at least this often (Nebius: 2/3). Default: none. */
  maxSolveRate?: number;
  /** Drop rows never solved. */
  dropUnsolved?: boolean;
  /** Validation results by id (gold runs carry per-test statuses). */
  validations?: ReadonlyMap<string, TaskValidation>;
  /** Rows that could not be made into runnable tasks for validation, by line. */
  loadProblems?: ReadonlyMap<number, string>;
}

export interface DroppedRow {
  id: string;
  line: number;
  reasons: string[];
}

export interface FilterReport {
  kept: number;
  dropped: DroppedRow[];
  /** Rows kept with flaky PASS_TO_PASS tests removed. */
  flakyTests: { id: string; tests: string[] }[];
  /** Rows that could not be read (bad JSON, no instance_id). */
  unreadable: { line: number; message: string }[];
}

/** Files and changed lines (added + removed) of a unified diff. */
export function patchSize(patch: string): { files: number; lines: number } {
  let files = 0;
  let lines = 0;
  for (const line of patch.split('\n')) {
    if (line.startsWith('diff --git ')) files++;
    else if ((line.startsWith('+') && !line.startsWith('+++')) || (line.startsWith('-') && !line.startsWith('---'))) lines++;
  }
  return { files, lines };
}

function testList(value: unknown): string[] | null {
  if (Array.isArray(value)) return value as string[];
  if (typeof value !== 'string') return null;
  try {
    const parsed = JSON.parse(value) as unknown;
    return Array.isArray(parsed) ? (parsed as string[]) : null;
  } catch {
    return null;
  }
}

/** Tests that pass in some runs and not in others, among the gold runs or among the base runs. */
export function flakyTests(validation: TaskValidation): string[] {
  const outcome = (status: string | undefined) => (status === 'PASSED' || status === 'XFAIL' ? 'pass' : 'fail');
  const flaky = new Set<string>();
  for (const side of [validation.gold, validation.base]) {
    const runs = side.filter((r) => r.tests).map((r) => r.tests!);
    if (runs.length < 2) continue;
    for (const id of new Set(runs.flatMap((r) => Object.keys(r)))) {
      if (new Set(runs.map((r) => outcome(r[id]))).size > 1) flaky.add(id);
    }
  }
  return [...flaky].sort();
}

/** Why a row is dropped (empty: kept), and the PASS_TO_PASS tests to remove from it. */
export function judgeRow(row: Record<string, unknown>, options: FilterOptions): { reasons: string[]; flaky: string[] } {
  const id = String(row.instance_id);
  const reasons: string[] = [];
  const repo = typeof row.repo === 'string' ? row.repo : undefined;
  if (repo && options.excludeRepos?.has(repo)) reasons.push(`repository ${repo} is excluded`);
  if (typeof row.patch === 'string' && (options.maxFiles !== undefined || options.maxLines !== undefined)) {
    const size = patchSize(row.patch);
    if (options.maxFiles !== undefined && size.files > options.maxFiles) reasons.push(`gold patch changes ${size.files} files (max ${options.maxFiles})`);
    if (options.maxLines !== undefined && size.lines > options.maxLines) reasons.push(`gold patch changes ${size.lines} lines (max ${options.maxLines})`);
  }
  const rate = options.solveRates?.get(id);
  if (options.solveRates && (options.maxSolveRate !== undefined || options.dropUnsolved)) {
    if (!rate) reasons.push('no solve rate: the eval reports do not have this task');
    else {
      if (options.maxSolveRate !== undefined && rate.solved / rate.runs >= options.maxSolveRate) reasons.push(`solved ${rate.solved}/${rate.runs} (>= ${options.maxSolveRate.toFixed(2)}): too easy`);
      if (options.dropUnsolved && rate.solved === 0) reasons.push(`never solved in ${rate.runs} run(s)`);
    }
  }
  let flaky: string[] = [];
  if (options.validations) {
    const validation = options.validations.get(id);
    if (!validation) reasons.push('not validated');
    else if (validation.gold.length === 0) reasons.push(`not validated: ${validation.problem ?? 'no gold run'}`);
    else {
      const unstable = flakyTests(validation);
      const failToPass = testList(row.FAIL_TO_PASS) ?? [];
      const passToPass = new Set(testList(row.PASS_TO_PASS) ?? []);
      const flakyRequired = unstable.filter((t) => failToPass.includes(t));
      if (flakyRequired.length) reasons.push(`flaky FAIL_TO_PASS test(s): ${flakyRequired.slice(0, 3).join(', ')}`);
      flaky = unstable.filter((t) => passToPass.has(t));
      // A gold run failing only on flaky PASS_TO_PASS tests is rescued by dropping them.
      const required = [...failToPass, ...passToPass];
      for (const run of validation.gold) {
        const failing = required.filter((t) => run.tests?.[t] !== 'PASSED' && run.tests?.[t] !== 'XFAIL' && !flaky.includes(t));
        if (run.reward !== 1 && (failing.length > 0 || !run.tests)) {
          reasons.push(`gold fails: ${run.reason}`);
          break;
        }
      }
      if (validation.base.some((b) => b.reward !== 0)) reasons.push('the untouched repository already passes');
      const broken = validation.base.flatMap((b) => b.brokenPassToPass).filter((t) => !flaky.includes(t));
      if (broken.length) reasons.push(`PASS_TO_PASS fail at the base: ${[...new Set(broken)].slice(0, 3).join(', ')}`);
    }
  }
  return { reasons, flaky };
}

/** The repositories of an exclusion list: "owner/name" items, or a JSONL/JSON file of rows or names. */
export async function readRepoList(spec: string): Promise<Set<string>> {
  const repos = new Set<string>();
  const isFile = (await stat(spec).catch(() => null))?.isFile() ?? false;
  if (!isFile) {
    for (const item of spec.split(',').map((s) => s.trim()).filter(Boolean)) {
      if (!/^[\w.-]+\/[\w.-]+$/.test(item)) throw invalidArg('--exclude-repos', `has ${JSON.stringify(item)}, which is neither owner/name nor a file`, 'give owner/name[,owner/name…] or a file of rows or names');
      repos.add(item);
    }
    return repos;
  }
  if (spec.endsWith('.jsonl') || spec.endsWith('.json')) {
    for await (const row of readRows(spec)) {
      const repo = (row.value as { repo?: unknown } | undefined)?.repo;
      if (typeof repo === 'string') repos.add(repo);
    }
  } else {
    for (const line of (await readFile(spec, 'utf8')).split('\n')) if (line.trim() && !line.startsWith('#')) repos.add(line.trim());
  }
  return repos;
}

/** Solve rates of every task in one or more `swerl eval` report.json files (runs and solves added up). */
export async function readSolveRates(files: readonly string[]): Promise<Map<string, SolveRate>> {
  const rates = new Map<string, SolveRate>();
  for (const file of files) {
    let report: { perTask?: Array<SolveRate & { id: string }> };
    try {
      report = JSON.parse(await readFile(file, 'utf8')) as typeof report;
    } catch (error) {
      throw invalidArg('--solve-rates', `cannot read ${file} (${(error as Error).message})`, 'give the report.json files swerl eval wrote');
    }
    if (!Array.isArray(report.perTask)) throw invalidArg('--solve-rates', `${file} has no perTask list`, 'give the report.json files swerl eval wrote');
    for (const task of report.perTask) {
      const sum = rates.get(task.id) ?? { runs: 0, solved: 0 };
      rates.set(task.id, { runs: sum.runs + task.runs, solved: sum.solved + task.solved });
    }
  }
  return rates;
}

/** Filters the rows of `source`; `write` gets each kept row's JSON line, in order. */
export async function filterRows(source: string, options: FilterOptions, write: (line: string) => void | Promise<void>): Promise<FilterReport> {
  const report: FilterReport = { kept: 0, dropped: [], flakyTests: [], unreadable: [] };
  for await (const row of readRows(source)) {
    const value = row.value as Record<string, unknown> | undefined;
    if (row.parseError !== undefined || typeof value !== 'object' || value === null || typeof value.instance_id !== 'string') {
      report.unreadable.push({ line: row.line, message: row.parseError ? `the row ${row.parseError}` : 'the row has no instance_id' });
      continue;
    }
    const problem = options.loadProblems?.get(row.line);
    const { reasons, flaky } = problem ? { reasons: [`cannot be run: ${problem}`], flaky: [] } : judgeRow(value, options);
    if (reasons.length) {
      report.dropped.push({ id: value.instance_id, line: row.line, reasons });
      continue;
    }
    let kept = value;
    if (flaky.length) {
      const passToPass = (testList(value.PASS_TO_PASS) ?? []).filter((t) => !flaky.includes(t));
      kept = { ...value, PASS_TO_PASS: typeof value.PASS_TO_PASS === 'string' ? JSON.stringify(passToPass) : passToPass };
      report.flakyTests.push({ id: value.instance_id, tests: flaky });
    }
    report.kept++;
    await write(JSON.stringify(kept));
  }
  return report;
}

/** The report as Markdown. */
export function filterReportMarkdown(report: FilterReport, source: string): string {
  const lines = [`# swerl tasks filter: ${source}`, '', `${report.kept} kept, ${report.dropped.length} dropped, ${report.unreadable.length} unreadable`, ''];
  if (report.dropped.length) lines.push('## Dropped', '', '| row | line | why |', '|---|---|---|', ...report.dropped.map((d) => `| ${d.id} | ${d.line} | ${d.reasons.join('; ').replaceAll('|', '\\|')} |`), '');
  if (report.flakyTests.length) lines.push('## Flaky PASS_TO_PASS tests removed', '', ...report.flakyTests.map((f) => `- ${f.id}: ${f.tests.join(', ')}`), '');
  if (report.unreadable.length) lines.push('## Unreadable rows', '', ...report.unreadable.map((u) => `- line ${u.line}: ${u.message}`), '');
  return lines.join('\n');
}
