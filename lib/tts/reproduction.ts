/**
 * The reproduction half of the execution-based verifier (R2E-Gym, DeepSWE): a test-writing
 * episode per task (SweEnv's 'reproduce' goal: the same tools, a prompt asking for tests that
 * fail now because of the issue) writes new test files; they run at the base and against every
 * candidate, each in a fresh sandbox. A test that passes at the base reproduces nothing, and
 * one that fails on every candidate tells none apart: both are discarded. A candidate's score
 * is how many of the kept tests pass with it.
 */
import { runRollouts } from '../agent/rollout.js';
import type { AgentLoopOptions } from '../agent/agent-loop.js';
import type { TestLogFormat } from '../env/env.js';
import { shellQuote, type SandboxBackend } from '../env/sandbox/sandbox.js';
import { SweEnv } from '../env/swe-env.js';
import { patchBlocks, patchFiles } from '../env/patch-files.js';
import type { Task } from '../env/task.js';
import type { AgentPolicy } from '../types/policy.js';
import type { Slots } from '../util/bounded.js';
import { testRuns, type TestRunOptions } from './test-run.js';

/** The written tests: the new files of the writer's patch, and those of them the runner runs. */
export interface WrittenTests {
  /** The part of the writer's patch that adds new files (its edits of existing files dropped). */
  patch: string;
  /** Every new file (helpers too: a test may import them). */
  files: string[];
  /** The new files that are tests, by name (test_*.py, *_test.py; *test*.js/mjs/cjs/ts). */
  testFiles: string[];
}

const PYTHON_TEST = /(^|\/)(test_[^/]*|[^/]*_test)\.py$/;
const NODE_TEST = /(^|\/)[^/]*test[^/]*\.(js|mjs|cjs|ts|mts|cts)$/i;

/** The new files of a test writer's patch (the tests it wrote), by the task's test runner. */
export function writtenTests(task: Task, writerPatch: string): WrittenTests {
  const added = patchBlocks(writerPatch).map((block) => ({ block, file: patchFiles(block)[0]! })).filter(({ file }) => file.oldPath === null && file.newPath !== null);
  const files = added.map(({ file }) => file.newPath!);
  const isTest = task.logFormat === 'node-tap' ? NODE_TEST : PYTHON_TEST;
  return { patch: added.map(({ block }) => block).join(''), files, testFiles: files.filter((f) => isTest.test(f)) };
}

/**
 * How the written tests run: `template` with {files} replaced by the test files, else by the
 * task's runner — node's test runner (TAP) for node tasks, and pytest for the others, invoked
 * as the task's own command invokes it (its text up to "pytest", else `python -m pytest`).
 */
export function reproductionCommand(task: Task, testFiles: readonly string[], template?: string): { command: string; logFormat: TestLogFormat } {
  const files = testFiles.map(shellQuote).join(' ');
  const logFormat: TestLogFormat = task.logFormat === 'node-tap' ? 'node-tap' : 'pytest';
  if (template !== undefined) return { command: template.replaceAll('{files}', files), logFormat };
  if (logFormat === 'node-tap') return { command: `node --test --test-reporter=tap ${files}`, logFormat };
  const pytest = /^.*?\bpytest\b/.exec(task.testCommand)?.[0] ?? 'python -m pytest';
  return { command: `${pytest} -rA -p no:cacheprovider ${files}`, logFormat };
}

export interface ReproductionResult {
  /** The test files run (empty: the writer wrote none, and every score is 0). */
  files: string[];
  /** The tests kept: failing at the base, passing with at least one candidate. */
  tests: string[];
  discarded: { passAtBase: string[]; failEverywhere: string[] };
  /** For each patch, how many kept tests pass with it. */
  passes: number[];
  note?: string;
}

export async function reproductionScores(
  backend: SandboxBackend,
  task: Task,
  written: WrittenTests,
  patches: readonly string[],
  options: TestRunOptions & { slots: Slots; command?: string },
): Promise<ReproductionResult> {
  const none = (note: string): ReproductionResult => ({ files: written.testFiles, tests: [], discarded: { passAtBase: [], failEverywhere: [] }, passes: patches.map(() => 0), note });
  if (written.testFiles.length === 0) return none('the test writer wrote no new test file');
  const { command, logFormat } = reproductionCommand(task, written.testFiles, options.command);
  const [base, ...runs] = await testRuns(backend, task, ['', ...patches], { tests: { patch: written.patch, files: written.files }, command, logFormat }, options);
  const passed = (statuses: ReadonlyMap<string, string> | null) => new Set(statuses ? [...statuses].filter(([, s]) => s === 'PASSED').map(([id]) => id) : []);
  const atBase = passed(base!.statuses);
  const byCandidate = runs.map((run) => passed(run.statuses));
  const seen = new Set([...(base!.statuses?.keys() ?? []), ...runs.flatMap((run) => [...(run.statuses?.keys() ?? [])])]);
  const tests: string[] = [];
  const discarded: ReproductionResult['discarded'] = { passAtBase: [], failEverywhere: [] };
  for (const id of [...seen].sort()) {
    if (atBase.has(id)) discarded.passAtBase.push(id);
    else if (byCandidate.some((p) => p.has(id))) tests.push(id);
    else discarded.failEverywhere.push(id);
  }
  const passes = byCandidate.map((p) => tests.filter((id) => p.has(id)).length);
  const note = seen.size === 0 ? `the written tests reported no results (${base!.statuses ? command : base!.reason})` : tests.length === 0 ? 'every written test passes at the base or fails on every candidate' : undefined;
  return { files: written.testFiles, tests, discarded, passes, ...(note ? { note } : {}) };
}

export interface TestWriterOptions {
  agent: AgentLoopOptions;
  concurrency: number;
  retries: number;
  seed: number;
  label?: string;
  signal?: AbortSignal;
}

/** One test-writing episode per task: the writer's patch and the tokens it sampled, in task order. */
export async function writeReproductionTests(writer: AgentPolicy, tasks: readonly Task[], backend: SandboxBackend, options: TestWriterOptions): Promise<{ patch: string; tokens: number }[]> {
  const items = tasks.map((task, i) => ({
    taskId: task.id,
    task,
    group: i,
    sample: 0,
    seed: (options.seed + 104_729 + i) * 1024,
    makeEnv: () => new SweEnv(task, backend, { goal: 'reproduce', maxSteps: options.agent.maxTurns, ...(options.label !== undefined ? { label: options.label } : {}) }),
  }));
  const trajectories = await runRollouts(items, writer, { concurrency: options.concurrency, generationConcurrency: 0, retries: options.retries, agent: options.agent }, options.signal ? { signal: options.signal } : {});
  const byTask = tasks.map(() => ({ patch: '', tokens: 0 }));
  for (const t of trajectories) byTask[t.group] = { patch: t.patch ?? '', tokens: t.responseTokens };
  return byTask;
}
