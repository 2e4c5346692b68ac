/**
 * Scoring every task's k candidates with the verifiers a selection rule reads (select.ts's
 * RULE_SCORES): regression tests, reproduction tests (one test-writing episode per task), the
 * judge. Each verifier runs once however many rules read it, and what it cost is counted:
 * sandboxes started, tokens the test writer sampled, tokens the judge read.
 */
import { invalidArg } from '../errors.js';
import type { AgentLoopOptions } from '../agent/agent-loop.js';
import type { SandboxBackend } from '../env/sandbox/sandbox.js';
import type { Task } from '../env/task.js';
import type { AgentPolicy } from '../types/policy.js';
import { Slots } from '../util/bounded.js';
import { regressionScores, type RegressionResult } from './regression.js';
import { reproductionScores, writeReproductionTests, writtenTests, type ReproductionResult } from './reproduction.js';
import { RULE_SCORES, type Candidate, type SelectionRule } from './select.js';

export interface TaskCandidates {
  task: Task;
  /** In index order; scores are filled in here. */
  candidates: Candidate[];
}

export interface VerifierSettings {
  backend: SandboxBackend;
  label?: string;
  /** Sandboxes at a time, all tasks' test runs together. */
  concurrency: number;
  /** Time limit of one test run. */
  timeoutMs: number;
  /** The test writer, needed when a rule reads reproduction scores. */
  reproduction?: { writer: AgentPolicy; agent: AgentLoopOptions; seed: number; retries: number; command?: string };
  signal?: AbortSignal;
}

export interface TaskVerification {
  id: string;
  regression?: RegressionResult;
  reproduction?: ReproductionResult & { writerPatch: string };
}

export interface VerificationCost {
  /** Sandboxes the verifier's test runs started (distinct patches only, plus the base). */
  regressionSandboxes: number;
  reproductionSandboxes: number;
  /** Test-writing episodes, and the tokens they sampled. */
  writerEpisodes: number;
  writerTokens: number;
}

/** The scores the rules read, together. */
export function scoresNeeded(rules: readonly SelectionRule[]): Set<'judge' | 'regression' | 'reproduction'> {
  return new Set(rules.flatMap((rule) => RULE_SCORES[rule]));
}

const distinct = (patches: readonly string[]) => new Set(['', ...patches]).size;

/** Fills in the candidates' regression and reproduction scores where `rules` read them. */
export async function verifyCandidates(tasks: readonly TaskCandidates[], rules: readonly SelectionRule[], settings: VerifierSettings): Promise<{ details: TaskVerification[]; cost: VerificationCost }> {
  const needed = scoresNeeded(rules);
  const cost: VerificationCost = { regressionSandboxes: 0, reproductionSandboxes: 0, writerEpisodes: 0, writerTokens: 0 };
  const details: TaskVerification[] = tasks.map(({ task }) => ({ id: task.id }));
  const run = { timeoutMs: settings.timeoutMs, slots: new Slots(settings.concurrency), ...(settings.label !== undefined ? { label: settings.label } : {}), ...(settings.signal ? { signal: settings.signal } : {}) };
  const patchesOf = (t: TaskCandidates) => t.candidates.map((c) => c.patch);

  let writerPatches: string[] = [];
  if (needed.has('reproduction')) {
    const reproduction = settings.reproduction;
    if (!reproduction) throw invalidArg('settings.reproduction', `is missing and the rules ${rules.join(', ')} read reproduction scores`, 'give the test writer (a policy and its agent options)');
    const written = await writeReproductionTests(reproduction.writer, tasks.map((t) => t.task), settings.backend, {
      agent: reproduction.agent,
      concurrency: settings.concurrency,
      retries: reproduction.retries,
      seed: reproduction.seed,
      ...(settings.label !== undefined ? { label: settings.label } : {}),
      ...(settings.signal ? { signal: settings.signal } : {}),
    });
    writerPatches = written.map((w) => w.patch);
    cost.writerEpisodes = written.length;
    cost.writerTokens = written.reduce((sum, w) => sum + w.tokens, 0);
  }

  // Every task's test runs at once, the sandboxes bounded together.
  await Promise.all(
    tasks.map(async (entry, i) => {
      const [regression, reproduction] = await Promise.all([
        needed.has('regression') ? regressionScores(settings.backend, entry.task, patchesOf(entry), run) : undefined,
        needed.has('reproduction') ? reproductionScores(settings.backend, entry.task, writtenTests(entry.task, writerPatches[i]!), patchesOf(entry), { ...run, ...(settings.reproduction!.command !== undefined ? { command: settings.reproduction!.command } : {}) }) : undefined,
      ]);
      if (regression) {
        entry.candidates.forEach((c, j) => (c.regression = regression.passes[j]!));
        details[i]!.regression = regression;
        cost.regressionSandboxes += distinct(patchesOf(entry));
      }
      if (reproduction) {
        entry.candidates.forEach((c, j) => (c.reproduction = reproduction.passes[j]!));
        details[i]!.reproduction = { ...reproduction, writerPatch: writerPatches[i]! };
        if (reproduction.files.length > 0) cost.reproductionSandboxes += distinct(patchesOf(entry));
      }
    }),
  );
  return { details, cost };
}
