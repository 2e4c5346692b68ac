/** `swerl tasks validate|filter|generate`: check task sets, curate dataset rows, generate swe-gen suites. */
import { InvalidArgumentError, Option, type Command } from 'commander';

import { createSandboxBackend } from '../env/sandbox/backends.js';
import { filterReportMarkdown, filterRows, readRepoList, readSolveRates, type FilterOptions } from '../env/tasks/filter.js';
import { assertRunnable, loadTasks, taskSourceOptions } from '../env/tasks/load.js';
import { BUG_KINDS } from '../env/swe-gen/bugs.js';
import { LANGUAGES } from '../env/swe-gen/program.js';
import { SPLITS, type Split } from '../env/swe-gen/splits.js';
import { writeSweGenSuite, type SweGenSuiteRequest } from '../env/swe-gen/suite.js';
import type { Task } from '../env/task.js';
import { validateTasks, validationTable } from '../env/validate.js';
import { SwerlError } from '../errors.js';
import { writeFileAtomic, writeJsonAtomic } from '../util/atomic.js';
import { integerArg, listArg, positiveNumberArg, rangeArg, sandboxOption, type Register } from './flags.js';

interface SourceFlags {
  repos?: string;
  testCommand?: string;
  sandbox: string;
  concurrency: number;
}

const sourceOptions = (flags: SourceFlags) => taskSourceOptions({ repos: flags.repos, 'test-command': flags.testCommand });

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

async function validateAction(source: string, flags: SourceFlags & { runs: number; only?: string; json?: string }): Promise<number> {
  const { tasks: all, problems } = await loadTasks(source, { onError: 'skip', ...sourceOptions(flags) });
  for (const p of problems) console.error(`skipped ${p.file}${p.line ? `:${p.line}` : ''}: ${p.message}`);
  const only = flags.only?.split(',');
  const tasks = only ? all.filter((t) => only.includes(t.id)) : all;
  if (tasks.length === 0) throw new SwerlError('ERR_SWERL_INVALID_ARG', `no tasks to validate under ${source}`);
  const { backend, results } = await runValidation(tasks, flags.sandbox, flags.runs, flags.concurrency);
  console.log(validationTable(results));
  const failed = results.filter((r) => !r.ok).length + problems.length;
  console.log(`${results.length - failed + problems.length} valid, ${failed} invalid${problems.length ? ` (${problems.length} could not be loaded)` : ''}`);
  if (flags.json) await writeJsonAtomic(flags.json, { backend: backend.name, runs: flags.runs, results, problems });
  return failed === 0 ? 0 : 1;
}

interface FilterFlags extends SourceFlags {
  out: string;
  maxFiles?: number;
  maxLines?: number;
  excludeRepos?: string;
  solveRates?: string;
  maxSolveRate?: number;
  dropUnsolved: boolean;
  validate: boolean;
  runs: number;
}

async function filterAction(source: string, flags: FilterFlags): Promise<number> {
  if ((flags.maxSolveRate !== undefined || flags.dropUnsolved) !== (flags.solveRates !== undefined)) {
    throw new SwerlError('ERR_SWERL_INVALID_ARG', '--solve-rates and --max-solve-rate / --drop-unsolved go together: give the eval reports and what to drop');
  }
  const options: FilterOptions = {
    ...(flags.maxFiles !== undefined ? { maxFiles: flags.maxFiles } : {}),
    ...(flags.maxLines !== undefined ? { maxLines: flags.maxLines } : {}),
    ...(flags.excludeRepos !== undefined ? { excludeRepos: await readRepoList(flags.excludeRepos) } : {}),
    ...(flags.solveRates !== undefined ? { solveRates: await readSolveRates(flags.solveRates.split(',')) } : {}),
    ...(flags.maxSolveRate !== undefined ? { maxSolveRate: flags.maxSolveRate } : {}),
    dropUnsolved: flags.dropUnsolved,
  };
  if (flags.validate) {
    const loadProblems = new Map<number, string>();
    const { tasks } = await loadTasks(source, { onError: 'skip', ...sourceOptions(flags), onProblem: (p) => loadProblems.set(p.line ?? 0, p.message) });
    const { results } = await runValidation(tasks, flags.sandbox, flags.runs, flags.concurrency);
    options.validations = new Map(results.map((r) => [r.id, r]));
    options.loadProblems = loadProblems;
  }
  const lines: string[] = [];
  const report = await filterRows(source, options, (line) => void lines.push(line));
  await writeFileAtomic(flags.out, lines.length ? `${lines.join('\n')}\n` : '');
  await writeJsonAtomic(`${flags.out}.report.json`, { source, options: { ...options, excludeRepos: [...(options.excludeRepos ?? [])], solveRates: undefined, validations: undefined, loadProblems: undefined }, ...report });
  await writeFileAtomic(`${flags.out}.report.md`, filterReportMarkdown(report, source));
  for (const d of report.dropped) console.error(`dropped ${d.id} (line ${d.line}): ${d.reasons.join('; ')}`);
  for (const f of report.flakyTests) console.error(`kept ${f.id} without flaky test(s): ${f.tests.join(', ')}`);
  for (const u of report.unreadable) console.error(`unreadable line ${u.line}: ${u.message}`);
  console.log(`${report.kept} kept, ${report.dropped.length} dropped, ${report.unreadable.length} unreadable; wrote ${flags.out} and ${flags.out}.report.{json,md}`);
  return 0;
}

interface GenerateFlags {
  count?: number;
  seeds?: { min: number; max: number };
  split: Split;
  languages?: string[];
  kinds?: string[];
  functions?: { min: number; max: number };
  lines?: { min: number; max: number };
  bugs?: number;
  force: boolean;
  disjointFrom?: string;
}

function bugsArg(value: string): number {
  if (value !== '1' && value !== '2') throw new InvalidArgumentError(`--bugs is ${JSON.stringify(value)}; give 1 or 2`);
  return Number(value);
}

async function generateAction(outDir: string, flags: GenerateFlags): Promise<number> {
  if (flags.count !== undefined && flags.seeds !== undefined) {
    throw new SwerlError('ERR_SWERL_INVALID_ARG', '--count and --seeds both given; give the number of tasks (seeds from 0) or the seed range A-B');
  }
  const request: SweGenSuiteRequest = {
    split: flags.split,
    force: flags.force,
    ...(flags.count !== undefined ? { count: flags.count } : {}),
    ...(flags.seeds !== undefined ? { firstSeed: flags.seeds.min, count: flags.seeds.max - flags.seeds.min + 1 } : {}),
    ...(flags.languages !== undefined ? { languages: flags.languages as SweGenSuiteRequest['languages'] } : {}),
    ...(flags.kinds !== undefined ? { kinds: flags.kinds as SweGenSuiteRequest['kinds'] } : {}),
    ...(flags.functions !== undefined ? { functions: flags.functions } : {}),
    ...(flags.lines !== undefined ? { lines: flags.lines } : {}),
    ...(flags.bugs !== undefined ? { bugs: flags.bugs as 1 | 2 } : {}),
    ...(flags.disjointFrom !== undefined ? { disjointFrom: flags.disjointFrom } : {}),
  };
  const suite = await writeSweGenSuite(outDir, request);
  console.log(suite.summary);
  return 0;
}

/** The flags of every verb that reads a task source and runs it in sandboxes. */
function withSourceFlags(command: Command, concurrencyHelp: string): Command {
  return command
    .option('--repos <dir>', 'clones for dataset rows: DIR/owner__name or DIR/owner/name')
    .option('--test-command <cmd>', 'the test command for rows (the test files are appended)')
    .addOption(sandboxOption())
    .option('--concurrency <n>', concurrencyHelp, integerArg('--concurrency'), 2);
}

export function addTasksCommand(program: Command, register: Register): void {
  const tasks = program
    .command('tasks')
    .summary('validate task sets, curate dataset rows, generate tasks')
    .description('Validate task sets and curate dataset rows (SWE-bench, SWE-rebench, R2E-Gym, swerl task folders); generate swe-gen suites.');
  withSourceFlags(
    tasks
      .command('validate')
      .description('check each task: the gold patch must score 1 and the untouched repository 0')
      .argument('<path>', 'a task folder suite, or SWE-bench / R2E-Gym JSON/JSONL rows'),
    'tasks at once',
  )
    .option('--runs <n>', 'runs of each check', integerArg('--runs'), 2)
    .option('--only <id,...>', 'just these task ids')
    .option('--json <file>', 'also write the results as JSON')
    .action(register(validateAction));
  withSourceFlags(
    tasks
      .command('filter')
      .description('curate dataset rows; writes FILE and FILE.report.{json,md}')
      .argument('<rows>', 'a JSONL file of dataset rows')
      .requiredOption('--out <file>', 'where the kept rows are written')
      .option('--max-files <n>', 'gold patches touching more files are dropped', integerArg('--max-files'))
      .option('--max-lines <n>', 'gold patches of more lines (added + removed) are dropped', integerArg('--max-lines'))
      .option('--exclude-repos <list|file>', 'owner/name,… or a file of rows or names (e.g. SWE-bench Verified)')
      .option('--solve-rates <reports>', 'swerl eval reports (report.json,…), with --max-solve-rate or --drop-unsolved')
      .option('--max-solve-rate <x>', 'drop rows solved at least this often (Nebius: 0.67)', positiveNumberArg('--max-solve-rate'))
      .option('--drop-unsolved', 'drop rows never solved', false)
      .option('--validate', 'run gold and base --runs times: drop rows whose gold fails or base passes, remove flaky PASS_TO_PASS tests', false)
      .option('--runs <n>', 'runs of each check with --validate', integerArg('--runs'), 3),
    'tasks at once with --validate',
  ).action(register(filterAction));
  tasks
    .command('generate')
    .description('generate a swe-gen suite: small Python/JavaScript repositories with a seeded bug, an issue, hidden tests and a gold patch (tasks/README.md)')
    .argument('<out-dir>', 'the suite folder (new or empty, unless --force)')
    .option('--count <n>', 'tasks, seeds 0 to n-1 (default 100)', integerArg('--count'))
    .option('--seeds <a-b>', 'the seed range, both ends included', rangeArg('--seeds', 0))
    .addOption(new Option('--split <split>', 'train or heldout: their seeds never meet').choices(SPLITS).default('train'))
    .option('--languages <list>', `the tasks' languages (default ${LANGUAGES.join(',')})`, listArg('--languages', LANGUAGES))
    .option('--kinds <list>', `bug kinds (default ${BUG_KINDS.join(',')})`, listArg('--kinds', BUG_KINDS))
    .option('--functions <n|a-b>', 'functions in the source file (default 2-4)', rangeArg('--functions', 1))
    .option('--lines <n|a-b>', 'lines of the source file (default 15-40)', rangeArg('--lines', 1))
    .option('--bugs <n>', 'bugs per task (1 or 2), each in its own function (default 1)', bugsArg)
    .option('--force', 'write into a folder that is not empty, replacing tasks of the same ids', false)
    .option('--disjoint-from <suite>', 'refuse a suite that would share a seed or a program with this one')
    .action(register(generateAction));
}
