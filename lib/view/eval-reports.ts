/**
 * Eval reports beside a run: the report.json files `swerl eval --out` writes, found in the
 * run directory and its immediate subfolders, with the SWE-bench predictions written beside
 * them (the patch of every task, per run).
 */
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

import type { EvalReport } from '../eval/evaluate.js';

/** Folders a run writes that never hold reports (and may be large). */
const NOT_REPORT_FOLDERS = new Set(['checkpoints', 'trajectories', 'sampler-weights']);
const MAX_REPORT_BYTES = 16 << 20;
const PREDICTIONS = /^predictions(?:-run-(\d+))?\.jsonl$/;

export interface EvalReportEntry {
  /** The report's path relative to the run directory, '/'-separated. */
  path: string;
  model: string;
  tasks: number;
  runs: number;
  passAt1: number;
  mtimeMs: number;
}

export interface Prediction {
  instance_id: string;
  model_patch: string;
}

export interface EvalReportDetail {
  path: string;
  report: EvalReport;
  /** Predictions file name to its rows. */
  predictions: Record<string, Prediction[]>;
}

function isEvalReport(value: unknown): value is EvalReport {
  const r = value as Partial<EvalReport> | null;
  return typeof r === 'object' && r !== null && typeof r.model === 'string' && Array.isArray(r.perTask) && typeof r.passAt1?.mean === 'number';
}

/** The parsed report, or undefined for a file that is not one (missing, too large, other JSON). */
export async function readEvalReport(file: string): Promise<EvalReport | undefined> {
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile() || stat.size > MAX_REPORT_BYTES) return undefined;
    const value: unknown = JSON.parse(await fs.readFile(file, 'utf8'));
    return isEvalReport(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

async function candidateFiles(dir: string): Promise<string[]> {
  const files = [path.join(dir, 'report.json')];
  const entries = existsSync(dir) ? await fs.readdir(dir, { withFileTypes: true }) : [];
  for (const entry of entries) {
    if (entry.isDirectory() && !NOT_REPORT_FOLDERS.has(entry.name)) files.push(path.join(dir, entry.name, 'report.json'));
  }
  return files;
}

export async function listEvalReports(dir: string): Promise<EvalReportEntry[]> {
  const entries: EvalReportEntry[] = [];
  for (const file of await candidateFiles(dir)) {
    const report = await readEvalReport(file);
    if (!report) continue;
    entries.push({
      path: path.relative(dir, file).split(path.sep).join('/'),
      model: report.model,
      tasks: report.tasks,
      runs: report.runs,
      passAt1: report.passAt1.mean,
      mtimeMs: (await fs.stat(file)).mtimeMs,
    });
  }
  return entries.sort((a, b) => a.path.localeCompare(b.path));
}

async function readPredictions(file: string): Promise<Prediction[]> {
  const rows: Prediction[] = [];
  for (const line of (await fs.readFile(file, 'utf8')).split('\n')) {
    if (line.trim() === '') continue;
    try {
      const row = JSON.parse(line) as Partial<Prediction>;
      if (typeof row.instance_id === 'string') rows.push({ instance_id: row.instance_id, model_patch: typeof row.model_patch === 'string' ? row.model_patch : '' });
    } catch {
      // A line that is not JSON is no prediction; the others still are.
    }
  }
  return rows;
}

/** The report at `file` (already checked to be one of listEvalReports'), with its predictions. */
export async function evalReportDetail(file: string, relative: string, report: EvalReport): Promise<EvalReportDetail> {
  const folder = path.dirname(file);
  const names = (await fs.readdir(folder)).filter((name) => PREDICTIONS.test(name));
  // predictions.jsonl is a copy of run 0's (SWE-bench's harness reads that name): shown once.
  const shown = names.includes('predictions-run-0.jsonl') ? names.filter((name) => name !== 'predictions.jsonl') : names;
  const byRun = (name: string) => Number(PREDICTIONS.exec(name)![1] ?? 0);
  const predictions: Record<string, Prediction[]> = {};
  for (const name of shown.sort((a, b) => byRun(a) - byRun(b))) predictions[name] = await readPredictions(path.join(folder, name));
  return { path: relative, report, predictions };
}
