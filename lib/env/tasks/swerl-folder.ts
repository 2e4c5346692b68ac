/** swerl's own task folders (tasks/README.md): task.json, issue.md, repo/, tests/, gold.patch. */
import fs from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';

import { invalidArg } from '../../errors.js';
import { optionsParser } from '../../schema.js';
import { TEST_LOG_FORMATS } from '../env.js';
import { MAX_ROW_BYTES, decodeUtf8, parseRowText } from './rows.js';
import type { Task } from '../task.js';

const TASK_JSON_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'language', 'difficulty', 'test_command', 'log_format', 'fail_to_pass', 'pass_to_pass'],
  properties: {
    id: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]*$' },
    language: { enum: ['python', 'javascript'] },
    difficulty: { enum: ['easy', 'medium', 'hard'] },
    test_command: { type: 'string', minLength: 1 },
    log_format: { enum: [...TEST_LOG_FORMATS] },
    fail_to_pass: { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1 },
    pass_to_pass: { type: 'array', items: { type: 'string', minLength: 1 } },
    /** Generated tasks (swe-gen) say how they were made and where the bug is; carried as metadata.sweGen. */
    swe_gen: { type: 'object' },
  },
} as const;

const parseTaskJson = optionsParser(TASK_JSON_SCHEMA);

async function filesUnder(dir: string, prefix = ''): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) files.push(...(await filesUnder(path.join(dir, entry.name), rel)));
    else if (entry.isFile()) files.push(rel);
  }
  return files.sort();
}

async function isDirectory(p: string): Promise<boolean> {
  return (await fs.stat(p).catch(() => null))?.isDirectory() ?? false;
}

/**
 * A task file's text, or undefined when there is none; refused by name when larger than a
 * dataset row may be (a task folder holds what one row does) or not UTF-8.
 */
async function readText(file: string, name: string): Promise<string | undefined> {
  const stat = await fs.stat(file).catch(() => null);
  if (!stat?.isFile()) return undefined;
  if (stat.size > MAX_ROW_BYTES) throw invalidArg(name, `is larger than ${MAX_ROW_BYTES / 2 ** 20} MiB, the most a task file may be (a dataset row's bound)`);
  const text = decodeUtf8(await fs.readFile(file));
  if (text === null) throw invalidArg(name, 'is not valid UTF-8');
  return text;
}

/** Whether `dir` is one task folder (it has a task.json). */
export async function isSwerlTaskFolder(dir: string): Promise<boolean> {
  return (await fs.stat(path.join(dir, 'task.json')).catch(() => null))?.isFile() ?? false;
}

/** Loads one task folder; errors name the file and the field. */
export async function loadSwerlTaskFolder(dir: string): Promise<Task> {
  const root = path.resolve(dir);
  const text = await readText(path.join(root, 'task.json'), 'task.json');
  if (text === undefined) throw invalidArg('task.json', 'cannot be read');
  const parsed = parseRowText(text);
  if ('error' in parsed) throw invalidArg('task.json', parsed.error);
  const meta = parseTaskJson(parsed.value, 'task.json');
  if (meta.id !== path.basename(root)) {
    throw invalidArg('task.json.id', `is ${JSON.stringify(meta.id)} but the folder is ${JSON.stringify(path.basename(root))}`, 'make them equal');
  }
  const problemStatement = await readText(path.join(root, 'issue.md'), 'issue.md');
  if (problemStatement === undefined) throw invalidArg('issue.md', 'is missing', 'write the problem statement there');
  const repoDir = path.join(root, 'repo');
  if (!(await isDirectory(repoDir))) throw invalidArg('repo/', 'is missing', 'put the repository at its base state there');
  const testsDir = path.join(root, 'tests');
  const testPaths = (await isDirectory(testsDir)) ? await filesUnder(testsDir) : [];
  const goldPatch = await readText(path.join(root, 'gold.patch'), 'gold.patch');
  const gitignore = await readText(path.join(root, 'gitignore'), 'gitignore');
  if (gitignore !== undefined && existsSync(path.join(repoDir, '.gitignore')))
    throw invalidArg('gitignore', 'and repo/.gitignore both exist', 'keep one: gitignore beside repo/ is what an npm package ships');
  return {
    id: meta.id,
    source: 'swerl',
    problemStatement: problemStatement.trim(),
    repoDir,
    workdir: '/testbed',
    testCommand: meta.test_command,
    logFormat: meta.log_format,
    hiddenTests: { kind: 'files', dir: testsDir, paths: testPaths },
    resolution: { rule: 'swe-bench', failToPass: meta.fail_to_pass, passToPass: meta.pass_to_pass },
    ...(goldPatch !== undefined ? { goldPatch } : {}),
    ...(gitignore !== undefined ? { gitignore } : {}),
    metadata: { language: meta.language, difficulty: meta.difficulty, folder: root, ...(meta.swe_gen !== undefined ? { sweGen: meta.swe_gen } : {}) },
  };
}
