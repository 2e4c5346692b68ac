/**
 * `swerl eval`'s flags, parsed and checked before any task is read or model loaded: the task
 * source, where the policy comes from, the runs and pass@k, the agent's budgets, the output.
 */
import path from 'node:path';

import { parseAgentLoopOptions, type AgentLoopOptions } from '../agent/agent-loop.js';
import { SwerlError } from '../errors.js';
import { taskSourceOptions } from '../env/tasks/load.js';
import { commandArgs } from '../util/command-args.js';

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

/** Where the policy comes from: a scripted one, a model directory run in process, or inference servers. */
export type PolicySource =
  | { kind: 'scripted'; policy: 'oracle' | 'noop' }
  | { kind: 'model'; dir: string }
  | { kind: 'server'; servers: string[]; protocol: 'openai' | 'sglang'; tokenizer: string; servedModel?: string };

export interface EvalArgs {
  tasks: string;
  taskSource: ReturnType<typeof taskSourceOptions>;
  only?: string[];
  sandbox: string;
  policy: PolicySource;
  /** --name: model_name_or_path in the predictions (default: the policy's name). */
  name?: string;
  runs: number;
  ks: number[];
  agent: AgentLoopOptions;
  concurrency: number;
  seed: number;
  /** The output folder, absolute. */
  out: string;
}

/** An invalid-argument error that ends with the command's usage. */
export function usageError(message: string): SwerlError {
  return new SwerlError('ERR_SWERL_INVALID_ARG', `${message}\n\nusage: swerl eval --tasks PATH (--policy oracle|noop | --model DIR | --server URL --tokenizer DIR) [options]\n${EVAL_USAGE}`);
}

function integer(value: string | undefined, flag: string, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new SwerlError('ERR_SWERL_INVALID_ARG', `${flag} is ${JSON.stringify(value)}; give an integer >= ${min}`);
  return n;
}

export function parseEvalArgs(args: string[]): EvalArgs {
  const { values, positionals } = commandArgs(args, {
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
  });
  if (positionals.length) throw usageError(`eval takes options only, got ${positionals.join(' ')}`);
  if (!values.tasks) throw usageError('--tasks is required');
  const chosen = [values.policy, values.model, values.server].filter((v) => v !== undefined).length;
  if (chosen !== 1) throw usageError('give exactly one of --policy, --model and --server');

  const runs = integer(values.runs, '--runs', 1);
  const ks = values.k ? values.k.split(',').map((k) => integer(k, '--k', 1)) : [...new Set([1, runs])];
  for (const k of ks) if (k > runs) throw usageError(`--k ${k} is more than --runs ${runs}: pass@k needs at least k runs`);
  const temperature = values.temperature === undefined ? 1 : Number(values.temperature);
  if (!(temperature >= 0)) throw usageError(`--temperature is ${JSON.stringify(values.temperature)}; give a number >= 0`);

  const policy = policySource(values);

  // A scripted policy spends a byte-level token per byte of the whole system prompt and patch.
  const big = policy.kind === 'scripted' ? 1 << 20 : undefined;
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
  return {
    tasks: values.tasks,
    taskSource: taskSourceOptions(values),
    ...(values.only !== undefined ? { only: values.only.split(',') } : {}),
    sandbox: values.sandbox!,
    policy,
    ...(values.name !== undefined ? { name: values.name } : {}),
    runs,
    ks,
    agent,
    concurrency: integer(values.concurrency, '--concurrency', 2),
    seed: integer(values.seed, '--seed', 0, 0),
    out: path.resolve(values.out ?? path.join('runs', `eval-${new Date().toISOString().replace(/[:.]/g, '-')}`)),
  };
}

type PolicyFlags = { policy?: string; model?: string; server?: string; protocol?: string; tokenizer?: string; 'served-model'?: string };

/** The one of --policy, --model and --server given (parseEvalArgs checked there is exactly one). */
function policySource(flags: PolicyFlags): PolicySource {
  if (flags.policy !== undefined) {
    if (flags.policy !== 'oracle' && flags.policy !== 'noop') throw usageError(`--policy is ${JSON.stringify(flags.policy)}; use oracle or noop (or --model / --server for a model)`);
    return { kind: 'scripted', policy: flags.policy };
  }
  if (flags.model !== undefined) return { kind: 'model', dir: flags.model };
  if (!flags.tokenizer) throw usageError('--server needs --tokenizer DIR: prompts are rendered here and sent as token ids');
  if (flags.protocol !== 'openai' && flags.protocol !== 'sglang') throw usageError(`--protocol is ${JSON.stringify(flags.protocol)}; use openai or sglang`);
  return {
    kind: 'server',
    servers: flags.server!.split(','),
    protocol: flags.protocol,
    tokenizer: flags.tokenizer,
    ...(flags['served-model'] ? { servedModel: flags['served-model'] } : {}),
  };
}
