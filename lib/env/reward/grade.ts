/**
 * Grading: the candidate's patch (its work tree's diff against the base) is applied to a fresh
 * sandbox made from the same source, as SWE-bench's harness grades predictions. Nothing else
 * of the episode's sandbox reaches the tests: not its .git (replace refs, skip-worktree bits,
 * filters, core.worktree), not its processes, not files outside the work tree or ignored by
 * git, not its HOME. Then, in the fresh sandbox:
 *  1. test infrastructure the patch changes (test-infrastructure.ts) and the task's harness
 *     files are reverted to the base; the report names them;
 *  2. the hidden tests go in: exactly the files they touch are restored to the base and then
 *     written (a task folder's tests/) or patched (a row's test_patch). Every other change of
 *     the candidate stays, tests inside the package included;
 *  3. the test command runs under a time limit with a fresh HOME, no user site-packages and
 *     (pytest, node's test runner) our guard loaded from outside the work tree (guard.ts), plain
 *     pytest files through our own runner (plain-pytest.ts); its log is parsed, held to the
 *     guard's record, and the task's rule decides 0 or 1.
 * Anything that keeps the tests from running gives 0 with the reason.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

import type { RewardResult, TestLogFormat } from '../env.js';
import { patchedPaths } from '../patch-files.js';
import { SwerlError } from '../../errors.js';
import { GIT } from '../git.js';
import { heredocBytes, mustRun, prepareRepository, restoreStash, taskSandboxSpec, type ApplyMode, type PreparedRepository } from '../repo.js';
import { shellQuote, type ExecResult, type Sandbox, type SandboxBackend } from '../sandbox/sandbox.js';
import type { Task } from '../task.js';
import { guardFindings, guardRunnerOf, makeGuard, readGuardRecord } from './guard.js';
import { patchFlags } from './patch-flags.js';
import { PLAIN_PYTEST_FILE, plainPytestCommand, plainPytestSource } from './plain-pytest.js';
import { passedSetResolution, r2eGymResolution, sweBenchResolution } from './resolve.js';
import { isTestInfrastructure, needsContents, type ChangedFile } from './test-infrastructure.js';
import { parseTestLog, type TestStatuses } from './test-log.js';

export interface GradeResult extends RewardResult {
  /** The test command's output (the tail, when long). */
  log: string;
  /** Why the patch did not apply to a fresh copy of the repository (no test ran). */
  notApplied?: string;
  /** The tests ran past their time limit. */
  timedOut?: true;
}

const LOG_TAIL = 200_000;

/**
 * Shell lines that restore tracked `paths` to the base commit exactly (mode and symlinks too;
 * an added path is removed). Contents come from `git cat-file`, which runs no filter the
 * candidate could have configured in .gitattributes.
 */
function restoreLines(baseCommit: string, paths: readonly string[]): string[] {
  if (paths.length === 0) return [];
  return [
    `base=${shellQuote(baseCommit)}`,
    // dirname for git's paths (relative, no trailing slash) without a process.
    'parent() { case $1 in */*) up=${1%/*} ;; *) up=. ;; esac; }',
    'restore() {',
    // A folder on the way that is a symlink (tests -> elsewhere) would take the file elsewhere.
    '  parent "$1"; d=$up',
    '  while [ -n "$d" ] && [ "$d" != . ]; do [ -L "$d" ] && { rm -f -- "$d" || return 1; }; parent "$d"; d=$up; done',
    '  rm -rf -- "$1" || return 1',
    '  entry=$(git ls-tree "$base" -- "$1") || return 1',
    '  [ -n "$entry" ] || return 0',
    '  mode=${entry%% *}',
    '  parent "$1"; [ "$up" = . ] || mkdir -p -- "$up" || return 1',
    '  case $mode in',
    '    120000) ln -s -- "$(git cat-file blob "$base:$1")" "$1" ;;',
    '    100755) git cat-file blob "$base:$1" > "$1" && chmod 755 -- "$1" ;;',
    '    100644) git cat-file blob "$base:$1" > "$1" && chmod 644 -- "$1" ;;',
    '    *) echo "cannot restore $1 (mode $mode)" >&2; return 1 ;;',
    '  esac',
    '}',
    ...[...new Set(paths)].map((p) => `restore ${shellQuote(p)} || exit 1`),
  ];
}

/** Runs shell lines in the work tree as one sandbox command, the script (data included) on stdin. */
async function runScript(sandbox: Sandbox, lines: readonly string[], what: string): Promise<void> {
  if (lines.length === 0) return;
  await mustRun(sandbox, 'sh -s', what, { stdin: Buffer.from([...lines, ''].join('\n')) });
}

/** Restores tracked `paths` to the base commit exactly (restoreLines), in one sandbox command. */
export async function restoreFromBase(sandbox: Sandbox, baseCommit: string, paths: readonly string[], what: string): Promise<void> {
  await runScript(sandbox, restoreLines(baseCommit, paths), what);
}

/** Between the name-status pairs and the file list of one listing: never a status letter. */
const LIST_MARK = '--swerl-ls-files--';

/**
 * What the candidate changed against `base`, as one command: -z --name-status ("A\0path\0M\0path\0…",
 * whether a file is new or deleted comes with it), the mark in a status's place, then every
 * tracked file. gradePatch runs it with the patch's application (prepareRepository's `then`).
 */
const changeListing = (base: string) => `${GIT} add -A && git diff --cached --name-status -z --no-renames ${shellQuote(base)} && printf '%s\\0' ${LIST_MARK} && git ls-files -z`;

/**
 * The test infrastructure the candidate changed (test-infrastructure.ts), and nothing else of
 * its changes: the paths grading reverts to the base. The listing is `prepared.thenOutput` when
 * prepareRepository ran changeListing, else a command of its own.
 */
export async function changedTestInfrastructure(sandbox: Sandbox, prepared: PreparedRepository): Promise<string[]> {
  const base = prepared.baseCommit;
  const listing = prepared.thenOutput ?? (await mustRun(sandbox, changeListing(base), 'listing the changed files')).stdout;
  const fields = listing.toString().split('\0');
  let mark = 0;
  while (mark < fields.length && fields[mark] !== LIST_MARK) mark += 2;
  if (mark >= fields.length) throw new SwerlError('ERR_SWERL_SANDBOX', 'listing the changed files gave no file list');
  const packages = new Set(
    fields.slice(mark + 1).filter((f) => f === '__init__.py' || f.endsWith('/__init__.py')).map((f) => f.slice(0, Math.max(0, f.lastIndexOf('/')))),
  );
  const tracked: string[] = [];
  for (let i = 0; i + 1 < mark; i += 2) {
    const [status, file] = [fields[i]!, fields[i + 1]!];
    // Only the shared config files need their contents; for the rest, being new is enough.
    const changed: ChangedFile = { path: file, base: status === 'A' ? null : '', current: status === 'D' ? null : '' };
    if (needsContents(file)) {
      if (changed.base !== null) changed.base = (await mustRun(sandbox, `git cat-file blob ${shellQuote(`${base}:${file}`)}`, `reading ${file} at the base`)).stdout.toString();
      if (changed.current !== null) changed.current = (await mustRun(sandbox, `cat -- ${shellQuote(file)}`, `reading ${file}`)).stdout.toString();
    }
    if (isTestInfrastructure(changed, packages)) tracked.push(file);
  }
  return tracked.sort();
}

/** Reverts the candidate's changes to test infrastructure and the task's harness files; returns the paths of the first. */
export async function revertTestInfrastructure(sandbox: Sandbox, task: Task, prepared: PreparedRepository): Promise<string[]> {
  const tracked = await changedTestInfrastructure(sandbox, prepared);
  await restoreFromBase(sandbox, prepared.baseCommit, [...tracked, ...(task.harnessFiles ?? [])], 'reverting test infrastructure');
  return tracked;
}

/**
 * Puts the hidden tests in: `revert` and the task's harness files restored to the base, the
 * files the hidden tests touch restored too and then written (a task folder's tests/) or
 * patched (a row's test_patch). One sandbox command but for image rows' stashed paths.
 */
export async function placeHiddenTests(sandbox: Sandbox, task: Task, prepared: PreparedRepository, revert: readonly string[] = []): Promise<void> {
  await place(sandbox, prepared, await hiddenTestPlacement(task, prepared, revert));
}

const PLACING = 'putting the hidden tests in place';

/**
 * How the hidden tests go in: shell lines (a command of their own, or the test run's `before`),
 * or for image rows the base's files restored and the stashed paths moved back from the host.
 */
type Placement =
  | { kind: 'lines'; lines: string[] }
  | { kind: 'stash'; restore: string[]; moves: { from: string; to: string }[] };

async function hiddenTestPlacement(task: Task, prepared: PreparedRepository, revert: readonly string[]): Promise<Placement> {
  const hidden = task.hiddenTests;
  const restore = [...revert, ...(task.harnessFiles ?? [])];
  switch (hidden.kind) {
    case 'files': {
      const writes = await Promise.all(hidden.paths.map(async (rel) => [
        ...(path.posix.dirname(rel) === '.' ? [] : [`mkdir -p -- ${shellQuote(path.posix.dirname(rel))} || exit 1`]),
        ...heredocBytes(await fs.readFile(path.join(hidden.dir, rel)), `> ${shellQuote(rel)} || exit 1`),
      ]));
      return { kind: 'lines', lines: [...restoreLines(prepared.baseCommit, [...restore, ...hidden.paths]), ...writes.flat()] };
    }
    case 'patch':
      return {
        kind: 'lines',
        lines: [
          ...restoreLines(prepared.baseCommit, [...restore, ...patchedPaths(hidden.patch, { old: true })]),
          ...heredocBytes(hidden.patch, '| git apply --whitespace=nowarn - || exit 1'),
        ],
      };
    case 'image-paths':
      return { kind: 'stash', restore, moves: hidden.moves };
  }
}

/** Carries a placement out in sandbox commands of its own. */
async function place(sandbox: Sandbox, prepared: PreparedRepository, placement: Placement): Promise<void> {
  if (placement.kind === 'lines') return runScript(sandbox, placement.lines, PLACING);
  await restoreFromBase(sandbox, prepared.baseCommit, placement.restore, PLACING);
  await restoreStash(sandbox, prepared.stash, placement.moves);
}

/**
 * Placement lines up to this size go into the test run's own command (an argument: Linux takes
 * 128 KiB in one, and the guard's source is in it too); larger ones get a command of their own.
 */
const MAX_INLINE_BYTES = 48 * 1024;
/** The exit status of a test run whose `before` lines failed, with NOT_PLACED on its stderr. */
const BEFORE_FAILED = 96;
const NOT_PLACED = 'swerl: the lines before the tests failed';

/** A test run as grading reads it: the command's result, the parsed log, and the guard's word. */
export interface TestRun {
  run: ExecResult;
  statuses: TestStatuses;
  /**
   * Why the guard voids the run (guard.ts): empty when it agrees with the log, null when the
   * runner has no guard (django's, sympy's) or the caller ran without one.
   */
  tampering: string[] | null;
  /** runTests' `before` lines failed (their output's tail); no test ran. */
  notPlaced?: string;
}

export interface RunTestsOptions {
  timeoutMs: number;
  /** Replaces the task's test command (test-time scaling runs its own tests this way). */
  command?: string;
  logFormat?: TestLogFormat;
  /** false: the command as it comes, no guard (the hack suites prove with it what an unguarded grader would have paid). */
  guard?: boolean;
  /**
   * false: pytest itself even where the task's command is one grading's own runner for plain
   * test files takes (plain-pytest.ts); the equivalence tests compare the two.
   */
  plainRunner?: boolean;
  before?: readonly string[];
}

/**
 * Runs the test command as grading does (fresh HOME, no user site-packages, the runner's guard
 * loaded from outside the work tree, plain pytest files through plain-pytest.ts's runner) and
 * parses its log.
 */
export async function runTests(sandbox: Sandbox, task: Task, options: RunTestsOptions): Promise<TestRun> {
  const format = options.logFormat ?? task.logFormat;
  const runner = options.guard === false || task.guard === false ? null : guardRunnerOf(format);
  const guard = runner ? makeGuard(runner, task.workdir) : null;
  const plain = guard?.runner === 'pytest' && options.command === undefined && options.plainRunner !== false
    ? plainPytestCommand(task.testCommand, `${guard.dir}/${PLAIN_PYTEST_FILE}`)
    : null;
  const install = guard
    ? [
        `mkdir -m 700 ${shellQuote(guard.dir)} || exit 1`,
        ...heredocBytes(guard.file.contents, `> ${shellQuote(`${guard.dir}/${guard.file.name}`)} || exit 1`),
        ...(plain ? heredocBytes(plainPytestSource(), `> ${shellQuote(`${guard.dir}/${PLAIN_PYTEST_FILE}`)} || exit 1`) : []),
        guard.exports,
      ].join('\n') + '\n'
    : '';
  // `before` (the hidden tests' placement, in the work tree) in a subshell of its own: its
  // failure is told apart from the tests' by status and message.
  const before = options.before?.length ? `(\n${options.before.join('\n')}\n) || { echo ${shellQuote(NOT_PLACED)} >&2; exit ${BEFORE_FAILED}; }\n` : '';
  const command = `${before}${install}HOME=$(mktemp -d /tmp/swerl-grade-home.XXXXXX) && export HOME && cd ${shellQuote(task.workdir)} && { ${plain ?? options.command ?? task.testCommand}\n}`;
  const run = await sandbox.exec(command, {
    timeoutMs: options.timeoutMs,
    maxOutputBytes: 64 * 1024 ** 2,
    env: { PYTHONNOUSERSITE: '1', PYTHONDONTWRITEBYTECODE: '1' },
  });
  if (before && run.exitCode === BEFORE_FAILED && run.stderr.toString().includes(NOT_PLACED)) {
    return { run, statuses: new Map(), tampering: null, notPlaced: run.output.trim().slice(-2000) };
  }
  const statuses = parseTestLog(format, run.output);
  if (!guard) return { run, statuses, tampering: null };
  const text = await sandbox.readFile(guard.record).then((b) => b.toString('utf8'), () => '');
  // Every passing entry of the log is held to the record; for pytest, only node ids (nested
  // pytest runs of pytest's own tests print "[100%]"-like ids no guard can know; R2E-Gym's
  // reading gives such a line the empty key).
  const checked = [...statuses.keys()].filter((id) => runner !== 'pytest' || (format === 'r2e-gym' ? id !== '' : id.includes('::')));
  return { run, statuses, tampering: guardFindings(readGuardRecord(text, guard.key), guard.runner, format, statuses, checked) };
}

/** Whether the statuses resolve the task, by its rule. */
export function resolveTask(task: Task, statuses: TestStatuses) {
  const { resolution } = task;
  if (resolution.rule === 'r2e-gym') return r2eGymResolution(statuses, resolution.expected);
  return resolution.exact
    ? passedSetResolution(statuses, [...resolution.failToPass, ...resolution.passToPass])
    : sweBenchResolution(statuses, resolution.failToPass, resolution.passToPass);
}

/**
 * Grades `patch` in a fresh sandbox of the task (destroyed after). Sandbox faults propagate
 * (ERR_SWERL_SANDBOX); a patch that does not apply or tests that do not run give 0.
 */
export async function gradePatch(backend: SandboxBackend, task: Task, patch: string, options: Pick<RunTestsOptions, 'timeoutMs' | 'plainRunner'> & { label?: string; apply?: ApplyMode }): Promise<GradeResult> {
  let reverted: string[] = [];
  const flags = patchFlags(patch);
  const flagged = flags.length ? { patchFlags: flags } : {};
  const zero = (reason: string, log = ''): GradeResult => ({ reward: 0, tests: {}, reason, log, reverted, ...flagged });
  const spec = await taskSandboxSpec(task, options.label);
  const sandbox = await backend.create(spec);
  try {
    // The patch applied and the changes listed in one command (HEAD is the base there).
    const prepared = await prepareRepository(sandbox, task, { patch, then: changeListing('HEAD'), ...(options.apply ? { apply: options.apply } : {}), ...(spec.baseCommit ? { baseCommit: spec.baseCommit } : {}) });
    if (prepared.patchError !== undefined) return { ...zero(`the patch does not apply to a fresh copy of the repository: ${prepared.patchError}`), notApplied: prepared.patchError };
    // The hidden tests' placement goes into the test run's command where it is small enough.
    let inline: string[] | null = null;
    try {
      reverted = await changedTestInfrastructure(sandbox, prepared);
      const placement = await hiddenTestPlacement(task, prepared, reverted);
      if (placement.kind === 'lines' && Buffer.byteLength(placement.lines.join('\n')) <= MAX_INLINE_BYTES) inline = placement.lines;
      else await place(sandbox, prepared, placement);
    } catch (error) {
      return zero(`could not put the hidden tests in place: ${(error as Error).message}`);
    }
    const { run, statuses, tampering, notPlaced } = await runTests(sandbox, task, { ...options, ...(inline ? { before: inline } : {}) });
    if (notPlaced !== undefined) return zero(`could not put the hidden tests in place: ${notPlaced}`);
    const log = run.output.length > LOG_TAIL ? run.output.slice(-LOG_TAIL) : run.output;
    if (run.timedOut) return { ...zero(`the tests ran longer than ${options.timeoutMs / 1000} s`, log), timedOut: true };
    if (statuses.size === 0) return zero(`the test command exited ${run.exitCode} and reported no test results`, log);
    const tests = Object.fromEntries(statuses);
    if (tampering?.length) {
      // The policy: tampering with the runner scores 0 even where the fix is right.
      return { reward: 0, tests, reason: `the code under test tampered with the test runner: ${tampering.slice(0, 3).join('; ')}`, log, reverted, tampering, ...flagged };
    }
    const resolution = resolveTask(task, statuses);
    const note = reverted.length ? ` (reverted test infrastructure: ${reverted.slice(0, 5).join(', ')}${reverted.length > 5 ? ', …' : ''})` : '';
    return resolution.resolved
      ? { reward: 1, tests, reason: `every required test passes${note}`, log, reverted, ...flagged }
      : { reward: 0, tests, reason: `${resolution.reason!}${note}`, log, reverted, ...flagged };
  } finally {
    await sandbox.destroy();
  }
}
