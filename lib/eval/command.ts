/**
 * `swerl eval`: a policy (scripted, a model directory, or inference servers) on a task set,
 * each task `--runs` times; prints the summary and writes report.json, report.md and the
 * SWE-bench predictions.
 */
import { createSandboxBackend } from '../env/sandbox/backends.js';
import { SweEnv } from '../env/swe-env.js';
import { assertRunnable, loadTasks } from '../env/tasks/load.js';
import { parseAgentLoopOptions } from '../agent/agent-loop.js';
import { TestWriterOraclePolicy } from '../agent/scripted-policy.js';
import type { SandboxBackend } from '../env/sandbox/sandbox.js';
import { scoresNeeded, type VerifierSettings } from '../tts/verify.js';
import { usageError, type EvalArgs, type SelectionArgs } from './args.js';
import { evaluatePolicy, reportMarkdown, writeEvalOutputs, type EvalTask } from './evaluate.js';
import { loadPolicy, type LoadedPolicy } from './load-policy.js';
import { selectBestOfK, selectionMarkdown, type SelectionSettings } from './selection.js';
import { gradePredictions, harnessReport, predictionsReport, readPredictions, writePredictionsOutputs } from './predictions.js';
import type { Task } from '../env/task.js';
import { eta, formatDuration, formatRate, progressDisplay, textBar } from '../util/progress.js';

/**
 * Episodes done of all: a live line on a terminal; in a log, a line at every tenth of the way
 * (and at least every 30 s), never a carriage return.
 */
function episodeProgress(live: boolean) {
  const display = progressDisplay(live);
  const line = display.line();
  const started = performance.now();
  let logged = { done: 0, at: started };
  return {
    update(done: number, total: number) {
      const seconds = (performance.now() - started) / 1000;
      const text = `${live ? `${textBar(done / total, 24)} ` : ''}${done}/${total} episodes  ${formatRate(done, seconds, 'ep')}  elapsed ${formatDuration(seconds)}  ETA ${formatDuration(eta(done, total, seconds))}`;
      if (live) return line.update(text);
      if (done === total || done - logged.done >= Math.max(1, total / 10) || performance.now() - logged.at >= 30_000) {
        logged = { done, at: performance.now() };
        display.log(text);
      }
    },
    stop: () => display.stop(),
  };
}

/** The verifiers --select needs: the test writer, the judge (loaded here when it is a model of its own). */
async function selectionSettings(
  args: EvalArgs,
  selection: SelectionArgs,
  loaded: LoadedPolicy,
  backend: SandboxBackend,
  label: string,
  signal: AbortSignal,
  disposers: (() => void)[],
): Promise<SelectionSettings> {
  const needed = scoresNeeded(selection.rules);
  let judge: SelectionSettings['judge'];
  if (needed.has('judge')) {
    let scorer = loaded.scorer;
    if (selection.judge !== 'policy') {
      const own = await loadPolicy(selection.judge);
      disposers.push(own.dispose);
      scorer = own.scorer;
    }
    judge = { scorer: scorer!, tokenBudget: selection.judgeBudget };
  }
  let reproduction: VerifierSettings['reproduction'];
  if (needed.has('reproduction')) {
    // The scripted writer spends a byte-level token per byte of each test file it writes.
    const big = 1 << 20;
    reproduction = selection.testWriter === 'oracle'
      ? { writer: new TestWriterOraclePolicy(), agent: parseAgentLoopOptions({ ...args.agent, promptBudget: big, responseBudget: big, maxTokensPerTurn: big }, 'swerl eval'), seed: args.seed, retries: 1 }
      : { writer: loaded.policy, agent: args.agent, seed: args.seed, retries: 1 };
    if (selection.reproductionCommand !== undefined) reproduction.command = selection.reproductionCommand;
  }
  return {
    rules: selection.rules,
    ...(selection.keep !== undefined ? { keep: selection.keep } : {}),
    seed: args.seed,
    verifiers: { backend, label, concurrency: args.concurrency, timeoutMs: selection.testTimeoutMs, signal, ...(reproduction ? { reproduction } : {}) },
    ...(judge ? { judge } : {}),
  };
}

/**
 * SIGINT or SIGTERM asks the evaluation to stop (`signal` aborts; what runs is closed, nothing is
 * written); a second one exits at once. `release` gives the signals back.
 */
function stopOnSignals(doing: string): { signal: AbortSignal; release(): void } {
  const stop = new AbortController();
  const onSignal = () => {
    if (stop.signal.aborted) process.exit(130);
    console.error(`\nswerl eval: stopping: ${doing} (Ctrl-C again to force)`);
    stop.abort();
  };
  process.env.SWERL_NO_SIGNAL_HANDLERS = '1';
  for (const name of ['SIGINT', 'SIGTERM'] as const) process.on(name, onSignal);
  return { signal: stop.signal, release: () => { for (const name of ['SIGINT', 'SIGTERM'] as const) process.removeListener(name, onSignal); } };
}

export async function evalCommand(args: EvalArgs): Promise<number> {
  const { tasks: all, problems } = await loadTasks(args.tasks, { onError: 'skip', ...args.taskSource });
  for (const p of problems) console.error(`skipped ${p.file}${p.line ? `:${p.line}` : ''}: ${p.message}`);
  const only = args.only;
  const tasks = only ? all.filter((t) => only.includes(t.id)) : all;
  if (tasks.length === 0) throw usageError(`no tasks to evaluate under ${args.tasks}`);
  assertRunnable(tasks, args.sandbox);
  const source = args.policy;
  if (source.kind === 'predictions') return predictionsCommand(args, source.file, tasks);

  const loaded = await loadPolicy(source, args.runs);
  const { policy, name: policyName } = loaded;
  const disposers = [loaded.dispose];
  const name = args.name ?? policyName;
  const label = `swerl-eval-${process.pid}`;
  const backend = await createSandboxBackend(args.sandbox, { label });
  const evalTasks: EvalTask[] = tasks.map((task) => ({ id: task.id, task, makeEnv: () => new SweEnv(task, backend, { maxSteps: args.agent.maxTurns, label }) }));

  const stop = stopOnSignals('closing the running episodes');
  console.log(`evaluating ${name} on ${tasks.length} task(s) x ${args.runs} run(s) in the ${backend.name} sandbox`);
  const progress = episodeProgress(process.stderr.isTTY === true);
  try {
    const { report, byRun } = await evaluatePolicy(policy, evalTasks, {
      runs: args.runs,
      ks: args.ks,
      agent: args.agent,
      concurrency: args.concurrency,
      retries: 1,
      modelName: name,
      seed: args.seed,
      signal: stop.signal,
      onEpisode: (done, total) => progress.update(done, total),
    });
    progress.stop();
    let selection: Awaited<ReturnType<typeof selectBestOfK>> | undefined;
    if (args.selection) {
      const settings = await selectionSettings(args, args.selection, loaded, backend, label, stop.signal, disposers);
      console.log(`selecting one of ${args.runs} run(s) per task by ${args.selection.rules.join(', ')}`);
      selection = await selectBestOfK(tasks, byRun, settings);
      report.selection = selection.report;
    }
    const files = await writeEvalOutputs(args.out, report, byRun, selection ? { tasks, ...selection } : undefined);
    console.log(reportMarkdown(report).split('\n').slice(4, 8 + Object.keys(report.passAtK).length).join('\n'));
    if (report.selection) console.log(`\n${selectionMarkdown(report.selection).split('\n').slice(2, 4 + report.selection.rules.length).join('\n')}`);
    console.log(`wrote ${files.join(', ')}`);
    return 0;
  } catch (error) {
    if (stop.signal.aborted) {
      console.error('swerl eval: stopped; nothing was written');
      return 130;
    }
    throw error;
  } finally {
    stop.release();
    for (const dispose of disposers) dispose();
  }
}

/** --predictions: every line of the file graded or refused, reported ours and the harness's way. */
async function predictionsCommand(args: EvalArgs, file: string, tasks: readonly Task[]): Promise<number> {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const { accepted, refused } = await readPredictions(file, new Set(byId.keys()));
  for (const r of refused) console.error(`${file}:${r.line}: ${r.status}: ${r.reason}`);
  const label = `swerl-eval-${process.pid}`;
  const backend = await createSandboxBackend(args.sandbox, { label });
  const stop = stopOnSignals('finishing the gradings under way');
  console.log(`grading ${accepted.length} prediction(s) from ${file} on ${tasks.length} row(s) in the ${backend.name} sandbox (${refused.length} line(s) refused)`);
  try {
    const graded = await gradePredictions(accepted, byId, {
      backend,
      label,
      concurrency: args.concurrency,
      timeoutMs: args.testTimeoutMs ?? 1_800_000,
      signal: stop.signal,
      onGraded: (o) => console.log(`${o.status.padEnd(10)} ${o.instanceId}: ${o.reason.split('\n')[0]!.slice(0, 200)}`),
    });
    if (stop.signal.aborted) {
      console.error('swerl eval: stopped; nothing was written');
      return 130;
    }
    const outcomes = [...graded, ...refused];
    const report = predictionsReport(file, tasks.length, outcomes);
    const model = accepted[0]?.model ?? 'predictions';
    const files = await writePredictionsOutputs(args.out, report, harnessReport(tasks.map((t) => t.id), outcomes), model);
    console.log(Object.entries(report.counts).map(([s, n]) => `${n} ${s}`).join(', '));
    console.log(`wrote ${files.join(', ')}`);
    return 0;
  } finally {
    stop.release();
  }
}
