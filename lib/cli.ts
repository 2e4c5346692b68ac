#!/usr/bin/env node
/** The swerl command line. */
import { readFile } from 'node:fs/promises';
import { basename, resolve } from 'node:path';

import { SwerlError } from './errors.js';
import { EVAL_USAGE } from './eval/args.js';
import { evalCommand } from './eval/command.js';
import { createSandboxBackend } from './env/sandbox/backends.js';
import { assertRunnable, loadTasks, taskSourceOptions } from './env/tasks/load.js';
import type { Task } from './env/tasks/task.js';
import { filterReportMarkdown, filterRows, readRepoList, readSolveRates, type FilterOptions } from './env/tasks/filter.js';
import { validateTasks, validationTable } from './env/validate.js';
import { train } from './train/trainer.js';
import { writeFileAtomic, writeJsonAtomic } from './util/atomic.js';
import { commandArgs } from './util/command-args.js';

const USAGE = `usage: swerl <command>

commands:
  train <config.json>     train a policy (GRPO++ and friends); see examples/*.json
      --resume                 continue the run in run.dir from its last checkpoint
      --steps N                override run.steps
      --dir DIR                override run.dir
      --repos DIR              override tasks.repos (clones for dataset rows)
                               (relative paths in the config are taken from the working directory)
  serve <model dir>       an OpenAI-compatible server for the native policy (completions,
                          chat with tools, SSE, SGLang's /generate and /update_weights_from_disk)
      --host HOST              default 127.0.0.1
      --port N                 default 8000 (0: any free port)
      --served-model-name ID   the model id clients send (default: the directory's name)
      --device cpu|cuda[:N]    default cpu
      --max-batch-size N       sequences decoded together (default 64)
      --max-n N                most choices per request (default 64)
      --max-body-bytes N       largest request body (default 16 MiB)
      --api-key KEY            require Authorization: Bearer KEY on every route but /health
                               (default: $SWERL_API_KEY; none when unset)
      --weights-root DIR       /update_weights_from_disk loads only from under DIR
                               (default: the model directory's parent folder)
${EVAL_USAGE}  tasks validate <path>   gold patch must score 1 and the untouched repo 0 (each run twice)
      --repos DIR              clones for dataset rows: DIR/owner__name or DIR/owner/name
      --test-command CMD       the test command for rows (the test files are appended)
      --sandbox local|docker   backend (default local)
      --runs N                 runs of each check (default 2)
      --concurrency N          tasks at once (default 2)
      --only ID[,ID…]          just these task ids
      --json FILE              also write the results as JSON
  tasks filter <rows.jsonl> --out FILE   curate dataset rows; writes FILE and FILE.report.{json,md}
      --max-files N --max-lines N          gold patch size limits (files; added + removed lines)
      --exclude-repos LIST|FILE            owner/name,… or a file of rows or names (e.g. SWE-bench Verified)
      --solve-rates R.json[,R.json…]       swerl eval reports: with --max-solve-rate X (Nebius: 0.67)
      --max-solve-rate X --drop-unsolved   drop rows solved >= X of the time / never solved
      --validate                           run gold and base --runs times (default 3): drop rows whose gold
                                           fails or base passes, remove flaky PASS_TO_PASS tests
      --repos DIR --test-command CMD --sandbox local|docker --concurrency N   as for validate
  sandbox reap            remove sandboxes left by runs that died
      --sandbox local|docker   backend (default local)
      --label LABEL            only this run label
      --all                    also those of live runs
`;

function positiveInt(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new SwerlError('ERR_SWERL_INVALID_ARG', `${flag} is ${JSON.stringify(value)}; give a positive integer`);
  return n;
}

/** Gold and base runs of each task in a sandbox backend, a line per task as it finishes (tasks validate, tasks filter --validate). */
async function runValidation(tasks: Task[], sandbox: string, runs: number, concurrency: number) {
  assertRunnable(tasks, sandbox);
  const backend = await createSandboxBackend(sandbox);
  console.log(`validating ${tasks.length} task(s) in the ${backend.name} sandbox, ${runs} run(s) each`);
  const results = await validateTasks(tasks, backend, {
    runs,
    concurrency,
    onTask: (r) => console.error(`${r.ok ? 'ok  ' : 'FAIL'} ${r.id}${r.problem ? `: ${r.problem}` : ''}`),
  });
  return { backend, results };
}

async function tasksValidate(args: string[]): Promise<number> {
  const { values, positionals } = commandArgs(args, {
    sandbox: { type: 'string', default: 'local' },
    runs: { type: 'string' },
    concurrency: { type: 'string' },
    only: { type: 'string' },
    json: { type: 'string' },
    repos: { type: 'string' },
    'test-command': { type: 'string' },
  });
  if (positionals.length !== 1) throw new SwerlError('ERR_SWERL_INVALID_ARG', `tasks validate takes one path, got ${positionals.length}\n\n${USAGE}`);
  const { tasks: all, problems } = await loadTasks(positionals[0]!, { onError: 'skip', ...taskSourceOptions(values) });
  for (const p of problems) console.error(`skipped ${p.file}${p.line ? `:${p.line}` : ''}: ${p.message}`);
  const only = values.only?.split(',');
  const tasks = only ? all.filter((t) => only.includes(t.id)) : all;
  if (tasks.length === 0) throw new SwerlError('ERR_SWERL_INVALID_ARG', `no tasks to validate under ${positionals[0]}`);
  const runs = positiveInt(values.runs, '--runs', 2);
  const { backend, results } = await runValidation(tasks, values.sandbox!, runs, positiveInt(values.concurrency, '--concurrency', 2));
  console.log(validationTable(results));
  const failed = results.filter((r) => !r.ok).length + problems.length;
  console.log(`${results.length - failed + problems.length} valid, ${failed} invalid${problems.length ? ` (${problems.length} could not be loaded)` : ''}`);
  if (values.json) await writeJsonAtomic(values.json, { backend: backend.name, runs, results, problems });
  return failed === 0 ? 0 : 1;
}

function positiveNumber(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!(n > 0)) throw new SwerlError('ERR_SWERL_INVALID_ARG', `${flag} is ${JSON.stringify(value)}; give a number > 0`);
  return n;
}

async function tasksFilter(args: string[]): Promise<number> {
  const { values, positionals } = commandArgs(args, {
    out: { type: 'string' },
    'max-files': { type: 'string' },
    'max-lines': { type: 'string' },
    'exclude-repos': { type: 'string' },
    'solve-rates': { type: 'string' },
    'max-solve-rate': { type: 'string' },
    'drop-unsolved': { type: 'boolean', default: false },
    validate: { type: 'boolean', default: false },
    runs: { type: 'string' },
    repos: { type: 'string' },
    'test-command': { type: 'string' },
    sandbox: { type: 'string', default: 'local' },
    concurrency: { type: 'string' },
  });
  if (positionals.length !== 1) throw new SwerlError('ERR_SWERL_INVALID_ARG', `tasks filter takes one rows file, got ${positionals.length}\n\n${USAGE}`);
  if (!values.out) throw new SwerlError('ERR_SWERL_INVALID_ARG', 'tasks filter needs --out FILE: where the kept rows are written');
  const source = positionals[0]!;
  const maxSolveRate = positiveNumber(values['max-solve-rate'], '--max-solve-rate');
  if ((maxSolveRate !== undefined || values['drop-unsolved']) !== (values['solve-rates'] !== undefined)) {
    throw new SwerlError('ERR_SWERL_INVALID_ARG', '--solve-rates and --max-solve-rate / --drop-unsolved go together: give the eval reports and what to drop');
  }
  const options: FilterOptions = {
    ...(values['max-files'] !== undefined ? { maxFiles: positiveInt(values['max-files'], '--max-files', 1) } : {}),
    ...(values['max-lines'] !== undefined ? { maxLines: positiveInt(values['max-lines'], '--max-lines', 1) } : {}),
    ...(values['exclude-repos'] !== undefined ? { excludeRepos: await readRepoList(values['exclude-repos']) } : {}),
    ...(values['solve-rates'] !== undefined ? { solveRates: await readSolveRates(values['solve-rates'].split(',')) } : {}),
    ...(maxSolveRate !== undefined ? { maxSolveRate } : {}),
    dropUnsolved: values['drop-unsolved']!,
  };
  if (values.validate) {
    const loadProblems = new Map<number, string>();
    const { tasks } = await loadTasks(source, { onError: 'skip', ...taskSourceOptions(values), onProblem: (p) => loadProblems.set(p.line ?? 0, p.message) });
    const { results } = await runValidation(tasks, values.sandbox!, positiveInt(values.runs, '--runs', 3), positiveInt(values.concurrency, '--concurrency', 2));
    options.validations = new Map(results.map((r) => [r.id, r]));
    options.loadProblems = loadProblems;
  }
  const lines: string[] = [];
  const report = await filterRows(source, options, (line) => void lines.push(line));
  await writeFileAtomic(values.out, lines.length ? `${lines.join('\n')}\n` : '');
  await writeJsonAtomic(`${values.out}.report.json`, { source, options: { ...options, excludeRepos: [...(options.excludeRepos ?? [])], solveRates: undefined, validations: undefined, loadProblems: undefined }, ...report });
  await writeFileAtomic(`${values.out}.report.md`, filterReportMarkdown(report, source));
  for (const d of report.dropped) console.error(`dropped ${d.id} (line ${d.line}): ${d.reasons.join('; ')}`);
  for (const f of report.flakyTests) console.error(`kept ${f.id} without flaky test(s): ${f.tests.join(', ')}`);
  for (const u of report.unreadable) console.error(`unreadable line ${u.line}: ${u.message}`);
  console.log(`${report.kept} kept, ${report.dropped.length} dropped, ${report.unreadable.length} unreadable; wrote ${values.out} and ${values.out}.report.{json,md}`);
  return 0;
}

async function trainCommand(args: string[]): Promise<number> {
  const { values, positionals } = commandArgs(args, { resume: { type: 'boolean', default: false }, steps: { type: 'string' }, dir: { type: 'string' }, repos: { type: 'string' } });
  if (positionals.length !== 1) throw new SwerlError('ERR_SWERL_INVALID_ARG', `train takes one config file, got ${positionals.length}\n\n${USAGE}`);
  let config: Record<string, unknown>;
  try {
    config = JSON.parse(await readFile(positionals[0]!, 'utf8')) as Record<string, unknown>;
  } catch (error) {
    throw new SwerlError('ERR_SWERL_INVALID_ARG', `cannot read the config ${positionals[0]}: ${(error as Error).message}`);
  }
  if (typeof config !== 'object' || config === null || Array.isArray(config)) throw new SwerlError('ERR_SWERL_INVALID_ARG', `${positionals[0]} must hold a JSON object`);
  const run = { ...((config.run ?? {}) as Record<string, unknown>) };
  if (values.resume) run.resume = true;
  if (values.steps !== undefined) run.steps = positiveInt(values.steps, '--steps', 1);
  if (values.dir !== undefined) run.dir = values.dir;
  if (values.repos !== undefined) {
    if (typeof config.tasks !== 'object' || config.tasks === null) throw new SwerlError('ERR_SWERL_INVALID_ARG', `--repos needs a tasks section in ${positionals[0]}`);
    config.tasks = { ...(config.tasks as Record<string, unknown>), repos: values.repos };
  }

  // Ctrl-C: finish nothing new, close every env, keep what is written. A second one forces (the
  // exit hook of sandbox/cleanup.ts still kills and removes every live sandbox then). The
  // trainer closes its envs itself, so cleanup.ts's signal handlers stay off: they would
  // destroy sandboxes under episodes still resetting (an ERR_SWERL_SANDBOX instead of a
  // clean stop) and re-raise the signal, which would be taken for the second Ctrl-C and exit
  // before summary.json is written.
  process.env.SWERL_NO_SIGNAL_HANDLERS = '1';
  // Workaround until the native addon pins it: OpenBLAS's pthread pool is shut down by its
  // fork handler, so a multi-threaded BLAS call (a generation step on the libuv pool) running
  // while a sandbox command is spawned waits forever for workers that are gone. Read when the
  // addon loads (lazily, in train()), so setting it here is in time.
  process.env.OPENBLAS_NUM_THREADS ??= '1';
  // Nor may a closed terminal or pipe (SIGHUP, `| head`) turn a stop into a crash: an EPIPE/EIO
  // on the progress output would be an uncaught exception, with episodes still open.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  const stop = new AbortController();
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const onSignal = () => {
    if (stop.signal.aborted) process.exit(130);
    console.error('\nswerl: stopping: closing the running episodes (Ctrl-C again to force)');
    stop.abort();
  };
  for (const signal of signals) process.on(signal, onSignal);
  let summary: Awaited<ReturnType<typeof train>>;
  try {
    summary = await train({ ...config, run }, { signal: stop.signal });
  } finally {
    for (const signal of signals) process.removeListener(signal, onSignal);
  }
  const evals = summary.evals.map((e) => `${e.step}:${e.success.toFixed(3)}`).join(' ');
  console.log(`${summary.stopped ? 'stopped' : 'done'}: ${summary.steps} step(s) in ${summary.seconds.toFixed(1)} s, run dir ${summary.dir}`);
  if (evals) console.log(`greedy success by step: ${evals}`);
  if (summary.checkpoint) console.log(`last checkpoint: ${summary.checkpoint}`);
  return summary.stopped ? 130 : 0;
}

async function serveCommand(args: string[]): Promise<number> {
  const { values, positionals } = commandArgs(args, {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '8000' },
    'served-model-name': { type: 'string' },
    device: { type: 'string', default: 'cpu' },
    'max-batch-size': { type: 'string' },
    'max-n': { type: 'string' },
    'max-body-bytes': { type: 'string' },
    'api-key': { type: 'string' },
    'weights-root': { type: 'string' },
  });
  if (positionals.length !== 1) throw new SwerlError('ERR_SWERL_INVALID_ARG', `serve takes one model directory, got ${positionals.length}\n\n${USAGE}`);
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new SwerlError('ERR_SWERL_INVALID_ARG', `--port is ${JSON.stringify(values.port)}; give a port number (0 for any)`);
  const dir = positionals[0]!;
  const { NativePolicy } = await import('./model/native-policy.js');
  const { startServer } = await import('./serve/server.js');
  const policy = await NativePolicy.load(dir, {
    device: values.device!,
    ...(values['max-batch-size'] !== undefined ? { maxBatchSize: positiveInt(values['max-batch-size'], '--max-batch-size', 64) } : {}),
  });
  const modelName = values['served-model-name'] ?? basename(resolve(dir));
  // An empty SWERL_API_KEY is unset; an empty --api-key is refused by startServer.
  const apiKey = values['api-key'] ?? (process.env.SWERL_API_KEY || undefined);
  const server = await startServer(policy, {
    host: values.host!,
    port,
    modelName,
    weightsRoot: resolve(values['weights-root'] ?? resolve(dir, '..')),
    ...(values['max-n'] !== undefined ? { maxN: positiveInt(values['max-n'], '--max-n', 64) } : {}),
    ...(values['max-body-bytes'] !== undefined ? { maxBodyBytes: positiveInt(values['max-body-bytes'], '--max-body-bytes', 16 * 1024 * 1024) } : {}),
    ...(apiKey !== undefined ? { apiKey } : {}),
  });
  console.log(`swerl serve: ${modelName} at ${server.url}/v1 (Ctrl-C stops)`);
  await new Promise<void>((done) => {
    const stop = () => done();
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, stop);
  });
  await server.close();
  policy.dispose();
  console.log('swerl serve: stopped');
  return 0;
}

async function sandboxReap(args: string[]): Promise<number> {
  const { values, positionals } = commandArgs(args, { sandbox: { type: 'string', default: 'local' }, label: { type: 'string' }, all: { type: 'boolean', default: false } });
  if (positionals.length) throw new SwerlError('ERR_SWERL_INVALID_ARG', `sandbox reap takes options only, got ${positionals.join(' ')}\n\n${USAGE}`);
  const backend = await createSandboxBackend(values.sandbox!);
  const removed = await backend.reap({ ...(values.label ? { label: values.label } : {}), all: values.all! });
  console.log(`removed ${removed} sandbox(es)`);
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const [command, sub, ...rest] = argv;
  if (command === 'train') return trainCommand(argv.slice(1));
  if (command === 'serve') return serveCommand(argv.slice(1));
  if (command === 'eval') return evalCommand(argv.slice(1));
  if (command === 'tasks' && sub === 'validate') return tasksValidate(rest);
  if (command === 'tasks' && sub === 'filter') return tasksFilter(rest);
  if (command === 'sandbox' && sub === 'reap') return sandboxReap(rest);
  if (command === undefined || command === '--help' || command === '-h') {
    console.log(USAGE);
    return 0;
  }
  console.error(`unknown command: ${argv.join(' ')}\n\n${USAGE}`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    console.error(error instanceof SwerlError ? `swerl: ${error.message}` : error);
    process.exitCode = error instanceof SwerlError && error.code === 'ERR_SWERL_INVALID_ARG' ? 2 : 1;
  },
);
