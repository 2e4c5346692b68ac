/**
 * Best@k in an evaluation: every task's k runs become its candidates, the verifiers the rules
 * read score them (lib/tts/verify.ts for the tests, the judge's p(YES) for the execution-free
 * score), and each rule selects one per task; Best@k, Pass@k and Pass@1 are reported side by
 * side with what the verifiers cost.
 */
import type { Trajectory } from '../agent/trajectory.js';
import type { Task } from '../env/task.js';
import { bestOfK, type BestOfKReport } from '../tts/best-of-k.js';
import { episodeChat, judgePrompt, scoreJudgePrompts } from '../tts/judge.js';
import type { Candidate, SelectionRule } from '../tts/select.js';
import { scoresNeeded, verifyCandidates, type TaskVerification, type VerificationCost, type VerifierSettings } from '../tts/verify.js';
import type { ScoringPolicy } from '../types/policy.js';
import { mixSeed } from '../util/random.js';

export interface SelectionSettings {
  rules: readonly SelectionRule[];
  /** hybrid: candidates kept by the judge's score (default floor(k/2)). */
  keep?: number;
  verifiers: VerifierSettings;
  /** The judge, needed when a rule reads its score. */
  judge?: { scorer: ScoringPolicy; tokenBudget: number };
  seed: number;
}

export interface SelectionCost extends VerificationCost {
  /** Candidates the judge scored, and the prompt tokens it read (each read twice: YES and NO). */
  judgedCandidates: number;
  judgeTokens: number;
  /** Wall time of the verifiers and the selection. */
  seconds: number;
}

/** What the verifiers found for one task, short (the writer's patch is in reproduction-tests.jsonl). */
export interface TaskSelectionNotes {
  id: string;
  regression?: { tests: number; note?: string };
  reproduction?: { files: string[]; tests: number; passAtBase: number; failEverywhere: number; note?: string };
}

export interface SelectionReport {
  k: number;
  rules: BestOfKReport[];
  cost: SelectionCost;
  perTask: TaskSelectionNotes[];
}

function notes(v: TaskVerification): TaskSelectionNotes {
  return {
    id: v.id,
    ...(v.regression ? { regression: { tests: v.regression.baseline.length, ...(v.regression.note ? { note: v.regression.note } : {}) } } : {}),
    ...(v.reproduction
      ? {
          reproduction: {
            files: v.reproduction.files,
            tests: v.reproduction.tests.length,
            passAtBase: v.reproduction.discarded.passAtBase.length,
            failEverywhere: v.reproduction.discarded.failEverywhere.length,
            ...(v.reproduction.note ? { note: v.reproduction.note } : {}),
          },
        }
      : {}),
  };
}

/** The candidates of trajectories[run][task]: one per run, in run order. */
export function candidatesOf(byRun: readonly (readonly Trajectory[])[], taskIndex: number): Candidate[] {
  return byRun.map((run, index) => ({ index, patch: run[taskIndex]!.patch ?? '', reward: run[taskIndex]!.reward }));
}

export async function selectBestOfK(
  tasks: readonly Task[],
  byRun: readonly (readonly Trajectory[])[],
  settings: SelectionSettings,
): Promise<{ report: SelectionReport; candidates: Candidate[][]; verification: TaskVerification[] }> {
  const started = performance.now();
  const entries = tasks.map((task, i) => ({ task, candidates: candidatesOf(byRun, i) }));
  const { details, cost } = await verifyCandidates(entries, settings.rules, settings.verifiers);

  let judgedCandidates = 0;
  let judgeTokens = 0;
  if (scoresNeeded(settings.rules).has('judge')) {
    const judge = settings.judge!;
    for (const [i, entry] of entries.entries()) {
      settings.verifiers.signal?.throwIfAborted();
      const prompts = entry.candidates.map((c) =>
        judgePrompt(judge.scorer.tokenizer, { issue: entry.task.problemStatement, patch: c.patch, messages: episodeChat(byRun[c.index]![i]!) }, { tokenBudget: judge.tokenBudget }),
      );
      const scores = await scoreJudgePrompts(judge.scorer, prompts.map((p) => p.ids));
      entry.candidates.forEach((c, j) => (c.judge = scores[j]!));
      judgedCandidates += prompts.length;
      judgeTokens += prompts.reduce((sum, p) => sum + p.ids.length, 0);
    }
  }

  const rules = settings.rules.map((rule) =>
    bestOfK(entries.map((e) => ({ id: e.task.id, candidates: e.candidates })), rule, { seedOf: (i) => mixSeed(settings.seed, i), ...(settings.keep !== undefined ? { keep: settings.keep } : {}) }),
  );
  return {
    report: { k: byRun.length, rules, cost: { ...cost, judgedCandidates, judgeTokens, seconds: (performance.now() - started) / 1000 }, perTask: details.map(notes) },
    candidates: entries.map((e) => e.candidates),
    verification: details,
  };
}

export function selectionMarkdown(r: SelectionReport): string {
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const c = r.cost;
  return [
    `## Best@${r.k}`,
    '',
    '| rule | Best@k | Pass@k | Pass@1 |',
    '|---|---|---|---|',
    ...r.rules.map((b) => `| ${b.rule} | ${pct(b.bestAtK)} | ${pct(b.passAtK)} | ${pct(b.passAt1)} |`),
    '',
    `Verifier cost (${c.seconds.toFixed(1)} s): ${c.regressionSandboxes} regression sandbox(es), ${c.writerEpisodes} test-writing episode(s) (${c.writerTokens} tokens sampled) and ${c.reproductionSandboxes} reproduction sandbox(es), ${c.judgedCandidates} candidate(s) judged (${c.judgeTokens} prompt tokens).`,
    '',
    `| task | ${r.rules.map((b) => `${b.rule} picks`).join(' | ')} | regression tests | reproduction tests |`,
    `|---|${r.rules.map(() => '---|').join('')}---|---|`,
    ...r.perTask.map((t, i) => {
      const picks = r.rules.map((b) => `run ${b.perTask[i]!.selected}${b.perTask[i]!.bestAtK ? ' ✓' : ''}`);
      const regression = t.regression ? `${t.regression.tests}${t.regression.note ? ` (${t.regression.note})` : ''}` : '-';
      const reproduction = t.reproduction ? `${t.reproduction.tests} kept, ${t.reproduction.passAtBase} passed at base, ${t.reproduction.failEverywhere} failed everywhere${t.reproduction.note ? ` (${t.reproduction.note})` : ''}` : '-';
      return `| ${t.id} | ${picks.join(' | ')} | ${regression} | ${reproduction} |`;
    }),
    '',
  ].join('\n');
}
