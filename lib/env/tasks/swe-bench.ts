/**
 * SWE-bench and SWE-rebench rows as Tasks. FAIL_TO_PASS / PASS_TO_PASS arrive as JSON-encoded
 * string lists in the original files, or as arrays. The test command and log format come from
 * the caller's override, the row's install_config (SWE-rebench), or the harness's spec for the
 * repository (swe-bench-specs.ts); the directives (the test patch's files) are appended quoted.
 * Grading restores the files the test patch touches, applies it, and runs that command.
 * SWE-rebench-V2's rows (their images are swerebenchv2/…) run as its own harness runs them.
 */
import { invalidArg } from '../../errors.js';
import { optionsParser, type Infer } from '../../schema.js';
import { patchedPaths } from '../patch-files.js';
import { LOG_PARSER_NAMES, sweBenchSpec, testDirectives, withDirectives } from './swe-bench-specs.js';
import type { Task } from '../task.js';

export interface SweBenchOptions {
  /** The test command, overriding the row's and the built-in one; the test files are appended. */
  testCommand?: string;
  /** The image when a row names none; `{id}` is SWE-bench's image id for the instance. */
  imageTemplate?: string;
}

const STRING_LIST = { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] } as const;

/** A SWE-bench / SWE-rebench row: the fields read here; any others ride along. */
const ROW_SCHEMA = {
  type: 'object',
  additionalProperties: true,
  required: ['instance_id', 'problem_statement', 'test_patch', 'FAIL_TO_PASS', 'PASS_TO_PASS'],
  properties: {
    instance_id: { type: 'string', minLength: 1 },
    problem_statement: { type: 'string' },
    test_patch: { type: 'string', minLength: 1 },
    FAIL_TO_PASS: STRING_LIST,
    PASS_TO_PASS: STRING_LIST,
    patch: { type: 'string' },
    repo: { type: 'string' },
    base_commit: { type: 'string' },
    version: { anyOf: [{ type: 'string' }, { type: 'number' }] },
    docker_image: { type: 'string' },
    image_name: { type: 'string' },
    image: { type: 'string' },
    log_parser: { type: 'string' },
    install_config: {
      type: 'object',
      properties: { test_cmd: STRING_LIST, log_parser: { type: 'string' } },
    },
  },
} as const;
export type SweBenchRow = Infer<typeof ROW_SCHEMA>;

const parseRow = optionsParser(ROW_SCHEMA);

export const SWE_BENCH_IMAGE_TEMPLATE = 'swebench/sweb.eval.x86_64.{id}:latest';

/**
 * SWE-rebench-V2's images (docker.io/swerebenchv2/<name>:<number>-<commit>). Its harness
 * (SWE-rebench-V2, scripts/eval.py) runs them unlike SWE-bench's: the repository at /<name>, no
 * environment activated, and a row resolved only when exactly its listed tests pass.
 */
const REBENCH_V2_IMAGE = /(^|\/)swerebenchv2\//;

function stringList(value: string | string[], field: string): string[] {
  if (Array.isArray(value)) return value;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw invalidArg(field, 'is a string but not a JSON-encoded list', 'give a list of test ids or its JSON encoding');
  }
  if (!Array.isArray(parsed) || parsed.some((x) => typeof x !== 'string')) {
    throw invalidArg(field, 'must encode a list of strings');
  }
  return parsed as string[];
}

// SWE-bench's images keep the repository's environment in conda's "testbed" env, activated by
// its eval scripts; every command here gets it on PATH instead.
export const SWE_BENCH_IMAGE_PATH = '/opt/miniconda3/envs/testbed/bin:/opt/miniconda3/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export function sweBenchTask(value: unknown, options: SweBenchOptions = {}): Task {
  const row = parseRow(value, 'row');
  const version = row.version === undefined ? undefined : String(row.version);
  const spec = sweBenchSpec(row.repo, version);
  const imageId = row.instance_id.replace(/__/g, '_1776_').toLowerCase();
  const image = row.docker_image ?? row.image_name ?? row.image ?? (options.imageTemplate ?? SWE_BENCH_IMAGE_TEMPLATE).replace('{id}', imageId);
  const rebenchV2 = REBENCH_V2_IMAGE.test(image);
  if (rebenchV2 && !/^[^/]+\/[^/]+$/.test(row.repo ?? '')) {
    throw invalidArg('row.repo', `is ${JSON.stringify(row.repo ?? null)}: a SWE-rebench-V2 row's repository (owner/name) says where its image keeps it (/name)`, 'give the row as the dataset has it');
  }
  const configured = row.install_config?.test_cmd;
  const configuredList = configured === undefined ? undefined : Array.isArray(configured) ? configured : [configured];
  // SWE-rebench's harness runs its test command under a UTF-8 locale; SWE-rebench-V2's runs every
  // command of the list in order, under `set -e`, as the row gives them.
  const rowCommand = configuredList === undefined || configuredList.length === 0
    ? undefined
    : rebenchV2 ? ['set -e', ...configuredList].join('\n') : `LANG=C.UTF-8 LC_ALL=C.UTF-8 ${configuredList[configuredList.length - 1]}`;
  const command = options.testCommand ?? rowCommand ?? spec?.command;
  if (command === undefined) {
    throw invalidArg(
      'row.repo',
      `is ${JSON.stringify(row.repo ?? null)}, a repository with no built-in SWE-bench test command, and the row has no install_config.test_cmd`,
      'give one: --test-command "pytest -rA" (tasks.testCommand in a config, testCommand to loadTasks)',
    );
  }
  const parserName = row.install_config?.log_parser ?? row.log_parser;
  let logFormat = spec?.logFormat ?? 'pytest';
  if (parserName !== undefined) {
    const known = LOG_PARSER_NAMES[parserName];
    if (!known) throw invalidArg(row.install_config?.log_parser !== undefined ? 'row.install_config.log_parser' : 'row.log_parser', `is ${JSON.stringify(parserName)}, a parser swerl does not have`, `use one of ${Object.keys(LOG_PARSER_NAMES).join(', ')}`);
    logFormat = known;
  }
  // SWE-rebench-V2 runs its command as it is; the others name the test patch's files to run.
  let testCommand = command;
  if (!rebenchV2) {
    const directives = testDirectives(row.test_patch, row.repo);
    if (directives.length === 0) throw invalidArg('row.test_patch', 'touches no test file to run', 'check the row: its test patch only changes data files');
    testCommand = withDirectives(command, directives);
  }
  return {
    id: row.instance_id,
    source: 'swe-bench',
    problemStatement: row.problem_statement,
    image,
    ...(/(^|\/)sweb\.eval\./.test(image) ? { env: { PATH: SWE_BENCH_IMAGE_PATH } } : {}),
    workdir: rebenchV2 ? `/${row.repo!.split('/')[1]}` : '/testbed',
    testCommand,
    logFormat,
    ...(spec?.harnessFiles ? { harnessFiles: spec.harnessFiles } : {}),
    hiddenTests: { kind: 'patch', patch: row.test_patch, paths: patchedPaths(row.test_patch, { field: 'row.test_patch' }) },
    resolution: {
      rule: 'swe-bench',
      failToPass: stringList(row.FAIL_TO_PASS, 'row.FAIL_TO_PASS'),
      passToPass: stringList(row.PASS_TO_PASS, 'row.PASS_TO_PASS'),
      ...(rebenchV2 ? { exact: true } : {}),
    },
    ...(row.patch ? { goldPatch: row.patch } : {}),
    metadata: { repo: row.repo, baseCommit: row.base_commit, ...(version !== undefined ? { version } : {}) },
  };
}
