/**
 * The directories `swerl view` was given, as runs: a run directory (config.json, metrics.jsonl
 * or trajectories/), an eval output folder (report.json), or a folder of those (`swerl view
 * runs`), whose subfolders that are runs are taken.
 */
import { existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';

import { invalidArg } from '../errors.js';

const RUN_MARKERS = ['config.json', 'metrics.jsonl', 'trajectories', 'report.json'];

export interface RunLocation {
  /** Real path. */
  dir: string;
  /** Short and unique among the runs: the folder's name, with its parent's when two share one. */
  name: string;
}

function isRun(dir: string): boolean {
  return RUN_MARKERS.some((marker) => existsSync(path.join(dir, marker)));
}

function runsIn(dir: string, given: string): string[] {
  if (isRun(dir)) return [dir];
  const children = readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => path.join(dir, entry.name))
    .filter(isRun)
    .sort();
  if (children.length === 0) {
    throw invalidArg('dirs', `has ${given}, which is no run directory (no ${RUN_MARKERS.join(', ')}) and has none in it`, 'give the run.dir of a `swerl train` config, or the --out folder of `swerl eval`');
  }
  return children;
}

function uniqueNames(dirs: readonly string[]): string[] {
  const names = dirs.map((dir) => path.basename(dir));
  return names.map((name, i) => (names.indexOf(name) !== names.lastIndexOf(name) ? path.join(path.basename(path.dirname(dirs[i]!)), name) : name));
}

export function resolveRunDirs(dirs: readonly string[]): RunLocation[] {
  if (dirs.length === 0) throw invalidArg('dirs', 'is empty', 'give at least one run directory');
  const found: string[] = [];
  for (const given of dirs) {
    const dir = path.resolve(given);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) throw invalidArg('dirs', `has ${given}, which is not a directory`);
    for (const run of runsIn(realpathSync(dir), given)) if (!found.includes(run)) found.push(run);
  }
  const names = uniqueNames(found);
  return found.map((dir, i) => ({ dir, name: names[i]! }));
}
