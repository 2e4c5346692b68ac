/**
 * The task's repository inside a sandbox: what a sandbox starts from, its base commit (created
 * for swerl folders, which carry no .git), the hidden files moved out of reach (R2E-Gym
 * images), and the patch — the working tree's diff against the base, everything staged so new
 * files count.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';

import { SwerlError } from '../errors.js';
import { baseSnapshot } from './base-commit.js';
import { GIT } from './git.js';
import { shellQuote, type Sandbox, type SandboxSpec } from './sandbox/sandbox.js';
import { checkoutWorkTree } from './repositories.js';
import type { Task } from './task.js';


export interface PreparedRepository {
  /** The commit the patch is taken against. */
  baseCommit: string;
  /** Hidden paths held outside the sandbox until grading (tar archives, by source path). */
  stash: Map<string, Buffer>;
  /** Why the patch given to prepareRepository did not apply (absent when it did, or none was given). */
  patchError?: string;
  /** The standard output of prepareRepository's `then` command (absent when it did not run or failed). */
  thenOutput?: Buffer;
}

/** Between the base commit's line and the `then` command's output: never a commit id. */
const THEN_MARK = '--swerl-then--';

/**
 * Script lines that decode `data` from a heredoc and hand it on (`tail`: "> file || exit",
 * "| git apply - || exit 1"): bytes of any kind inside a script, since base64 holds no line a
 * heredoc could end at ('_' is not in its alphabet).
 */
export function heredocBytes(data: string | Uint8Array, tail: string): string[] {
  return [`base64 -d <<'SWERL_EOF' ${tail}`, Buffer.from(data).toString('base64'), 'SWERL_EOF'];
}

export async function mustRun(sandbox: Sandbox, command: string, what: string, options: { stdin?: Uint8Array; timeoutMs?: number } = {}) {
  const result = await sandbox.exec(command, { timeoutMs: options.timeoutMs ?? 120_000, ...(options.stdin ? { stdin: options.stdin } : {}) });
  if (result.exitCode !== 0) {
    throw new SwerlError('ERR_SWERL_SANDBOX', `${what} failed (exit ${result.exitCode}): ${result.output.trim().slice(-2000)}`);
  }
  return result;
}

/** A task's sandbox spec, and the base commit its overlay lays in (when it has one). */
export interface TaskSandboxSpec extends SandboxSpec {
  baseCommit?: string;
}

/**
 * What a sandbox for the task starts from: its folder (with its base commit made once for every
 * sandbox: base-commit.ts), its clone's checkout, or its image.
 */
export async function taskSandboxSpec(task: Task, label?: string): Promise<TaskSandboxSpec> {
  const repoDir = task.repoDir ?? (task.checkout ? await checkoutWorkTree(task.checkout) : undefined);
  // Not where hidden paths are moved out first (R2E-Gym's layout): its base commit lacks them.
  const premade = task.repoDir !== undefined && task.hiddenTests.kind !== 'image-paths' && !existsSync(path.join(task.repoDir, '.git'));
  const base = premade ? await baseSnapshot(task.repoDir!, task.gitignore) : null;
  return {
    ...(repoDir !== undefined ? { repoDir } : { image: task.image! }),
    ...(base ? { overlay: base.overlay, baseCommit: base.commit } : {}),
    workdir: task.workdir,
    ...(task.env ? { env: task.env } : {}),
    ...(label !== undefined ? { label } : {}),
  };
}

/** The exit status the prepare script gives when the patch does not apply (git apply's is 1). */
const PATCH_DOES_NOT_APPLY = 97;
/** ... and when its `then` command fails. */
const THEN_FAILED = 98;

/**
 * How a patch is applied. `strict`: `git apply` alone (training's grading: the policy's own diff
 * of the work tree always applies so). `harness`: as SWE-bench's harness applies a prediction
 * (run_evaluation.py's GIT_APPLY_CMDS): git apply, then with --3way, then with --reject, then
 * `patch --batch --forward --fuzz=5 -p1`, the tree restored between tries; so a patch that
 * applies only with fuzz counts as applied, as there.
 */
export type ApplyMode = 'strict' | 'harness';

function applyLines(mode: ApplyMode): string[] {
  if (mode === 'strict') return [`git apply --whitespace=nowarn - >&2 || exit ${PATCH_DOES_NOT_APPLY}`];
  return [
    'swerl_patch=$(mktemp) && cat > "$swerl_patch" || exit',
    'swerl_applied=',
    'for swerl_apply in "git apply --verbose" "git apply --verbose --3way" "git apply --verbose --reject" "patch --batch --forward --fuzz=5 -p1 -i"; do',
    '  if $swerl_apply "$swerl_patch" >&2; then swerl_applied=1; break; fi',
    '  git checkout -q -- . 2>/dev/null; git clean -fdq 2>/dev/null',
    'done',
    'rm -f "$swerl_patch"',
    `[ -n "$swerl_applied" ] || exit ${PATCH_DOES_NOT_APPLY}`,
  ];
}

/**
 * Readies the task's repository in a fresh sandbox: hidden paths stashed (image rows), the base
 * commit made or read (`options.baseCommit`: the sandbox was made with it, TaskSandboxSpec), and
 * `options.patch` applied when given (`patchError` says why it did not), as `options.apply` says
 * (default strict). `options.then`, a command run in the same sandbox command once the patch
 * applied (HEAD is the base there), gives its standard output as `thenOutput`.
 */
export async function prepareRepository(sandbox: Sandbox, task: Task, options: { patch?: string; apply?: ApplyMode; baseCommit?: string; then?: string } = {}): Promise<PreparedRepository> {
  const stash = new Map<string, Buffer>();
  if (task.hiddenTests.kind === 'image-paths') {
    for (const { from } of task.hiddenTests.moves) {
      const q = shellQuote(from);
      const archive = await sandbox.exec(`test -e ${q} || exit 3; tar -C "$(dirname ${q})" -cf - "$(basename ${q})"`, {
        maxOutputBytes: 512 * 1024 ** 2,
        timeoutMs: 120_000,
      });
      if (archive.exitCode === 3) continue;
      if (archive.exitCode !== 0) throw new SwerlError('ERR_SWERL_SANDBOX', `cannot stash ${from}: ${archive.stderr.toString().trim()}`);
      stash.set(from, archive.stdout);
      await mustRun(sandbox, `rm -rf -- ${q}`, `removing ${from}`);
    }
  }
  // One exec at most (each is a fresh sandbox process, ~30 ms of CPU): a swerl folder gets its
  // base commit (and the task's .gitignore) unless the sandbox was made with it, a repository
  // keeps its own HEAD; a patch given (a candidate's, at grading) is applied from stdin in the
  // same command.
  const patch = options.patch?.trim() ? options.patch : undefined;
  if (options.baseCommit !== undefined && patch === undefined && options.then === undefined) return { baseCommit: options.baseCommit, stash };
  const script = [
    ...(options.baseCommit !== undefined
      ? []
      : [
          'if ! git rev-parse --verify -q HEAD >/dev/null; then',
          ...(task.gitignore === undefined ? [] : heredocBytes(task.gitignore, '> .gitignore || exit')),
          `git init -q && ${GIT} add -A && ${GIT} commit -q --no-verify --allow-empty -m base || exit`,
          'fi',
          'git rev-parse HEAD || exit',
        ]),
    ...(patch === undefined ? [] : applyLines(options.apply ?? 'strict')),
    ...(options.then === undefined ? [] : [`printf '\\n%s\\n' ${THEN_MARK} || exit`, `( ${options.then}\n) || exit ${THEN_FAILED}`]),
  ].join('\n');
  const result = await sandbox.exec(script, { timeoutMs: 120_000, ...(patch === undefined ? {} : { stdin: Buffer.from(patch) }) });
  const mark = options.then === undefined ? -1 : result.stdout.indexOf(`\n${THEN_MARK}\n`);
  const thenOutput = mark >= 0 ? { thenOutput: result.stdout.subarray(mark + THEN_MARK.length + 2) } : {};
  const baseCommit = options.baseCommit ?? result.stdout.subarray(0, mark >= 0 ? mark : undefined).toString().trim();
  if (result.exitCode === PATCH_DOES_NOT_APPLY && /^[0-9a-f]{40,64}$/.test(baseCommit)) {
    return { baseCommit, stash, patchError: result.stderr.toString().trim().slice(-2000) || 'git apply failed' };
  }
  // The `then` command failing is its caller's to find out (it runs it again alone).
  if (result.exitCode === THEN_FAILED && mark >= 0) return { baseCommit, stash };
  if (result.exitCode !== 0) {
    throw new SwerlError('ERR_SWERL_SANDBOX', `reading or creating the base commit failed (exit ${result.exitCode}): ${result.output.trim().slice(-2000)}`);
  }
  return { baseCommit, stash, ...thenOutput };
}

/** The agent's patch: every change in the work tree against the base, binary-safe. */
export async function workingTreeDiff(sandbox: Sandbox, baseCommit: string): Promise<string> {
  const result = await mustRun(sandbox, `${GIT} add -A && git diff --cached --binary --no-ext-diff --no-textconv ${baseCommit}`, 'taking the diff');
  return result.stdout.toString();
}

/** Applies a patch to the work tree (a gold patch, a candidate's at grading, a test patch). */
export async function applyPatch(sandbox: Sandbox, patch: string, what = 'applying the patch'): Promise<void> {
  await mustRun(sandbox, 'git apply --whitespace=nowarn -', what, { stdin: Buffer.from(patch) });
}

/** Puts stashed paths back where grading expects them. */
export async function restoreStash(sandbox: Sandbox, stash: Map<string, Buffer>, moves: { from: string; to: string }[]): Promise<void> {
  for (const { from, to } of moves) {
    const archive = stash.get(from);
    if (!archive) continue;
    const base = from.split('/').pop()!;
    const parent = to.slice(0, to.lastIndexOf('/')) || '/';
    const restore = `mkdir -p ${shellQuote(parent)} && rm -rf -- ${shellQuote(to)} && tar -C ${shellQuote(parent)} -xf - ` +
      (base !== to.split('/').pop() ? `&& mv -- ${shellQuote(`${parent}/${base}`)} ${shellQuote(to)}` : '');
    await mustRun(sandbox, restore, `restoring ${from} at ${to}`, { stdin: archive });
  }
}
