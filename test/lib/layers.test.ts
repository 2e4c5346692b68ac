/**
 * lib/ is layered and imports point downward only: an import from a layer to one at its own
 * rank or above (other than inside its own folder) fails here, naming the file and the line.
 * The ranks are docs/design.md's layout. Inside lib/env and lib/train the same holds between
 * their entries (files and folders), and in native/src between its folders by their includes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import t from 'tap';

const LIB = fileURLToPath(new URL('../../lib/', import.meta.url));
const NATIVE_SRC = fileURLToPath(new URL('../../native/src/', import.meta.url));

/** Top-level entries of lib/ by rank; a folder may import only lower ranks. */
const RANKS: Record<string, number> = {
  'errors.ts': 0,
  util: 1,
  types: 1,
  'schema.ts': 2,
  'native.ts': 2,
  math: 3,
  model: 4,
  env: 4,
  agent: 5,
  serve: 6,
  tts: 6,
  eval: 7,
  train: 8,
  view: 9,
  cli: 10,
  'cli.ts': 11,
  'index.ts': 10,
};

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The top-level entry of lib/ a file or an import specifier (written .js, as ESM wants) is in. */
const topOf = (file: string) => path.relative(LIB, file).split(path.sep)[0]!.replace(/\.js$/, '.ts');

t.test('every top-level entry of lib/ has a rank', async (t) => {
  const entries = fs.readdirSync(LIB).filter((name) => name.endsWith('.ts') || fs.statSync(path.join(LIB, name)).isDirectory());
  t.same(entries.filter((name) => RANKS[name] === undefined), [], 'a new folder of lib/ gets a rank here and a line in docs/design.md');
});

t.test('imports point downward', async (t) => {
  const upward: string[] = [];
  let checked = 0;
  for (const file of sources(LIB)) {
    const from = topOf(file);
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, i) => {
      for (const match of line.matchAll(/(?:from\s*|import\(\s*)'(\.{1,2}\/[^']+)'/g)) {
        const to = topOf(path.resolve(path.dirname(file), match[1]!));
        checked++;
        if (to === from) continue;
        if (!(RANKS[to]! < RANKS[from]!)) upward.push(`${path.relative(LIB, file)}:${i + 1} imports ${to} (rank ${RANKS[to]}) from ${from} (rank ${RANKS[from]})`);
      }
    });
  }
  t.ok(checked > 300, `${checked} relative imports read`);
  t.same(upward, [], 'no import reaches its own rank or above');
});

/**
 * Entries of lib/env by rank: the shared words at the bottom (the Env contract and test
 * outcomes, the Task), the sandbox, tools and repositories above them, grading, the task
 * formats and swe-gen, then the environments, then validation.
 */
const ENV_RANKS: Record<string, number> = {
  'env.ts': 0,
  'actions.ts': 0,
  'observations.ts': 0,
  'prompts.ts': 0,
  'patch-files.ts': 0,
  'repositories.ts': 0,
  'git.ts': 0,
  sandbox: 0,
  'task.ts': 1,
  'base-commit.ts': 1,
  tools: 1,
  'frozen-lake.ts': 1,
  'repo.ts': 2,
  tasks: 2,
  reward: 3,
  'swe-gen': 3,
  'swe-env.ts': 4,
  'validate.ts': 5,
};

/**
 * Entries of lib/train by rank: the config and its pieces, the run shell and what a step
 * collects, where a run starts, the trainers (sft, then what builds on it), train() on top.
 */
const TRAIN_RANKS: Record<string, number> = {
  'algorithms.ts': 0,
  'async-rollouts.ts': 0,
  'config-file.ts': 0,
  'curriculum.ts': 0,
  'parallel.ts': 0,
  'plots.ts': 0,
  'progress.ts': 0,
  'run-dir.ts': 0,
  tracking: 0,
  'batch.ts': 1,
  'config.ts': 1,
  'configured-model.ts': 2,
  'learn.ts': 2,
  'run.ts': 2,
  'sampler.ts': 2,
  'task-source.ts': 2,
  'collect.ts': 3,
  'format-warmup.ts': 3,
  'resume.ts': 4,
  sft: 5,
  pretrain: 6,
  rft: 6,
  verifier: 6,
  'step-metrics.ts': 7,
  'trainer.ts': 8,
};

/** Imports from one entry of `folder` to another that do not point to a lower rank. */
function upwardInside(folder: string, ranks: Record<string, number>): { upward: string[]; unranked: string[]; checked: number } {
  const root = path.join(LIB, folder);
  const entryOf = (file: string) => path.relative(root, file).split(path.sep)[0]!.replace(/\.js$/, '.ts');
  const upward: string[] = [];
  let checked = 0;
  for (const file of sources(root)) {
    const from = entryOf(file);
    fs.readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
      for (const match of line.matchAll(/(?:from\s*|import\(\s*)'(\.{1,2}\/[^']+)'/g)) {
        const target = path.resolve(path.dirname(file), match[1]!);
        // Outside the folder, or not a module at all (an import line inside generated code's template).
        if (path.relative(root, target).startsWith('..') || !fs.existsSync(target.replace(/\.js$/, '.ts'))) continue;
        const to = entryOf(target);
        checked++;
        if (to !== from && !(ranks[to]! < ranks[from]!)) upward.push(`lib/${folder}/${path.relative(root, file)}:${i + 1} imports ${to} (rank ${ranks[to]}) from ${from} (rank ${ranks[from]})`);
      }
    });
  }
  const entries = fs.readdirSync(root).filter((name) => name.endsWith('.ts') || fs.statSync(path.join(root, name)).isDirectory());
  return { upward, unranked: entries.filter((name) => ranks[name] === undefined), checked };
}

for (const [folder, ranks] of [['env', ENV_RANKS], ['train', TRAIN_RANKS]] as const) {
  t.test(`inside lib/${folder}, imports point downward`, async (t) => {
    const { upward, unranked, checked } = upwardInside(folder, ranks);
    t.same(unranked, [], `a new entry of lib/${folder} gets a rank here`);
    t.ok(checked > 50, `${checked} relative imports inside lib/${folder} read`);
    t.same(upward, [], 'no import reaches its own rank or above');
  });
}

/** native/src's folders by rank: an #include "folder/..." names its own folder or a lower one. */
const NATIVE_RANKS: Record<string, number> = { core: 0, math: 1, loss: 1, parallel: 1, model: 2, bind: 3 };

t.test('native/src includes point downward', async (t) => {
  const folders = fs.readdirSync(NATIVE_SRC).filter((name) => fs.statSync(path.join(NATIVE_SRC, name)).isDirectory());
  t.same(folders.filter((name) => NATIVE_RANKS[name] === undefined), [], 'a new folder of native/src gets a rank here');
  const upward: string[] = [];
  let checked = 0;
  for (const folder of folders) {
    for (const name of fs.readdirSync(path.join(NATIVE_SRC, folder))) {
      fs.readFileSync(path.join(NATIVE_SRC, folder, name), 'utf8').split('\n').forEach((line, i) => {
        const match = /^#include "([a-z_]+)\//.exec(line);
        if (!match) return;
        checked++;
        const to = match[1]!;
        if (to !== folder && !(NATIVE_RANKS[to]! < NATIVE_RANKS[folder]!)) upward.push(`native/src/${folder}/${name}:${i + 1} includes ${to}/ (rank ${NATIVE_RANKS[to]}) from ${folder}/ (rank ${NATIVE_RANKS[folder]})`);
      });
    }
  }
  t.ok(checked > 50, `${checked} includes read`);
  t.same(upward, [], 'no include reaches a folder of its own rank or above');
});
