/**
 * A swe-gen suite on disk: one task folder per seed, each written to a temporary folder and
 * renamed into place, and the check that two suites share no seed and no program.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

import { SwerlError, invalidArg } from '../../errors.js';
import { writeDirectoryAtomic } from '../../util/atomic.js';
import { loadSwerlTaskFolder } from '../tasks/swerl-folder.js';
import type { Task } from '../task.js';
import { generateSweGenTask, sweGenTaskId, type GeneratedTask } from './generate.js';
import { parseSweGenSuiteOptions, taskOptionsOf, type SweGenSuiteOptions } from './options.js';
import { parseTaskId, streamSeed, type Split } from './splits.js';

export interface SweGenSuiteRequest extends Partial<Omit<SweGenSuiteOptions, 'functions' | 'lines'>> {
  functions?: Partial<SweGenSuiteOptions['functions']>;
  lines?: Partial<SweGenSuiteOptions['lines']>;
  /** Another suite this one must share no seed and no program with (held-out against train). */
  disjointFrom?: string;
  /**
   * With disjointFrom: leave out the tasks whose program the other split's tasks there have,
   * instead of refusing the suite (the suite then holds fewer than count; tasks of its own split
   * in that folder are not compared, so held-out and train suites can share a folder).
   */
  dropShared?: boolean;
}

export interface SweGenSuite {
  dir: string;
  /** The task folders, in seed order. */
  paths: string[];
  /** The tasks as loadTasks gives them. */
  tasks: Task[];
  /** Tasks left out by dropShared (their ids). */
  dropped: string[];
  options: SweGenSuiteOptions;
  /** One line: how many tasks of which languages and bug kinds. */
  summary: string;
}

/** What makes two tasks the same: their split's seed, and the program the agent is given. */
interface SuiteIndex {
  seeds: Map<number, string>;
  programs: Map<string, string>;
}

const programHash = (text: string) => createHash('sha256').update(text).digest('hex');

function indexTasks(tasks: readonly { id: string; split: Split; seed: number; program: string }[]): SuiteIndex {
  const index: SuiteIndex = { seeds: new Map(), programs: new Map() };
  for (const t of tasks) {
    index.seeds.set(streamSeed(t.split, t.seed), t.id);
    index.programs.set(programHash(t.program), t.id);
  }
  return index;
}

/** The swe-gen tasks of a suite folder: split, seed and program of each (other folders, and tasks of `skipSplit`, are ignored). */
async function readSuite(dir: string, field: string, skipSplit?: Split): Promise<SuiteIndex> {
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => {
    throw invalidArg(field, `${JSON.stringify(dir)} cannot be read`, 'give a suite folder written by swerl tasks generate');
  });
  const tasks = [];
  const named = entries.flatMap((entry) => {
    const parsed = entry.isDirectory() ? parseTaskId(entry.name) : null;
    return parsed && parsed.split !== skipSplit ? [{ entry, parsed }] : [];
  });
  // in seed order, so that what is reported does not depend on the order of the folder
  named.sort((a, b) => streamSeed(a.parsed.split, a.parsed.seed) - streamSeed(b.parsed.split, b.parsed.seed));
  for (const { entry, parsed } of named) {
    const folder = path.join(dir, entry.name);
    let file: string;
    let program: string;
    try {
      file = (JSON.parse(await fs.readFile(path.join(folder, 'task.json'), 'utf8')) as { swe_gen: { file: string } }).swe_gen.file;
      program = await fs.readFile(path.join(folder, 'repo', file), 'utf8');
    } catch (error) {
      throw invalidArg(field, `${JSON.stringify(folder)} is not a swe-gen task folder (${(error as Error).message})`, 'give a suite folder written by swerl tasks generate');
    }
    tasks.push({ id: entry.name, ...parsed, program });
  }
  return indexTasks(tasks);
}

/** Pairs of tasks the two suites share: the same seed of the same split, or else the same program. */
function overlaps(a: SuiteIndex, b: SuiteIndex): string[] {
  const pairs = new Map<string, string>();
  for (const [seed, id] of a.seeds) {
    const other = b.seeds.get(seed);
    if (other !== undefined) pairs.set(`${id} ${other}`, `${id} and ${other} share a seed`);
  }
  for (const [hash, id] of a.programs) {
    const other = b.programs.get(hash);
    if (other !== undefined && !pairs.has(`${id} ${other}`)) pairs.set(`${id} ${other}`, `${id} and ${other} have the same program`);
  }
  return [...pairs.values()];
}

/**
 * Throws unless suites `a` and `b` (folders) share no seed of a split and no program. Seeds
 * of different splits never meet (splits.ts); the same program from different seeds can, in
 * small settings (one function per file), and would leak a held-out task into training.
 */
export async function assertSweGenSuitesDisjoint(a: string, b: string): Promise<void> {
  const shared = overlaps(await readSuite(a, 'a'), await readSuite(b, 'b'));
  if (shared.length > 0) {
    throw new SwerlError('ERR_SWERL_INVALID_ARG', `${a} and ${b} overlap in ${shared.length} task(s): ${shared.slice(0, 5).join('; ')}${shared.length > 5 ? '; …' : ''}`);
  }
}

async function assertWritable(dir: string, force: boolean): Promise<void> {
  const entries = await fs.readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw invalidArg('dir', `${JSON.stringify(dir)} cannot be read as a folder (${error.code})`, 'give a new or empty folder');
  });
  if (entries.length > 0 && !force) {
    throw invalidArg('dir', `${JSON.stringify(dir)} is not empty (${entries.length} entries)`, 'give a new or empty folder, or force (--force) to write into it, replacing tasks of the same ids');
  }
}

function summarize(tasks: readonly GeneratedTask[], options: SweGenSuiteOptions, dir: string): string {
  const tally = (values: string[]) => {
    const counts = new Map<string, number>();
    for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
    return [...counts].map(([k, n]) => `${k} ${n}`).join(', ');
  };
  const last = options.firstSeed + options.count - 1;
  return `wrote ${tasks.length} task(s) to ${dir} (${options.split} seeds ${options.firstSeed}-${last}; ${tally(tasks.map((t) => t.metadata.language))}; bugs: ${tally(tasks.flatMap((t) => t.metadata.bugs.map((b) => b.kind)))})`;
}

async function writeTask(dir: string, task: GeneratedTask): Promise<string> {
  const folder = path.join(dir, task.id);
  await writeDirectoryAtomic(folder, async (tmp) => {
    for (const [name, text] of Object.entries(task.files)) {
      const file = path.join(tmp, name);
      await fs.mkdir(path.dirname(file), { recursive: true });
      await fs.writeFile(file, text);
    }
  });
  return folder;
}

/** The ids of the tasks writeSweGenSuite would write for `request`, generated in memory only. */
export function sweGenSuiteIds(request: SweGenSuiteRequest = {}): string[] {
  const { disjointFrom: _unused, ...rest } = request;
  const options = parseSweGenSuiteOptions(rest, 'options');
  const taskOptions = taskOptionsOf(options);
  return Array.from({ length: options.count }, (_, i) => sweGenTaskId(options.split, options.firstSeed + i, taskOptions));
}

/**
 * Generates a suite into `dir`: seeds firstSeed .. firstSeed + count - 1 of the split, one
 * folder each, named by its id. Refuses a non-empty `dir` unless force, and (given
 * disjointFrom) a suite that would share a seed or a program with another, before writing.
 */
export async function writeSweGenSuite(dir: string, request: SweGenSuiteRequest = {}): Promise<SweGenSuite> {
  const { disjointFrom, dropShared = false, ...rest } = request;
  const options = parseSweGenSuiteOptions(rest, 'options');
  await assertWritable(dir, options.force);
  const taskOptions = taskOptionsOf(options);
  let generated = Array.from({ length: options.count }, (_, i) => generateSweGenTask(options.split, options.firstSeed + i, taskOptions));
  const dropped: string[] = [];
  if (disjointFrom !== undefined) {
    const index = (tasks: readonly GeneratedTask[]) => indexTasks(tasks.map((t) => ({ id: t.id, split: t.metadata.split, seed: t.metadata.seed, program: t.files[`repo/${t.metadata.file}`]! })));
    const theirs = await readSuite(disjointFrom, 'disjointFrom', dropShared ? options.split : undefined);
    if (dropShared) {
      generated = generated.filter((t) => {
        const keep = overlaps(index([t]), theirs).length === 0;
        if (!keep) dropped.push(t.id);
        return keep;
      });
    }
    const shared = overlaps(index(generated), theirs);
    if (shared.length > 0) {
      throw invalidArg('disjointFrom', `${JSON.stringify(disjointFrom)} overlaps the suite asked for in ${shared.length} task(s): ${shared.slice(0, 5).join('; ')}`, 'take other seeds, the other split, or larger programs (or dropShared: leave them out)');
    }
  }
  await fs.mkdir(dir, { recursive: true });
  const paths: string[] = [];
  for (const task of generated) paths.push(await writeTask(dir, task));
  const tasks: Task[] = [];
  for (const p of paths) tasks.push(await loadSwerlTaskFolder(p));
  const summary = summarize(generated, options, dir) + (dropped.length ? `; ${dropped.length} left out: their programs are in ${disjointFrom}` : '');
  return { dir, paths, tasks, options, summary, dropped };
}
