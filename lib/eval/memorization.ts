/**
 * What memorizing the training tasks is worth, so that a resolve rate can be read against it
 * (generated tasks, whose fixes are known: task.json's swe_gen). The baseline is told which
 * line is buggy (generous: a model must find it) and answers with the fix seen most often for
 * that exact line in training; it resolves a held-out task when that fix, applied, passes the
 * task's hidden tests. The held-out tasks whose fix (buggy line and fixed line together) never
 * occurs in training are where only generalization can score.
 */
import { SwerlError } from '../errors.js';
import { gradePatch } from '../env/reward/grade.js';
import type { SandboxBackend } from '../env/sandbox/sandbox.js';
import { unifiedDiff } from '../env/swe-gen/diff.js';
import type { SweGenMetadata } from '../env/swe-gen/generate.js';
import type { Task } from '../env/task.js';

/** A generated task's fixes, or an error naming the task: only swe-gen tasks carry them. */
export function sweGenFixes(task: Task): SweGenMetadata {
  const meta = task.metadata.sweGen as SweGenMetadata | undefined;
  if (!meta || !Array.isArray(meta.bugs)) throw new SwerlError('ERR_SWERL_INVALID_ARG', `task ${task.id} carries no swe-gen fix (metadata.sweGen); the memorization baseline needs generated tasks`);
  return meta;
}

const fixKey = (before: string, after: string) => `${before}\u0000${after}`;

/** The fix table of the training tasks: each buggy line to the fixed line seen most often for it (first seen on a tie). */
export function fixTable(train: readonly Task[]): Map<string, string> {
  const counts = new Map<string, Map<string, number>>();
  for (const task of train) {
    for (const bug of sweGenFixes(task).bugs) {
      let fixes = counts.get(bug.before);
      if (!fixes) counts.set(bug.before, (fixes = new Map()));
      fixes.set(bug.after, (fixes.get(bug.after) ?? 0) + 1);
    }
  }
  const table = new Map<string, string>();
  for (const [before, fixes] of counts) {
    let best = '';
    let most = 0;
    for (const [after, n] of fixes) if (n > most) [best, most] = [after, n];
    table.set(before, best);
  }
  return table;
}

/** Whether every fix of `task` (its buggy line with its fixed line) is absent from the training tasks. */
export function fixNeverSeen(task: Task, seen: ReadonlySet<string>): boolean {
  return sweGenFixes(task).bugs.every((b) => !seen.has(fixKey(b.before, b.after)));
}

/** Every (buggy line, fixed line) pair of the training tasks. */
export function seenFixes(train: readonly Task[]): Set<string> {
  return new Set(train.flatMap((task) => sweGenFixes(task).bugs.map((b) => fixKey(b.before, b.after))));
}

export interface MemorizationResult {
  taskId: string;
  /** The table had a fix for every buggy line of the task. */
  answered: boolean;
  resolved: boolean;
  /** No fix of the task occurs in training. */
  neverSeen: boolean;
}

/**
 * The baseline on each held-out task: the table's fixes applied to the repository's file and
 * graded by the hidden tests in `backend` (a fix equal to the gold one is resolved without a
 * sandbox). `concurrency` gradings at once.
 */
export async function memorizationBaseline(
  heldout: readonly Task[],
  train: readonly Task[],
  backend: SandboxBackend,
  options: { timeoutMs: number; concurrency: number; readSource: (task: Task, file: string) => Promise<string> },
): Promise<MemorizationResult[]> {
  const table = fixTable(train);
  const seen = seenFixes(train);
  const results: MemorizationResult[] = new Array(heldout.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < heldout.length; i = next++) {
      const task = heldout[i]!;
      const meta = sweGenFixes(task);
      const neverSeen = fixNeverSeen(task, seen);
      const answers = meta.bugs.map((b) => table.get(b.before));
      if (answers.some((a) => a === undefined)) {
        results[i] = { taskId: task.id, answered: false, resolved: false, neverSeen };
        continue;
      }
      if (meta.bugs.every((b, k) => answers[k] === b.after)) {
        results[i] = { taskId: task.id, answered: true, resolved: true, neverSeen };
        continue;
      }
      const source = await options.readSource(task, meta.file);
      const patched = meta.bugs.reduce((text, b, k) => text.replace(b.before, answers[k]!), source);
      const grade = await gradePatch(backend, task, unifiedDiff(meta.file, source, patched), { timeoutMs: options.timeoutMs });
      results[i] = { taskId: task.id, answered: true, resolved: grade.reward === 1, neverSeen };
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
  return results;
}
