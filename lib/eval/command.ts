/**
 * `swerl eval`: a policy (scripted, a model directory, or inference servers) on a task set,
 * each task `--runs` times; prints the summary and writes report.json, report.md and the
 * SWE-bench predictions.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';

import { parseAgentLoopOptions } from '../agent/agent-loop.js';
import type { AgentPolicy } from '../types/policy.js';
import { NoopPolicy, OraclePolicy } from '../agent/scripted-policy.js';
import { SwerlError } from '../errors.js';
import { createSandboxBackend } from '../env/sandbox/backends.js';
import { SweEnv } from '../env/swe-env.js';
import { assertRunnable, loadTasks, taskSourceOptions } from '../env/tasks/load.js';
import { evaluatePolicy, reportMarkdown, writeEvalOutputs, type EvalTask } from './evaluate.js';

export const EVAL_USAGE = `  eval                    run a policy on tasks k times: Pass@1 ± SEM, pass@k, predictions
      --tasks PATH             a task folder suite, SWE-bench or R2E-Gym JSON/JSONL (required)
      --repos DIR              clones for dataset rows: DIR/owner__name or DIR/owner/name
      --test-command CMD       the test command for rows (the test files are appended)
      --policy oracle|noop     a scripted policy (the gold patch / no change), or one of:
      --model DIR              a Hugging Face model directory, run in process
      --server URL[,URL…]      OpenAI-compatible servers (vLLM, SGLang, swerl serve)
        --protocol openai|sglang   how the servers take token ids (default openai)
        --tokenizer DIR            the model directory whose tokenizer renders prompts (required)
        --served-model ID          the model id to ask for (default: the servers' first)
      --runs K                 runs of every task (default 1)
      --k 1,4,…                pass@k values (default 1 and K)
      --temperature T          default 1 (0: greedy)
      --max-turns N            default 100 (DeepSWE evaluated with 100)
      --prompt-budget N --response-budget N --max-tokens-per-turn N   token budgets
      --only ID[,ID…]          just these task ids
      --sandbox local|docker   default local
      --concurrency N          episodes at once (default 2)
      --name NAME              model_name_or_path in the predictions (default: the policy)
      --out DIR                default runs/eval-<time>
      --seed N                 default 0
`;

function integer(value: string | undefined, flag: string, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new SwerlError('ERR_SWERL_INVALID_ARG', `${flag} is ${JSON.stringify(value)}; give an integer >= ${min}`);
  return n;
}

export async function evalCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      tasks: { type: 'string' },
      repos: { type: 'string' },
      'test-command': { type: 'string' },
      policy: { type: 'string' },
      model: { type: 'string' },
      server: { type: 'string' },
      protocol: { type: 'string', default: 'openai' },
      tokenizer: { type: 'string' },
      'served-model': { type: 'string' },
      runs: { type: 'string' },
      k: { type: 'string' },
      temperature: { type: 'string' },
      'max-turns': { type: 'string' },
      'prompt-budget': { type: 'string' },
      'response-budget': { type: 'string' },
      'max-tokens-per-turn': { type: 'string' },
      only: { type: 'string' },
      sandbox: { type: 'string', default: 'local' },
      concurrency: { type: 'string' },
      name: { type: 'string' },
      out: { type: 'string' },
      seed: { type: 'string' },
    },
  });
  const fail = (message: string) => new SwerlError('ERR_SWERL_INVALID_ARG', `${message}\n\nusage: swerl eval --tasks PATH (--policy oracle|noop | --model DIR | --server URL --tokenizer DIR) [options]\n${EVAL_USAGE}`);
  if (positionals.length) throw fail(`eval takes options only, got ${positionals.join(' ')}`);
  if (!values.tasks) throw fail('--tasks is required');
  const chosen = [values.policy, values.model, values.server].filter((v) => v !== undefined).length;
  if (chosen !== 1) throw fail('give exactly one of --policy, --model and --server');

  const runs = integer(values.runs, '--runs', 1);
  const ks = values.k ? values.k.split(',').map((k) => integer(k, '--k', 1)) : [...new Set([1, runs])];
  for (const k of ks) if (k > runs) throw fail(`--k ${k} is more than --runs ${runs}: pass@k needs at least k runs`);
  const temperature = values.temperature === undefined ? 1 : Number(values.temperature);
  if (!(temperature >= 0)) throw fail(`--temperature is ${JSON.stringify(values.temperature)}; give a number >= 0`);

  const { tasks: all, problems } = await loadTasks(values.tasks, { onError: 'skip', ...taskSourceOptions(values) });
  for (const p of problems) console.error(`skipped ${p.file}${p.line ? `:${p.line}` : ''}: ${p.message}`);
  const only = values.only?.split(',');
  const tasks = only ? all.filter((t) => only.includes(t.id)) : all;
  if (tasks.length === 0) throw fail(`no tasks to evaluate under ${values.tasks}`);
  assertRunnable(tasks, values.sandbox!);

  let policy: AgentPolicy;
  let name: string;
  let dispose = () => undefined as void;
  const scripted = values.policy !== undefined;
  if (scripted) {
    if (values.policy === 'oracle') policy = new OraclePolicy();
    else if (values.policy === 'noop') policy = new NoopPolicy();
    else throw fail(`--policy is ${JSON.stringify(values.policy)}; use oracle or noop (or --model / --server for a model)`);
    name = `swerl-${values.policy}`;
  } else if (values.model !== undefined) {
    // As in `swerl train`: OpenBLAS's fork handler can hang a multi-threaded GEMM while
    // sandbox commands spawn; read when the addon loads, just below.
    process.env.OPENBLAS_NUM_THREADS ??= '1';
    const { NativePolicy } = await import('../model/native-policy.js');
    const native = await NativePolicy.load(values.model);
    policy = native;
    dispose = () => native.dispose();
    name = path.basename(path.resolve(values.model));
  } else {
    if (!values.tokenizer) throw fail('--server needs --tokenizer DIR: prompts are rendered here and sent as token ids');
    if (values.protocol !== 'openai' && values.protocol !== 'sglang') throw fail(`--protocol is ${JSON.stringify(values.protocol)}; use openai or sglang`);
    const { loadTokenizer } = await import('../model/hf-tokenizer.js');
    const { RemotePolicy } = await import('../model/remote-policy.js');
    const remote = await RemotePolicy.connect(await loadTokenizer(values.tokenizer), {
      servers: values.server!.split(','),
      protocol: values.protocol,
      ...(values['served-model'] ? { model: values['served-model'] } : {}),
    });
    policy = remote;
    name = remote.model ?? path.basename(path.resolve(values.tokenizer));
  }
  name = values.name ?? name;

  // A scripted policy spends a byte-level token per byte of the whole system prompt and patch.
  const big = scripted ? 1 << 20 : undefined;
  const agent = parseAgentLoopOptions(
    {
      maxTurns: integer(values['max-turns'], '--max-turns', 100),
      promptBudget: integer(values['prompt-budget'], '--prompt-budget', big ?? 4096),
      responseBudget: integer(values['response-budget'], '--response-budget', big ?? 32768),
      maxTokensPerTurn: integer(values['max-tokens-per-turn'], '--max-tokens-per-turn', big ?? 4096),
      temperature,
      enableThinking: false,
    },
    'swerl eval',
  );
  const label = `swerl-eval-${process.pid}`;
  const backend = await createSandboxBackend(values.sandbox!, { label });
  const evalTasks: EvalTask[] = tasks.map((task) => ({ id: task.id, task, makeEnv: () => new SweEnv(task, backend, { maxSteps: agent.maxTurns, label }) }));
  const out = path.resolve(values.out ?? path.join('runs', `eval-${new Date().toISOString().replace(/[:.]/g, '-')}`));

  const stop = new AbortController();
  const onSignal = () => {
    if (stop.signal.aborted) process.exit(130);
    console.error('\nswerl eval: stopping: closing the running episodes (Ctrl-C again to force)');
    stop.abort();
  };
  process.env.SWERL_NO_SIGNAL_HANDLERS = '1';
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, onSignal);
  console.log(`evaluating ${name} on ${tasks.length} task(s) x ${runs} run(s) in the ${backend.name} sandbox`);
  try {
    const { report, byRun } = await evaluatePolicy(policy, evalTasks, {
      runs,
      ks,
      agent,
      concurrency: integer(values.concurrency, '--concurrency', 2),
      retries: 1,
      modelName: name,
      seed: integer(values.seed, '--seed', 0, 0),
      signal: stop.signal,
      onEpisode: (done, total) => process.stderr.write(`\r${done}/${total} episodes`),
    });
    process.stderr.write('\n');
    const files = await writeEvalOutputs(out, report, byRun);
    console.log(reportMarkdown(report).split('\n').slice(4, 8 + Object.keys(report.passAtK).length).join('\n'));
    console.log(`wrote ${files.join(', ')}`);
    return 0;
  } catch (error) {
    if (stop.signal.aborted) {
      console.error('swerl eval: stopped; nothing was written');
      return 130;
    }
    throw error;
  } finally {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.removeListener(signal, onSignal);
    dispose();
  }
}
