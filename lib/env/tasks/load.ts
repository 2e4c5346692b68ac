/**
 * Loading tasks from any source: a swerl task folder, a folder of them (a suite), or a
 * SWE-bench / SWE-rebench / R2E-Gym dataset file (JSON or JSONL, streamed). A bad task stops
 * the load with an error naming the file, line and field, or with onError: 'skip' is left out
 * and reported.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

import { SwerlError, invalidArg } from '../../errors.js';
import { r2eGymTask } from './r2e-gym.js';
import { readRows } from './rows.js';
import { sweBenchTask, type SweBenchOptions } from './swe-bench.js';
import { CheckoutFinder } from '../repositories.js';
import { isSwerlTaskFolder, loadSwerlTaskFolder } from './swerl-folder.js';
import type { Task, TaskProblem } from '../task.js';

export type TaskFormat = 'swerl' | 'swe-bench' | 'r2e-gym';

export interface LoadTasksOptions extends SweBenchOptions {
  /**
   * A folder of git clones for dataset rows: a row of `owner/name` runs on DIR/owner__name (or
   * DIR/owner/name) checked out at its base_commit, in either sandbox backend, instead of its image.
   */
  repos?: string;
  /** Default: from the path (a folder is swerl's format) or the first row's fields. */
  format?: TaskFormat;
  /** 'throw' (default) stops at the first bad task; 'skip' leaves it out and reports it. */
  onError?: 'throw' | 'skip';
  /** Called for each skipped task. */
  onProblem?: (problem: TaskProblem) => void;
}

/**
 * Refused tasks taken (with onError: 'skip') before a source is given up on: each one is kept
 * to be reported, so a gigabyte of bad lines must not become millions of problems.
 */
export const MAX_SKIPPED = 100_000;

function describeProblem(problem: TaskProblem): string {
  return `${problem.file}${problem.line !== undefined ? `:${problem.line}` : ''}: ${problem.message}`;
}

function rowFormat(row: unknown): TaskFormat | null {
  if (typeof row !== 'object' || row === null) return null;
  if ('expected_output_json' in row) return 'r2e-gym';
  if ('FAIL_TO_PASS' in row || 'instance_id' in row) return 'swe-bench';
  return null;
}

/** Tasks one at a time, in file order (rows are streamed, never all held). */
export async function* streamTasks(source: string, options: LoadTasksOptions = {}): AsyncGenerator<Task> {
  let skipped = 0;
  const report = (problem: TaskProblem) => {
    if (options.onError !== 'skip') throw new SwerlError('ERR_SWERL_INVALID_TASK', describeProblem(problem));
    if (++skipped > MAX_SKIPPED) {
      throw new SwerlError('ERR_SWERL_INVALID_TASK', `${describeProblem(problem)}; stopping: over ${MAX_SKIPPED} tasks of ${source} were refused, so it is not a task dataset, or every row lacks the same thing (fix that first)`);
    }
    options.onProblem?.(problem);
  };
  const stat = await fs.stat(source).catch(() => null);
  if (!stat) throw new SwerlError('ERR_SWERL_INVALID_TASK', `${source}: no such file or folder; give a task folder, a suite folder, or a .json/.jsonl dataset`);

  if (stat.isDirectory()) {
    if (options.format && options.format !== 'swerl') {
      throw new SwerlError('ERR_SWERL_INVALID_TASK', `${source}: is a folder, but format is ${options.format}; give the dataset file`);
    }
    const folders = (await isSwerlTaskFolder(source))
      ? [source]
      : (await fs.readdir(source, { withFileTypes: true }))
          .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
          .map((e) => path.join(source, e.name))
          .sort();
    for (const folder of folders) {
      if (folders.length > 1 && !(await isSwerlTaskFolder(folder))) continue; // not a task (e.g. shared assets)
      try {
        yield await loadSwerlTaskFolder(folder);
      } catch (error) {
        if (!(error instanceof SwerlError) || error.code === 'ERR_SWERL_INVALID_TASK') throw error;
        report({ file: folder, message: error.message });
      }
    }
    return;
  }

  let format = options.format;
  const seen = new Map<string, number>();
  const finder = options.repos !== undefined ? new CheckoutFinder(options.repos) : null;
  try {
    for await (const row of readRows(source)) {
      if (row.parseError !== undefined) {
        report({ file: source, line: row.line, message: `the row ${row.parseError}` });
        continue;
      }
      format ??= rowFormat(row.value) ?? undefined;
      if (!format) {
        report({ file: source, line: row.line, message: 'row is neither a SWE-bench row (FAIL_TO_PASS) nor an R2E-Gym row (expected_output_json); pass format' });
        continue;
      }
      let task: Task;
      try {
        task = format === 'r2e-gym' ? r2eGymTask(row.value) : sweBenchTask(row.value, options);
        if (finder) await useClone(task, finder);
      } catch (error) {
        if (!(error instanceof SwerlError) || (error.code !== 'ERR_SWERL_INVALID_ARG' && error.code !== 'ERR_SWERL_INVALID_TASK')) throw error;
        report({ file: source, line: row.line, message: error.message });
        continue;
      }
      const first = seen.get(task.id);
      if (first !== undefined) {
        report({ file: source, line: row.line, message: `instance_id ${task.id} is a duplicate of line ${first}; give each row its own id` });
        continue;
      }
      seen.set(task.id, row.line);
      yield task;
    }
  } finally {
    finder?.close();
  }
}

/**
 * Points a row's task at its clone: the work tree is the base commit checked out, the tests run
 * with the host's (or base image's) toolchain, the repository importable from its root or src/.
 */
async function useClone(task: Task, finder: CheckoutFinder): Promise<void> {
  if (task.source === 'r2e-gym') {
    throw invalidArg('repos', `cannot serve R2E-Gym row ${task.id}: its hidden tests and run_tests.sh exist only inside its image`, 'run R2E-Gym rows on the docker backend without a repos folder');
  }
  const metadata = task.metadata as { repo?: string; baseCommit?: string };
  task.checkout = await finder.find(task.id, metadata.repo, metadata.baseCommit);
  delete task.image;
  task.env = { PYTHONPATH: `${task.workdir}/src:${task.workdir}` };
}

/** All tasks of a source, and the problems skipped (with onError: 'skip'). */
export async function loadTasks(source: string, options: LoadTasksOptions = {}): Promise<{ tasks: Task[]; problems: TaskProblem[] }> {
  const problems: TaskProblem[] = [];
  const tasks: Task[] = [];
  const onProblem = (problem: TaskProblem) => {
    problems.push(problem);
    options.onProblem?.(problem);
  };
  for await (const task of streamTasks(source, { ...options, onProblem })) tasks.push(task);
  return { tasks, problems };
}

/**
 * Refuses, before any sandbox starts, tasks the backend cannot run: the local backend runs no
 * image, so a row needs its clone (a repos folder) there.
 */
export function assertRunnable(tasks: readonly Task[], backend: string): void {
  if (backend !== 'local') return;
  const imageOnly = tasks.filter((t) => t.repoDir === undefined && t.checkout === undefined);
  if (imageOnly.length === 0) return;
  const ids = imageOnly.slice(0, 3).map((t) => t.id).join(', ') + (imageOnly.length > 3 ? `, … (${imageOnly.length} in all)` : '');
  throw invalidArg(
    'sandbox',
    `is local, which runs no container image, but ${ids} come${imageOnly.length === 1 ? 's' : ''} only as an image`,
    'give a folder of clones of their repositories (--repos DIR, tasks.repos), or use the docker backend (--sandbox docker)',
  );
}

/** The loader options of the command-line flags --repos and --test-command. */
export function taskSourceOptions(flags: { repos?: string | undefined; 'test-command'?: string | undefined }): Pick<LoadTasksOptions, 'repos' | 'testCommand'> {
  return {
    ...(flags.repos !== undefined ? { repos: flags.repos } : {}),
    ...(flags['test-command'] !== undefined ? { testCommand: flags['test-command'] } : {}),
  };
}
