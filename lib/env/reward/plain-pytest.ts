/**
 * Grading's own runner for plain pytest files (guard/plain_pytest.py). A generated task's tests
 * are a few functions of asserts, and importing pytest is most of what grading one costs: ~670
 * ms of CPU a grade under pytest against ~430 with this runner (`npm run bench:grading`). It
 * takes only the test command swe-gen writes (pytest with its plugins off, the summary flag,
 * named files), runs files that are plain as pytest would, with the same summary lines and the
 * guard's record, and hands anything else to pytest before the repository's code runs. The
 * agent's own test runs are the task's command as written: only grading uses this.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { packageRoot } from '../../native.js';

// `PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -m pytest -rA -p no:cacheprovider tests/test_x.py`
const PLAIN_COMMAND = /^PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -m pytest((?: (?:-rA|-q|-p no:cacheprovider))*)((?: [\w./-]+\.py)+)$/;

/** The runner's file name in the guard's folder. */
export const PLAIN_PYTEST_FILE = 'plain_pytest.py';

let source: Buffer | undefined;

/** The runner's source, to install beside the guard. */
export function plainPytestSource(): Buffer {
  source ??= readFileSync(path.join(packageRoot(), 'lib', 'env', 'reward', 'guard', PLAIN_PYTEST_FILE));
  return source;
}

/**
 * The task's test command with the runner at `runnerPath` in pytest's place (the same
 * arguments), or null when the command is not one the runner takes.
 */
export function plainPytestCommand(testCommand: string, runnerPath: string): string | null {
  const m = PLAIN_COMMAND.exec(testCommand.trim());
  if (!m) return null;
  return `PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 ${runnerPath}${m[1]}${m[2]}`;
}
