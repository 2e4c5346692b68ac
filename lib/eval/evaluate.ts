/**
 * Evaluating a policy: every task `runs` times through the agent loop, then Pass@1 as the mean
 * over runs of each run's solve rate, ± its standard error, pass@k with the unbiased estimator,
 * per-task results, termination reasons, mean turns and tokens; written as report.json, a
 * markdown table, (SWE tasks) SWE-bench predictions JSONL, one file per run, and (a model's
 * episodes) every trajectory in trajectories/step-1.jsonl.gz, as SFT reads them.
 */
import path from 'node:path';

import { runRollouts, type RolloutItem } from '../agent/rollout.js';
import type { AgentLoopOptions } from '../agent/agent-loop.js';
import type { AgentPolicy } from '../types/policy.js';
import { rewardHackAttempt, trajectoriesJsonlGz, type Trajectory } from '../agent/trajectory.js';
import type { Env } from '../env/env.js';
import type { Task } from '../env/task.js';
import type { PatchFlag } from '../env/env.js';
import { writeFileAtomic, writeJsonAtomic } from '../util/atomic.js';
import { mean } from '../util/stats.js';
import { episodeChat } from '../tts/judge.js';
import type { Candidate } from '../tts/select.js';
import type { TaskVerification } from '../tts/verify.js';
import { meanAndSem, passAtK } from './metrics.js';
import { selectionMarkdown, type SelectionReport } from './selection.js';

export interface EvalTask {
  id: string;
  task?: Task;
  makeEnv: () => Env | Promise<Env>;
}

export interface EvalOptions {
  runs: number;
  /** pass@k for each k (<= runs); default 1 and runs. */
  ks?: number[];
  agent: AgentLoopOptions;
  /** Episodes in flight. */
  concurrency: number;
  /** Extra attempts of an episode whose sandbox failed. */
  retries: number;
  /** The model_name_or_path of the predictions. */
  modelName: string;
  seed: number;
  signal?: AbortSignal;
  onEpisode?: (done: number, total: number) => void;
}

export interface TaskResult {
  id: string;
  runs: number;
  solved: number;
  /** Reward of each run, in run order. */
  rewards: number[];
  terminations: Record<string, number>;
  meanTurns: number;
  meanResponseTokens: number;
}

export interface EvalReport {
  model: string;
  tasks: number;
  runs: number;
  passAt1: { mean: number; sem: number; perRun: number[] };
  passAtK: Record<string, number>;
  terminations: Record<string, number>;
  meanTurns: number;
  meanResponseTokens: number;
  /** Trajectories that ended in an error (an infrastructure fault after its retries). */
  errors: number;
  /**
   * Trajectories grading caught gaming their reward: test infrastructure reverted
   * (lib/env/reward/test-infrastructure.ts) or the test runner tampered with (lib/env/reward/guard.ts).
   */
  rewardHackAttempts: number;
  /** Each of those episodes and why. */
  rewardHacks: { taskId: string; run: number; reason: string }[];
  /** Episodes whose patch adds lines reaching for the runner or the grader (patch-flags.ts; information, not a zero). */
  flaggedPatches: { taskId: string; run: number; flags: PatchFlag[] }[];
  perTask: TaskResult[];
  seconds: number;
  /** Best@k by each --select rule, when selecting. */
  selection?: SelectionReport;
}

function count(values: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

/** The report of trajectories[run][task] (reward > 0 is solved). */
export function evalReport(model: string, taskIds: readonly string[], byRun: readonly (readonly Trajectory[])[], ks: readonly number[], seconds: number): EvalReport {
  const runs = byRun.length;
  const perTask: TaskResult[] = taskIds.map((id, i) => {
    const mine = byRun.map((run) => run[i]!);
    return {
      id,
      runs,
      solved: mine.filter((t) => t.reward > 0).length,
      rewards: mine.map((t) => t.reward),
      terminations: count(mine.map((t) => t.termination)),
      meanTurns: mean(mine.map((t) => t.turns.length)),
      meanResponseTokens: mean(mine.map((t) => t.responseTokens)),
    };
  });
  const all = byRun.flat();
  const hacks = byRun.flatMap((run, r) => run.flatMap((t) => {
    const reason = rewardHackAttempt(t);
    return reason === null ? [] : [{ taskId: t.taskId, run: r, reason }];
  }));
  const perRun = byRun.map((run) => mean(run.map((t) => (t.reward > 0 ? 1 : 0))));
  return {
    model,
    tasks: taskIds.length,
    runs,
    passAt1: { ...meanAndSem(perRun), perRun },
    passAtK: Object.fromEntries(ks.map((k) => [`pass@${k}`, mean(perTask.map((r) => passAtK(runs, r.solved, k)))])),
    terminations: count(all.map((t) => t.termination)),
    meanTurns: mean(all.map((t) => t.turns.length)),
    meanResponseTokens: mean(all.map((t) => t.responseTokens)),
    errors: all.filter((t) => t.termination === 'error').length,
    rewardHackAttempts: hacks.length,
    rewardHacks: hacks,
    flaggedPatches: byRun.flatMap((run, r) => run.flatMap((t) => (t.patchFlags?.length ? [{ taskId: t.taskId, run: r, flags: t.patchFlags }] : []))),
    perTask,
    seconds,
  };
}

/** Text safe inside a markdown table cell. */
const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

export function reportMarkdown(r: EvalReport): string {
  const pct = (x: number) => (100 * x).toFixed(1);
  const lines = [
    `# Evaluation of ${r.model}`,
    '',
    `${r.tasks} tasks x ${r.runs} run(s), ${r.seconds.toFixed(1)} s.`,
    '',
    '| metric | value |',
    '|---|---|',
    `| Pass@1 (mean ± SEM over runs) | ${pct(r.passAt1.mean)}% ± ${pct(r.passAt1.sem)} |`,
    ...Object.entries(r.passAtK).map(([k, v]) => `| ${k} | ${pct(v)}% |`),
    `| mean turns | ${r.meanTurns.toFixed(2)} |`,
    `| mean response tokens | ${r.meanResponseTokens.toFixed(0)} |`,
    `| terminations | ${Object.entries(r.terminations).map(([k, v]) => `${k} ${v}`).join(', ')} |`,
    `| reward-hack attempts (test infrastructure reverted, test runner tampered with) | ${r.rewardHackAttempts} episode(s) |`,
    '',
    ...(r.rewardHacks.length ? ['| reward-hack attempt | run | what grading saw |', '|---|---|---|', ...r.rewardHacks.map((h) => `| ${h.taskId} | ${h.run} | ${cell(h.reason)} |`), ''] : []),
    ...(r.flaggedPatches.length
      ? ['| flagged patch (information, not a zero) | run | line | reaches for |', '|---|---|---|---|', ...r.flaggedPatches.flatMap((p) => p.flags.map((f) => `| ${p.taskId} | ${p.run} | ${cell(`${f.file}:${f.line}: ${f.text}`)} | ${f.reason} |`)), '']
      : []),
    '| task | solved | rewards | terminations | mean turns | mean tokens |',
    '|---|---|---|---|---|---|',
    ...r.perTask.map((t) => `| ${t.id} | ${t.solved}/${t.runs} | ${t.rewards.join(' ')} | ${Object.entries(t.terminations).map(([k, v]) => `${k} ${v}`).join(', ')} | ${t.meanTurns.toFixed(1)} | ${t.meanResponseTokens.toFixed(0)} |`),
    '',
    ...(r.selection ? [selectionMarkdown(r.selection)] : []),
  ];
  return lines.join('\n');
}

/** SWE-bench's predictions file: one JSON line per task with the graded patch of that run. */
export function predictionsJsonl(model: string, run: readonly Pick<Trajectory, 'taskId' | 'patch'>[]): string {
  return run.map((t) => JSON.stringify({ instance_id: t.taskId, model_name_or_path: model, model_patch: t.patch ?? '' })).join('\n') + '\n';
}

/** What --select adds to the outputs: the tasks, their scored candidates, the verifiers' findings. */
export interface SelectionOutputs {
  tasks: readonly Task[];
  candidates: readonly (readonly Candidate[])[];
  verification: readonly TaskVerification[];
}

/** One line per candidate: what train-verifier learns from (reward > 0 = resolved) and the scores it got. */
function candidatesJsonl(report: EvalReport, byRun: readonly Trajectory[][], s: SelectionOutputs): string {
  const rules = report.selection!.rules;
  return s.tasks.flatMap((task, i) =>
    s.candidates[i]!.map((c) => {
      const t = byRun[c.index]![i]!;
      return JSON.stringify({
        taskId: task.id,
        run: c.index,
        problemStatement: task.problemStatement,
        patch: c.patch,
        reward: c.reward,
        ...(c.regression !== undefined ? { regression: c.regression } : {}),
        ...(c.reproduction !== undefined ? { reproduction: c.reproduction } : {}),
        ...(c.judge !== undefined ? { judge: c.judge } : {}),
        selectedBy: rules.filter((r) => r.perTask[i]!.selected === c.index).map((r) => r.rule),
        termination: t.termination,
        // The whole episode as a chat (the opening, then each turn's response and observation).
        messages: episodeChat(t),
      });
    }),
  ).join('\n') + '\n';
}

/** Runs every task `runs` times; episodes of all runs share the concurrency bound. */
export async function evaluatePolicy(policy: AgentPolicy, tasks: readonly EvalTask[], options: EvalOptions): Promise<{ report: EvalReport; byRun: Trajectory[][] }> {
  const started = performance.now();
  const items: RolloutItem[] = [];
  for (let run = 0; run < options.runs; run++) {
    tasks.forEach((task, i) =>
      items.push({ taskId: task.id, ...(task.task ? { task: task.task } : {}), group: i, sample: run, seed: (options.seed + 7919 * run + i) * 1024, makeEnv: task.makeEnv }),
    );
  }
  const trajectories = await runRollouts(items, policy, { concurrency: options.concurrency, generationConcurrency: 0, retries: options.retries, agent: options.agent }, {
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onEpisode ? { onProgress: (p) => options.onEpisode!(p.done, p.total) } : {}),
  });
  const byRun: Trajectory[][] = Array.from({ length: options.runs }, () => new Array<Trajectory>(tasks.length));
  for (const t of trajectories) byRun[t.sample]![t.group] = t;
  const ks = options.ks ?? [...new Set([1, options.runs])];
  const report = evalReport(options.modelName, tasks.map((t) => t.id), byRun, ks, (performance.now() - started) / 1000);
  return { report, byRun };
}

/**
 * report.json, report.md, and for SWE tasks predictions.jsonl (run 0's patches, or with --select
 * those the first rule selected) and predictions-run-N.jsonl; with --select also
 * candidates.jsonl and, when reproduction tests were written, reproduction-tests.jsonl.
 */
export async function writeEvalOutputs(dir: string, report: EvalReport, byRun: readonly Trajectory[][], selection?: SelectionOutputs): Promise<string[]> {
  const written = [path.join(dir, 'report.json'), path.join(dir, 'report.md')];
  await writeJsonAtomic(written[0]!, report);
  await writeFileAtomic(written[1]!, reportMarkdown(report));
  // A model's episodes as a run directory keeps them, so `sft.data` can name this folder:
  // rejection fine-tuning on what resolved (sft.minReward 1), as demo:swe's RFT phase does.
  const episodes = byRun.flat();
  if (episodes.some((t) => t.tokens.length > 0)) {
    const file = path.join(dir, 'trajectories', 'step-1.jsonl.gz');
    await writeFileAtomic(file, await trajectoriesJsonlGz(episodes));
    written.push(file);
  }
  if (byRun.some((run) => run.some((t) => t.patch !== undefined))) {
    for (const [r, run] of byRun.entries()) {
      const file = path.join(dir, `predictions-run-${r}.jsonl`);
      await writeFileAtomic(file, predictionsJsonl(report.model, run));
      written.push(file);
    }
    const main = path.join(dir, 'predictions.jsonl');
    const first = report.selection?.rules[0];
    const chosen = first ? first.perTask.map((t, i) => byRun[t.selected]![i]!) : byRun[0]!;
    await writeFileAtomic(main, predictionsJsonl(report.model, chosen));
    written.push(main);
  }
  if (selection) {
    const file = path.join(dir, 'candidates.jsonl');
    await writeFileAtomic(file, candidatesJsonl(report, byRun, selection));
    written.push(file);
    const tests = selection.verification.filter((v) => v.reproduction);
    if (tests.length > 0) {
      const testsFile = path.join(dir, 'reproduction-tests.jsonl');
      await writeFileAtomic(testsFile, tests.map((v) => JSON.stringify({ instance_id: v.id, files: v.reproduction!.files, tests: v.reproduction!.tests, discarded: v.reproduction!.discarded, patch: v.reproduction!.writerPatch })).join('\n') + '\n');
      written.push(testsFile);
    }
  }
  return written;
}
