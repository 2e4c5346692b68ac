/**
 * `swerl eval`'s flags, parsed and checked before any task is read or model loaded: the task
 * source, where the policy comes from, the runs and pass@k, the agent's budgets, the output.
 */
import path from 'node:path';

import { parseAgentLoopOptions, type AgentLoopOptions } from '../agent/agent-loop.js';
import { SwerlError } from '../errors.js';
import { taskSourceOptions } from '../env/tasks/load.js';
import { SELECTION_RULES, type SelectionRule } from '../tts/select.js';
import { scoresNeeded } from '../tts/verify.js';

/** Where the policy comes from: a scripted one, a model directory run in process, or inference servers. */
export type PolicySource =
  | { kind: 'scripted'; policy: ScriptedPolicyName }
  | { kind: 'model'; dir: string }
  | { kind: 'server'; servers: string[]; protocol: 'openai' | 'sglang'; tokenizer: string; servedModel?: string };

/** What swerl eval grades: a policy's episodes, or patches made elsewhere (--predictions). */
export type EvalSource = PolicySource | { kind: 'predictions'; file: string };

/** oracle: the gold patch; noop: no change; decoy: the gold patch on one run in --samples, a harmless decoy edit on the others. */
export const SCRIPTED_POLICIES = ['oracle', 'noop', 'decoy'] as const;
export type ScriptedPolicyName = (typeof SCRIPTED_POLICIES)[number];

/** Best@k: which rules select, and the verifiers they need. */
export interface SelectionArgs {
  rules: SelectionRule[];
  keep?: number;
  /** Who writes the reproduction tests: the evaluated policy, or the scripted writer (the hidden tests as a stand-in). */
  testWriter: 'policy' | 'oracle';
  /** How the written tests run, with {files} (default: the task's runner). */
  reproductionCommand?: string;
  /** The judge: the evaluated policy, or a model of its own. */
  judge: 'policy' | PolicySource;
  judgeBudget: number;
  /** Time limit of one verifier test run. */
  testTimeoutMs: number;
}

export interface EvalArgs {
  tasks: string;
  taskSource: ReturnType<typeof taskSourceOptions>;
  only?: string[];
  sandbox: string;
  policy: EvalSource;
  /** --predictions: the time limit of one prediction's tests. */
  testTimeoutMs?: number;
  /** --name: model_name_or_path in the predictions (default: the policy's name). */
  name?: string;
  runs: number;
  ks: number[];
  agent: AgentLoopOptions;
  /** --select: Best@k over the runs. */
  selection?: SelectionArgs;
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
  predictions?: string;
  protocol?: string;
  tokenizer?: string;
  servedModel?: string;
  runs?: string;
  samples?: string;
  k?: string;
  select?: string;
  keep?: string;
  testWriter?: string;
  reproductionCommand?: string;
  judgeModel?: string;
  judgeServer?: string;
  judgeTokenizer?: string;
  judgeProtocol?: string;
  judgeBudget?: string;
  testTimeout?: string;
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
  const chosen = [values.policy, values.model, values.server, values.predictions].filter((v) => v !== undefined).length;
  if (chosen !== 1) throw usageError('give exactly one of --policy, --model, --server and --predictions');
  if (values.predictions !== undefined) return predictionsArgs(values, values.tasks, values.predictions);

  if (values.runs !== undefined && values.samples !== undefined && values.runs !== values.samples)
    throw usageError(`--runs ${values.runs} and --samples ${values.samples} disagree; they are one setting (k runs of every task): give one`);
  const runs = integer(values.runs ?? values.samples, values.runs !== undefined ? '--runs' : '--samples', 1);
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
    ...(values.select !== undefined ? { selection: selectionArgs(values, policy) } : noSelectionFlags(values)),
    concurrency: integer(values.concurrency, '--concurrency', 2),
    seed: integer(values.seed, '--seed', 0, 0),
    out: path.resolve(values.out ?? path.join('runs', `eval-${new Date().toISOString().replace(/[:.]/g, '-')}`)),
  };
}

/** The flags that shape a policy's episodes, which --predictions (patches made elsewhere) has none of. */
const EPISODE_FLAGS = ['runs', 'samples', 'k', 'select', 'temperature', 'maxTurns', 'promptBudget', 'responseBudget', 'maxTokensPerTurn', 'name', 'seed', 'protocol', 'tokenizer', 'servedModel'] as const;

/**
 * --predictions FILE: each prediction graded once in a fresh sandbox of its row. The harness's
 * time limit (1800 s a run) unless --test-timeout says otherwise.
 */
function predictionsArgs(values: EvalFlags & { sandbox: string }, tasks: string, file: string): EvalArgs {
  const given = EPISODE_FLAGS.find((f) => values[f] !== undefined && !(f === 'protocol' && values.protocol === 'openai'));
  if (given) throw usageError(`${flagName(given)} shapes a policy's episodes; --predictions grades patches made elsewhere, once each: drop ${flagName(given)}`);
  const selectionOnly = SELECTION_FLAGS.find((f) => f !== 'testTimeout' && values[f] !== undefined);
  if (selectionOnly) throw usageError(`${flagName(selectionOnly)} only matters with --select on a policy's runs; drop it with --predictions`);
  return {
    tasks,
    taskSource: taskSourceOptions({ repos: values.repos, 'test-command': values.testCommand }),
    ...(values.only !== undefined ? { only: values.only.split(',') } : {}),
    sandbox: values.sandbox,
    policy: { kind: 'predictions', file: path.resolve(file) },
    testTimeoutMs: 1000 * integer(values.testTimeout, '--test-timeout', 1800),
    runs: 1,
    ks: [1],
    agent: parseAgentLoopOptions({ enableThinking: false }, 'swerl eval'),
    concurrency: integer(values.concurrency, '--concurrency', 2),
    seed: 0,
    out: path.resolve(values.out ?? path.join('runs', `eval-${new Date().toISOString().replace(/[:.]/g, '-')}`)),
  };
}

type PolicyFlags = Pick<EvalFlags, 'policy' | 'model' | 'server' | 'protocol' | 'tokenizer' | 'servedModel'>;

/** The one of --policy, --model and --server given (parseEvalArgs checked there is exactly one). */
function policySource(flags: PolicyFlags): PolicySource {
  if (flags.policy !== undefined) {
    if (!(SCRIPTED_POLICIES as readonly string[]).includes(flags.policy)) throw usageError(`--policy is ${JSON.stringify(flags.policy)}; use ${SCRIPTED_POLICIES.join(', ')} (or --model / --server for a model)`);
    return { kind: 'scripted', policy: flags.policy as ScriptedPolicyName };
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

/** --select and the verifiers' flags, checked against the policy that will run. */
function selectionArgs(flags: EvalFlags, policy: PolicySource): SelectionArgs {
  const rules = flags.select!.split(',').map((r) => r.trim());
  for (const rule of rules) if (!(SELECTION_RULES as readonly string[]).includes(rule)) throw usageError(`--select ${rule} is not a rule; use one or more of ${SELECTION_RULES.join(', ')} (comma-separated)`);
  const needed = scoresNeeded(rules as SelectionRule[]);
  const scripted = policy.kind === 'scripted' ? `--policy ${policy.policy}` : undefined;

  const testWriter = flags.testWriter ?? 'policy';
  if (testWriter !== 'policy' && testWriter !== 'oracle') throw usageError(`--test-writer is ${JSON.stringify(testWriter)}; use policy (the evaluated one) or oracle (the scripted writer: the hidden tests)`);
  if (needed.has('reproduction') && testWriter === 'policy' && scripted) throw usageError(`--select ${rules.join(',')} needs reproduction tests and ${scripted} cannot write them; pass --test-writer oracle (the scripted writer) or evaluate a model`);

  if (flags.judgeModel !== undefined && flags.judgeServer !== undefined) throw usageError('give one of --judge-model and --judge-server');
  let judge: SelectionArgs['judge'] = 'policy';
  if (flags.judgeModel !== undefined) judge = { kind: 'model', dir: flags.judgeModel };
  else if (flags.judgeServer !== undefined) {
    if (!flags.judgeTokenizer) throw usageError('--judge-server needs --judge-tokenizer DIR: the judge\'s prompts are rendered here and sent as token ids');
    const protocol = flags.judgeProtocol ?? 'openai';
    if (protocol !== 'openai' && protocol !== 'sglang') throw usageError(`--judge-protocol is ${JSON.stringify(protocol)}; use openai or sglang`);
    judge = { kind: 'server', servers: flags.judgeServer.split(','), protocol, tokenizer: flags.judgeTokenizer };
  }
  if (needed.has('judge') && judge === 'policy' && scripted) throw usageError(`--select ${rules.join(',')} needs a judge and ${scripted} cannot score; pass --judge-model DIR or --judge-server URL`);

  if (!needed.has('judge')) for (const flag of ['judgeModel', 'judgeServer', 'judgeTokenizer', 'judgeProtocol', 'judgeBudget'] as const) if (flags[flag] !== undefined) throw usageError(`${flagName(flag)} is for the judge: add judge or hybrid to --select, or drop it`);
  if (!needed.has('reproduction')) for (const flag of ['testWriter', 'reproductionCommand'] as const) if (flags[flag] !== undefined) throw usageError(`${flagName(flag)} is for the reproduction tests: add execution or hybrid to --select, or drop it`);
  const keep = flags.keep === undefined ? undefined : integer(flags.keep, '--keep', 1);
  if (keep !== undefined && !rules.includes('hybrid')) throw usageError('--keep is the hybrid rule\'s: add hybrid to --select, or drop --keep');
  return {
    rules: rules as SelectionRule[],
    ...(keep !== undefined ? { keep } : {}),
    testWriter,
    ...(flags.reproductionCommand !== undefined ? { reproductionCommand: reproductionCommandTemplate(flags.reproductionCommand) } : {}),
    judge,
    judgeBudget: integer(flags.judgeBudget, '--judge-budget', 8192, 64),
    testTimeoutMs: 1000 * integer(flags.testTimeout, '--test-timeout', 300),
  };
}

function reproductionCommandTemplate(template: string): string {
  if (!template.includes('{files}')) throw usageError(`--reproduction-command ${JSON.stringify(template)} has no {files}; write where the test files go, e.g. "python -m pytest -rA {files}"`);
  return template;
}

const SELECTION_FLAGS = ['keep', 'testWriter', 'reproductionCommand', 'judgeModel', 'judgeServer', 'judgeTokenizer', 'judgeProtocol', 'judgeBudget', 'testTimeout'] as const;

/** commander's camelCase name back to the flag. */
const flagName = (name: string) => `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/** Without --select, its flags would do nothing: refused rather than ignored. */
function noSelectionFlags(flags: EvalFlags): object {
  const given = SELECTION_FLAGS.find((f) => flags[f] !== undefined);
  if (given) throw usageError(`${flagName(given)} only matters with --select RULES (Best@k over the runs); add --select or drop it`);
  return {};
}
