/**
 * One Task type for every source: swerl's own task folders, SWE-bench / SWE-rebench rows and
 * R2E-Gym rows. A task says where the repository comes from, what the agent is told, and how
 * its work is graded.
 */
import type { TestLogFormat, TestStatus } from './env.js';
import type { Checkout } from './repositories.js';

export type TaskSource = 'swerl' | 'swe-bench' | 'r2e-gym';

/** How the hidden tests reach the sandbox, at grading time only. */
export type HiddenTests =
  /** swerl folders: files from a host folder, copied over the work tree (paths relative to it). */
  | { kind: 'files'; dir: string; paths: string[] }
  /** SWE-bench: the test files it touches are reset to the base commit, then it is applied. */
  | { kind: 'patch'; patch: string; paths: string[] }
  /**
   * R2E-Gym images: paths inside the image that are moved out of the sandbox when it starts
   * (held by the harness) and put back at `target` for grading.
   */
  | { kind: 'image-paths'; moves: { from: string; to: string }[] };

export type ResolutionRule =
  /**
   * Every FAIL_TO_PASS and PASS_TO_PASS test passes. `exact`: SWE-rebench-V2's harness, where the
   * tests that pass must be exactly those, no others, test names' timing suffixes stripped.
   */
  | { rule: 'swe-bench'; failToPass: string[]; passToPass: string[]; exact?: boolean }
  | { rule: 'r2e-gym'; expected: Record<string, string> };

export interface Task {
  id: string;
  source: TaskSource;
  /** The issue text the agent is given. */
  problemStatement: string;
  /** A host folder with the repository at its base state (swerl folders). */
  repoDir?: string;
  /**
   * The repository's .gitignore, written into the work tree before its base commit (swerl
   * folders keep it beside repo/ as `gitignore`: npm never packs a file named .gitignore).
   */
  gitignore?: string;
  /** A clone on the host and the commit to check out (dataset rows given a repos folder). */
  checkout?: Checkout;
  /** A container image with the repository at `workdir` (SWE-bench, R2E-Gym). */
  image?: string;
  /** Environment every command in the sandbox gets (e.g. PYTHONPATH for an uninstalled repository). */
  env?: Record<string, string>;
  /** The repository's path inside the sandbox. */
  workdir: string;
  /** Run with `sh -c` in the work tree at grading. */
  testCommand: string;
  /**
   * Files of the test harness itself that the test command runs (django's tests/runtests.py,
   * sympy's bin/test): always restored to the base before grading.
   */
  harnessFiles?: string[];
  logFormat: TestLogFormat;
  /**
   * false: grading runs the tests without the runner's guard, for a runner the guard cannot load
   * into (R2E-Gym's own unittest runners of tornado and pillow, which never start pytest).
   */
  guard?: false;
  hiddenTests: HiddenTests;
  resolution: ResolutionRule;
  /** A patch that resolves the task, when known (validation uses it). */
  goldPatch?: string;
  /** Where it came from and anything else the source carried (language, difficulty, repo…). */
  metadata: Record<string, unknown>;
}

/** A task that could not be loaded, when loading with onError: 'skip'. */
export interface TaskProblem {
  file: string;
  /** 1-based line (JSONL) or row index + 1 (JSON arrays); absent for folders. */
  line?: number;
  message: string;
}

/** A task by id, and the task itself where it is loaded already (a generated task is made when played). */
export interface TaskRef {
  id: string;
  task?: Task;
}

/** What validating a task found (lib/env/validate.ts runs it; curation reads it). */
export interface ValidationRun {
  reward: 0 | 1;
  reason: string;
  durationMs: number;
  /** PASS_TO_PASS tests that did not pass (a base run must have none). */
  brokenPassToPass: string[];
  /** Per-test statuses the grader read (absent when the tests did not run). */
  tests?: Record<string, TestStatus>;
}

export interface TaskValidation {
  id: string;
  gold: ValidationRun[];
  base: ValidationRun[];
  /** Gold scored 1 and base 0 on every run. */
  ok: boolean;
  /** Some check gave different rewards on different runs. */
  flaky: boolean;
  /** What went wrong, when not ok. */
  problem?: string;
}
