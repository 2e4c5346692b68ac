/** The words swerl's SWE environment says to the agent (ours; the interface follows R2E-Gym). */

export function systemPrompt(toolText: string): string {
  return [
    'You are a software engineer working in a code repository inside an isolated sandbox.',
    'You act by calling tools; each call runs, and its output comes back in the next message.',
    'There is no network. Nobody will answer questions: work until the task is done, then call finish.',
    '',
    toolText,
  ].join('\n');
}

/** The opening for small models: a line of role and the compact tool list. */
export function compactSystemPrompt(compactToolText: string): string {
  return ['You fix issues in a code repository by calling tools.', compactToolText].join('\n');
}

export function compactIssuePrompt(problemStatement: string, workdir: string): string {
  return [`Repository: ${workdir}`, '<issue>', problemStatement.trim(), '</issue>', 'Fix the code, run the tests, then call finish.'].join('\n');
}

/** Where the repository is and the issue, as both the fixer's and the test writer's prompts open. */
function filedIssue(problemStatement: string, workdir: string): string[] {
  return [`The repository is checked out at ${workdir}. A user filed this issue:`, '', '<issue>', problemStatement.trim(), '</issue>', ''];
}

export function issuePrompt(problemStatement: string, workdir: string): string {
  return [
    ...filedIssue(problemStatement, workdir),
    `Change the code under ${workdir} so that the issue is resolved. Suggested approach:`,
    '1. Read the relevant code and find where the behaviour comes from.',
    '2. Reproduce the problem with a small script, and run it again after your change.',
    '3. Make the smallest change that fixes the cause; think about edge cases.',
    '4. Run the existing tests that cover the code you changed.',
    'You need not add tests: hidden tests will check your change. Do not edit existing tests to make them pass.',
    'When you are done, call finish. Your change is taken from the working tree (git diff).',
  ].join('\n');
}

/**
 * The test writer's task (test-time scaling's reproduction tests): tests that fail now because
 * of the issue and will pass once it is fixed, in new files, the code left as it is.
 */
export function reproductionPrompt(problemStatement: string, workdir: string): string {
  return [
    ...filedIssue(problemStatement, workdir),
    'Do not fix it. Write tests that reproduce it: tests that fail on the code as it is now',
    'because of the issue, and that will pass once the issue is fixed. Each test checks one',
    'behaviour the issue asks for; tests of behaviour that already works are of no use.',
    '1. Read the code and the existing tests; follow their framework, imports and layout.',
    '2. Put your tests in NEW test files beside the existing ones (do not edit existing files).',
    '3. Run your tests and check that they fail, and fail for the reason the issue describes.',
    'Do not change the code under test. When you are done, call finish: the new files are taken',
    'from the working tree (git diff).',
  ].join('\n');
}

export const NO_TOOL_CALL =
  'Your last message called no tool. Every reply must call exactly one tool with the ' +
  '<function=NAME><parameter=KEY>VALUE</parameter></function> format (or a tool call); call finish when you are done.';

/** A SWE observation without the steps line the env appends to it (stepsRemainingLine): what the tool itself answered. */
export function withoutStepsLine(observation: string): string {
  const at = observation.lastIndexOf('\nSteps Remaining: ');
  return at < 0 ? observation : observation.slice(0, at);
}

export function stepsRemainingLine(remaining: number): string {
  const line = `Steps Remaining: ${remaining}`;
  return remaining <= 1 ? `${line}\nYou are about to run out of steps: call finish now to submit your work.` : line;
}
