/**
 * `swerl eval --predictions FILE`: patches made by any agent (SWE-bench's predictions format:
 * `instance_id`, `model_patch`, `model_name_or_path`, as JSONL or a JSON list) graded in fresh
 * sandboxes of the rows, each prediction in its own, and reported twice: our report (every
 * line of the file with its status and why) and the SWE-bench harness's run report
 * (`make_run_report`'s fields, schema_version 2).
 *
 * Patches are applied as the harness applies them (git apply, --3way, --reject, then patch with
 * fuzz; lib/env/repo.ts ApplyMode). Statuses, as the harness counts them: `resolved`,
 * `unresolved` (the tests ran; a required one does not pass), `empty` (model_patch empty or
 * null: not run), `error` (no way of applying it worked, the tests ran past the time limit, or
 * the sandbox failed). Lines the harness would
 * refuse the whole run for, or take silently, are refused one by one instead: `malformed` (not
 * JSON, or a field missing or mistyped), `unknown` (an instance_id the rows do not hold),
 * `duplicate` (an instance_id given more than once: none of its lines is graded, since which one
 * the harness's dict keeps is an accident of order).
 */
import fs from 'node:fs/promises';
import path from 'node:path';

import { SwerlError } from '../errors.js';
import { gradePatch, type GradeResult } from '../env/reward/grade.js';
import { PASSING } from '../env/reward/resolve.js';
import type { SandboxBackend } from '../env/sandbox/sandbox.js';
import type { Task } from '../env/task.js';
import { writeFileAtomic, writeJsonAtomic } from '../util/atomic.js';
import { mapBounded } from '../util/bounded.js';

export const GRADED_STATUSES = ['resolved', 'unresolved', 'empty', 'error'] as const;
export const REFUSED_STATUSES = ['malformed', 'unknown', 'duplicate'] as const;
export type PredictionStatus = (typeof GRADED_STATUSES)[number] | (typeof REFUSED_STATUSES)[number];

/** One accepted prediction: a line of the file that names a row once, with its fields typed. */
export interface Prediction {
  line: number;
  instanceId: string;
  modelPatch: string | null;
  model: string;
}

/** What became of one line of the file. */
export interface PredictionOutcome {
  line: number;
  instanceId?: string;
  model?: string;
  status: PredictionStatus;
  reason: string;
  /** Required tests (FAIL_TO_PASS and PASS_TO_PASS) passing, of all, when the tests ran. */
  requiredPassing?: { passed: number; of: number };
  seconds?: number;
}

export interface ReadPredictions {
  accepted: Prediction[];
  refused: PredictionOutcome[];
}

/** Lines of a JSONL file, or the elements of a JSON list (the harness reads both). */
function records(text: string): { line: number; value: unknown; error?: string }[] {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('[')) {
    let list: unknown;
    try {
      list = JSON.parse(text);
    } catch (error) {
      throw new SwerlError('ERR_SWERL_INVALID_ARG', `--predictions is a JSON list that does not parse: ${(error as Error).message}; give JSONL (one prediction a line) or a valid JSON list`);
    }
    return (list as unknown[]).map((value, i) => ({ line: i + 1, value }));
  }
  const out: { line: number; value: unknown; error?: string }[] = [];
  text.split('\n').forEach((raw, i) => {
    if (raw.trim() === '') return;
    try {
      out.push({ line: i + 1, value: JSON.parse(raw) });
    } catch (error) {
      out.push({ line: i + 1, value: undefined, error: `not JSON (${(error as Error).message})` });
    }
  });
  return out;
}

/** Why a record is not a prediction, or undefined when it is one. */
function malformed(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object';
  const v = value as Record<string, unknown>;
  if (typeof v.instance_id !== 'string' || v.instance_id === '') return 'instance_id is missing or not a string';
  if (!('model_patch' in v)) return 'model_patch is missing (give the diff, or null for no patch)';
  if (v.model_patch !== null && typeof v.model_patch !== 'string') return `model_patch is a ${typeof v.model_patch}, not a string or null`;
  if (typeof v.model_name_or_path !== 'string' || v.model_name_or_path === '') return 'model_name_or_path is missing or not a string';
  return undefined;
}

/** Reads the file and sorts its lines into predictions to grade and lines refused (with why). */
export async function readPredictions(file: string, rowIds: ReadonlySet<string>): Promise<ReadPredictions> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    throw new SwerlError('ERR_SWERL_INVALID_ARG', `--predictions ${file} cannot be read: ${(error as Error).message}`);
  }
  const candidates: Prediction[] = [];
  const refused: PredictionOutcome[] = [];
  for (const { line, value, error } of records(text)) {
    const why = error ?? malformed(value);
    if (why !== undefined) {
      refused.push({ line, status: 'malformed', reason: why });
      continue;
    }
    const v = value as { instance_id: string; model_patch: string | null; model_name_or_path: string };
    candidates.push({ line, instanceId: v.instance_id, modelPatch: v.model_patch, model: v.model_name_or_path });
  }
  const lines = new Map<string, number[]>();
  for (const p of candidates) lines.set(p.instanceId, [...(lines.get(p.instanceId) ?? []), p.line]);
  const accepted: Prediction[] = [];
  for (const p of candidates) {
    const ids = { instanceId: p.instanceId, model: p.model };
    if (!rowIds.has(p.instanceId)) {
      refused.push({ line: p.line, ...ids, status: 'unknown', reason: `no row has instance_id ${p.instanceId} (check --tasks, or --only)` });
    } else if (lines.get(p.instanceId)!.length > 1) {
      refused.push({ line: p.line, ...ids, status: 'duplicate', reason: `instance_id ${p.instanceId} is given on lines ${lines.get(p.instanceId)!.join(', ')}; keep one` });
    } else {
      accepted.push(p);
    }
  }
  refused.sort((a, b) => a.line - b.line);
  return { accepted, refused };
}

function requiredPassing(task: Task, result: GradeResult): PredictionOutcome['requiredPassing'] {
  if (task.resolution.rule !== 'swe-bench' || Object.keys(result.tests).length === 0) return undefined;
  const required = [...task.resolution.failToPass, ...task.resolution.passToPass];
  const passed = required.filter((id) => PASSING.includes(result.tests[id]!)).length;
  return { passed, of: required.length };
}

/** The status of one graded prediction, as the harness would count it. */
export function gradedStatus(result: GradeResult): PredictionStatus {
  if (result.reward === 1) return 'resolved';
  if (result.notApplied !== undefined || result.timedOut) return 'error';
  return Object.keys(result.tests).length > 0 ? 'unresolved' : 'error';
}

export interface GradePredictionsOptions {
  backend: SandboxBackend;
  label: string;
  concurrency: number;
  timeoutMs: number;
  signal?: AbortSignal;
  onGraded?: (outcome: PredictionOutcome) => void;
}

/** Grades each accepted prediction in a fresh sandbox of its row; outcomes in the file's order. */
export async function gradePredictions(predictions: readonly Prediction[], tasks: ReadonlyMap<string, Task>, options: GradePredictionsOptions): Promise<PredictionOutcome[]> {
  return mapBounded(predictions, options.concurrency, async (p) => {
    const ids = { line: p.line, instanceId: p.instanceId, model: p.model };
    let outcome: PredictionOutcome;
    if (p.modelPatch === null || p.modelPatch.trim() === '') {
      outcome = { ...ids, status: 'empty', reason: 'model_patch is empty: nothing to run (the harness counts it apart)' };
    } else if (options.signal?.aborted) {
      outcome = { ...ids, status: 'error', reason: 'not graded: the evaluation was stopped' };
    } else {
      const task = tasks.get(p.instanceId)!;
      const started = performance.now();
      try {
        const result = await gradePatch(options.backend, task, p.modelPatch, { timeoutMs: options.timeoutMs, label: options.label, apply: 'harness' });
        const passing = requiredPassing(task, result);
        outcome = { ...ids, status: gradedStatus(result), reason: result.reason, ...(passing ? { requiredPassing: passing } : {}), seconds: (performance.now() - started) / 1000 };
      } catch (error) {
        outcome = { ...ids, status: 'error', reason: `the sandbox failed: ${(error as Error).message}`, seconds: (performance.now() - started) / 1000 };
      }
    }
    options.onGraded?.(outcome);
    return outcome;
  });
}

/** The SWE-bench harness's run report (swebench/harness/reporting.py make_run_report, schema 2). */
export function harnessReport(rowIds: readonly string[], outcomes: readonly PredictionOutcome[]) {
  const graded = outcomes.filter((o) => (GRADED_STATUSES as readonly string[]).includes(o.status));
  const ids = (status: PredictionStatus) => graded.filter((o) => o.status === status).map((o) => o.instanceId!).sort();
  const submitted = graded.map((o) => o.instanceId!).sort();
  const completed = graded.filter((o) => o.status === 'resolved' || o.status === 'unresolved').map((o) => o.instanceId!).sort();
  const incomplete = rowIds.filter((id) => !submitted.includes(id)).sort();
  return {
    total_instances: rowIds.length,
    submitted_instances: submitted.length,
    completed_instances: completed.length,
    resolved_instances: ids('resolved').length,
    unresolved_instances: ids('unresolved').length,
    infra_failure_instances: 0,
    ambiguous_failure_instances: 0,
    empty_patch_instances: ids('empty').length,
    error_instances: ids('error').length,
    completed_ids: completed,
    incomplete_ids: incomplete,
    empty_patch_ids: ids('empty'),
    submitted_ids: submitted,
    resolved_ids: ids('resolved'),
    unresolved_ids: ids('unresolved'),
    infra_failure_ids: [] as string[],
    ambiguous_failure_ids: [] as string[],
    failure_reasons: {},
    error_ids: ids('error'),
    schema_version: 2,
  };
}

export interface PredictionsReport {
  file: string;
  rows: number;
  counts: Record<PredictionStatus, number>;
  outcomes: PredictionOutcome[];
}

export function predictionsReport(file: string, rows: number, outcomes: readonly PredictionOutcome[]): PredictionsReport {
  const counts = Object.fromEntries([...GRADED_STATUSES, ...REFUSED_STATUSES].map((s) => [s, outcomes.filter((o) => o.status === s).length])) as Record<PredictionStatus, number>;
  return { file, rows, counts, outcomes: [...outcomes].sort((a, b) => a.line - b.line) };
}

export function predictionsMarkdown(r: PredictionsReport): string {
  const lines = [
    `# Predictions graded: ${path.basename(r.file)}`,
    '',
    `${r.rows} row(s); ${Object.entries(r.counts).filter(([, n]) => n > 0).map(([s, n]) => `${n} ${s}`).join(', ') || 'no predictions'}`,
    '',
    '| line | instance_id | status | required tests passing | why |',
    '|---|---|---|---|---|',
  ];
  for (const o of r.outcomes)
    lines.push(`| ${o.line} | ${o.instanceId ?? ''} | ${o.status} | ${o.requiredPassing ? `${o.requiredPassing.passed}/${o.requiredPassing.of}` : ''} | ${o.reason.replace(/\|/g, '\\|').replace(/\n/g, ' ').slice(0, 300)} |`);
  return `${lines.join('\n')}\n`;
}

/** Writes predictions-report.json, predictions-report.md and the harness's `<model>.<run>.json`; returns their paths. */
export async function writePredictionsOutputs(dir: string, report: PredictionsReport, harness: ReturnType<typeof harnessReport>, model: string): Promise<string[]> {
  await fs.mkdir(dir, { recursive: true });
  const files = [path.join(dir, 'predictions-report.json'), path.join(dir, 'predictions-report.md'), path.join(dir, `${model.replace(/\//g, '__')}.${path.basename(dir)}.json`)];
  await writeJsonAtomic(files[0]!, report);
  await writeFileAtomic(files[1]!, predictionsMarkdown(report));
  await writeJsonAtomic(files[2]!, harness);
  return files;
}
