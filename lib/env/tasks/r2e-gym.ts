/**
 * R2E-Gym rows as Tasks. The images carry the hidden tests at /r2e_tests and the test script
 * at /testbed/run_tests.sh (which runs pytest -rA over r2e_tests from /testbed); both are
 * moved out of the sandbox when it starts and put back only for grading. Reward 1 iff the
 * "Class.test" map R2E-Gym's own log parser reads (parseR2eGymLog) equals expected_output_json.
 */
import { invalidArg } from '../../errors.js';
import { optionsParser, type Infer } from '../../schema.js';
import type { Task } from '../task.js';

/** An R2E-Gym row: the fields read here; any others ride along. */
const ROW_SCHEMA = {
  type: 'object',
  additionalProperties: true,
  required: ['docker_image', 'problem_statement', 'expected_output_json'],
  properties: {
    docker_image: { type: 'string', minLength: 1 },
    problem_statement: { type: 'string' },
    expected_output_json: { anyOf: [{ type: 'string' }, { type: 'object', additionalProperties: { type: 'string' } }] },
    repo_name: { type: 'string' },
    commit_hash: { type: 'string' },
    execution_result_content: { anyOf: [{ type: 'string' }, { type: 'object' }] },
  },
} as const;
export type R2eGymRow = Infer<typeof ROW_SCHEMA>;

const parseRow = optionsParser(ROW_SCHEMA);

// R2E-Gym's run_tests.sh runs its own unittest runner instead of pytest for tornado, and for
// pillow rows whose tests are unittest cases (the runner's file is then among the row's tests).
const UNITTEST_RUNNERS = ['tornado_unittest_runner.py', 'unittest_custom_runner.py'];

/** A field the dataset stores as JSON text, parsed (given already parsed, as it is). */
function jsonField(value: unknown, field: string, fix: string): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    throw invalidArg(field, 'is not valid JSON', fix);
  }
}

/** Whether the row's tests run under one of R2E-Gym's unittest runners, where pytest's guard cannot load. */
function runsUnittestRunner(row: R2eGymRow): boolean {
  if (row.repo_name === 'tornado') return true;
  const content = jsonField(row.execution_result_content, 'row.execution_result_content', "give the row's field as the dataset has it, or leave it out");
  const names = (content as { test_file_names?: unknown } | undefined)?.test_file_names;
  return Array.isArray(names) && names.some((name) => UNITTEST_RUNNERS.includes(String(name).split('/').pop()!));
}

/** The text inside [ISSUE]...[/ISSUE] when the statement is wrapped, else all of it. */
export function issueText(statement: string): string {
  const m = /\[ISSUE\]([\s\S]*?)\[\/ISSUE\]/.exec(statement);
  return (m ? m[1]! : statement).trim();
}

export function r2eGymTask(value: unknown): Task {
  const row = parseRow(value, 'row');
  const expected = jsonField(row.expected_output_json, 'row.expected_output_json', 'give the test→status map or its JSON encoding');
  if (typeof expected !== 'object' || expected === null || Array.isArray(expected) || Object.values(expected).some((s) => typeof s !== 'string')) {
    throw invalidArg('row.expected_output_json', 'must be a map from test key to status');
  }
  const id = row.repo_name && row.commit_hash ? `${row.repo_name}@${row.commit_hash.slice(0, 12)}` : row.docker_image;
  return {
    id,
    source: 'r2e-gym',
    problemStatement: issueText(row.problem_statement),
    image: row.docker_image,
    workdir: '/testbed',
    testCommand: 'bash run_tests.sh',
    logFormat: 'r2e-gym',
    ...(runsUnittestRunner(row) ? { guard: false as const } : {}),
    hiddenTests: {
      kind: 'image-paths',
      moves: [
        { from: '/r2e_tests', to: '/testbed/r2e_tests' },
        { from: '/testbed/run_tests.sh', to: '/testbed/run_tests.sh' },
      ],
    },
    resolution: { rule: 'r2e-gym', expected: expected as Record<string, string> },
    metadata: { repo: row.repo_name, commit: row.commit_hash },
  };
}
