/**
 * `swerl eval`'s flags, parsed and checked before any task is read or model loaded: the task
 * source, where the policy comes from, the runs and pass@k, the agent's budgets, the output.
 */
import path from 'node:path';

import { parseAgentLoopOptions, type AgentLoopOptions } from '../agent/agent-loop.js';
import { SwerlError } from '../errors.js';
import { taskSourceOptions } from '../env/tasks/load.js';

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

/** An invalid-argument error of swerl eval's flags (the CLI points at `swerl eval --help`). */
export function usageError(message: string): SwerlError {
  return new SwerlError('ERR_SWERL_INVALID_ARG', message);
}

/** swerl eval's flags as given (commander's names), every value still text. */
export interface EvalFlags {
  tasks?: string;
  repos?: string;
  testCommand?: string;
  policy?: string;
  model?: string;
  server?: string;
  protocol?: string;
  tokenizer?: string;
  servedModel?: string;
  runs?: string;
  k?: string;
  temperature?: string;
  maxTurns?: string;
  promptBudget?: string;
  responseBudget?: string;
  maxTokensPerTurn?: string;
  only?: string;
  sandbox?: string;
  concurrency?: string;
  name?: string;
  out?: string;
  seed?: string;
}

function integer(value: string | undefined, flag: string, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new SwerlError('ERR_SWERL_INVALID_ARG', `${flag} is ${JSON.stringify(value)}; give an integer >= ${min}`);
  return n;
}

export function parseEvalArgs(flags: EvalFlags): EvalArgs {
  const values = { protocol: 'openai', sandbox: 'local', ...flags };
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
      maxTurns: integer(values.maxTurns, '--max-turns', 100),
      promptBudget: integer(values.promptBudget, '--prompt-budget', big ?? 4096),
      responseBudget: integer(values.responseBudget, '--response-budget', big ?? 32768),
      maxTokensPerTurn: integer(values.maxTokensPerTurn, '--max-tokens-per-turn', big ?? 4096),
      temperature,
      enableThinking: false,
    },
    'swerl eval',
  );
  return {
    tasks: values.tasks,
    taskSource: taskSourceOptions({ repos: values.repos, 'test-command': values.testCommand }),
    ...(values.only !== undefined ? { only: values.only.split(',') } : {}),
    sandbox: values.sandbox,
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

type PolicyFlags = Pick<EvalFlags, 'policy' | 'model' | 'server' | 'protocol' | 'tokenizer' | 'servedModel'>;

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
    ...(flags.servedModel ? { servedModel: flags.servedModel } : {}),
  };
}
