import t, { type Test } from 'tap';

import { SwerlError } from '../../../lib/errors.js';
import { LocalSandboxBackend } from '../../../lib/env/sandbox/local.js';
import type { SandboxBackend } from '../../../lib/env/sandbox/sandbox.js';
import { SweEnv } from '../../../lib/env/swe-env.js';
import { loadSwerlTaskFolder } from '../../../lib/env/tasks/swerl-folder.js';
import type { Task } from '../../../lib/env/task.js';

const root = t.testdir({ root: {} }) + '/root';
const backend = new LocalSandboxBackend({ root });

const MARKER = 'HIDDEN-MARKER-7f3a';
const HIDDEN_TEST = `# ${MARKER}
from calc import add, mul

def test_add():
    assert add(2, 3) == 5

def test_mul():
    assert mul(2, 3) == 6
`;

function fixtureTask(t: Test): Promise<Task> {
  const dir = t.testdir({
    'calc-add': {
      'task.json': JSON.stringify({
        id: 'calc-add',
        language: 'python',
        difficulty: 'easy',
        test_command: 'python3 -m pytest -rA -p no:cacheprovider tests/test_calc.py',
        log_format: 'pytest',
        fail_to_pass: ['tests/test_calc.py::test_add'],
        pass_to_pass: ['tests/test_calc.py::test_mul'],
      }),
      'issue.md': 'add(2, 3) returns -1 instead of 5.\n',
      repo: {
        'calc.py': 'def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n',
        '.gitignore': '__pycache__/\n',
        tests: { 'test_calc.py': 'from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n' },
      },
      tests: { tests: { 'test_calc.py': HIDDEN_TEST } },
      'gold.patch': [
        'diff --git a/calc.py b/calc.py',
        '--- a/calc.py',
        '+++ b/calc.py',
        '@@ -1,5 +1,5 @@',
        ' def add(a, b):',
        '-    return a - b',
        '+    return a + b',
        ' ',
        ' ',
        ' def mul(a, b):',
        '',
      ].join('\n'),
    },
  });
  return loadSwerlTaskFolder(`${dir}/calc-add`);
}

const bash = (cmd: string) => `I will run a command.\n<function=execute_bash>\n<parameter=cmd>${cmd}</parameter>\n</function>`;
const FIX = '<function=file_editor><parameter=command>str_replace</parameter><parameter=path>/testbed/calc.py</parameter><parameter=old_str>return a - b</parameter><parameter=new_str>return a + b</parameter></function>';
/** FIX undone: the file as it was. */
const UNFIX = '<function=file_editor><parameter=command>str_replace</parameter><parameter=path>/testbed/calc.py</parameter><parameter=old_str>return a + b</parameter><parameter=new_str>return a - b</parameter></function>';

t.test('an episode: reset, tools, finish, reward 1 with the patch', async (t) => {
  const env = new SweEnv(await fixtureTask(t), backend, { maxSteps: 7 });
  t.teardown(() => env.close());
  const messages = await env.reset();
  t.same(messages.map((m) => m.role), ['system', 'user']);
  t.match(messages[0]!.content, /<function=execute_bash>|execute_bash/);
  t.match(messages[0]!.content, /file_editor/);
  t.match(messages[1]!.content, /add\(2, 3\) returns -1 instead of 5\./);
  t.match(messages[1]!.content, /Steps Remaining: 7$/);

  const listed = await env.step(bash('ls'));
  t.equal(listed.observation, 'Exit code: 0\nExecution output of [execute_bash]:\ncalc.py\ntests\n\nSteps Remaining: 6');
  t.equal(listed.done, false);
  t.equal(listed.info.tool, 'execute_bash');
  t.equal(listed.info.steps, 1);
  t.equal(listed.info.formatError, undefined, 'one call: no format error');

  const silent = await env.step('I think the bug is in add.');
  t.match(silent.observation, /called no tool/);
  t.match(silent.observation, /Steps Remaining: 5$/);
  t.equal(silent.info.tool, undefined, 'a reply without a call still counts as a step');
  t.equal(silent.info.formatError, 'no tool call');

  const twice = await env.step(`${bash('true')}\n${bash('ls')}`);
  t.equal(twice.info.tool, 'execute_bash', 'the first of two calls runs');
  t.equal(twice.info.formatError, '2 tool calls in one turn (only the first ran)');
  const malformed = await env.step({ content: '', tool_calls: [{ function: { name: 'file_editor', arguments: '{not json' } }] });
  t.match(malformed.info.formatError, /^a malformed tool call: .*not valid JSON/);

  const edited = await env.step({ content: '', tool_calls: [{ function: { name: 'file_editor', arguments: JSON.stringify({ command: 'str_replace', path: '/testbed/calc.py', old_str: 'return a - b', new_str: 'return a + b' }) } }] });
  t.equal(edited.info.tool, 'file_editor', 'JSON tool calls work too');
  t.match(edited.observation, /return a \+ b/);

  const finished = await env.step('<function=finish><parameter=command>submit</parameter></function>');
  t.equal(finished.done, true);
  t.equal(finished.info.termination, 'submitted');
  await t.rejects(env.step(bash('true')), { code: 'ERR_SWERL_INVALID_ARG', message: /after the episode ended \(submitted\)/ });

  const reward = await env.reward();
  t.equal(reward.reward, 1, reward.reason);
  t.same(reward.tests, { 'tests/test_calc.py::test_add': 'PASSED', 'tests/test_calc.py::test_mul': 'PASSED' });
  t.match(reward.patch, /^diff --git a\/calc\.py b\/calc\.py/);
  t.match(reward.patch, /\+    return a \+ b/);
  t.notMatch(reward.patch, /test_calc/, 'the hidden tests are not part of the patch');
  t.equal(await env.reward(), reward, 'graded once');
});

t.test("prompt 'compact': the same tools in a tenth of the words", async (t) => {
  const full = new SweEnv(await fixtureTask(t), backend, { maxSteps: 4 });
  const compact = new SweEnv(await fixtureTask(t), backend, { maxSteps: 4, prompt: 'compact' });
  t.teardown(async () => (await full.close(), await compact.close()));
  const [a, b] = [await full.reset(), await compact.reset()];
  t.ok(b[0]!.content.length * 8 < a[0]!.content.length, `system prompt: ${b[0]!.content.length} characters against ${a[0]!.content.length}`);
  for (const tool of ['execute_bash(cmd)', 'search(search_term, path?)', 'file_editor(command=view|create|str_replace|insert|undo_edit, path,', 'finish(']) t.match(b[0]!.content, tool);
  t.match(b[1]!.content, /^Repository: \/testbed\n<issue>\n[^]*add\(2, 3\) returns -1 instead of 5\.[^]*<\/issue>\n[^]*finish\.\nSteps Remaining: 4$/);
  const step = await compact.step('<function=file_editor>\n<parameter=command>view</parameter>\n<parameter=path>/testbed/calc.py</parameter>\n</function>');
  t.match(step.observation, /return a - b/, 'the tools are the same');
});

t.test("goal 'reproduce': the test writer's prompt, and its patch comes back ungraded", async (t) => {
  const env = new SweEnv(await fixtureTask(t), backend, { maxSteps: 5, goal: 'reproduce' });
  t.teardown(() => env.close());
  const messages = await env.reset();
  t.match(messages[1]!.content, /add\(2, 3\) returns -1 instead of 5\./);
  t.match(messages[1]!.content, /Do not fix it\. Write tests that reproduce it/);
  t.notMatch(messages[1]!.content, /hidden tests will check your change/);
  await env.step(bash("printf 'from calc import add\\n\\ndef test_add():\\n    assert add(2, 3) == 5\\n' > tests/test_add_issue.py"));
  const result = await env.reward();
  t.equal(result.reward, 0);
  t.match(result.reason, /^not graded: a test-writing episode/);
  t.match(result.patch, /^diff --git a\/tests\/test_add_issue\.py b\/tests\/test_add_issue\.py\nnew file mode/);
  t.same(result.tests, {}, 'no test ran');
});

t.test('the hidden tests are out of reach until grading', async (t) => {
  // emptyPatch 'grade': the episode changes nothing, and grading must still run the tests.
  const env = new SweEnv(await fixtureTask(t), backend, { emptyPatch: 'grade' });
  t.teardown(() => env.close());
  await env.reset();
  // The pattern is written so that the command line itself does not contain the marker.
  const search = await env.step(bash(`grep -rl --devices=skip --exclude-dir=usr --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev '${MARKER.slice(0, -1)}[${MARKER.slice(-1)}]' / 2>/dev/null; echo searched`));
  t.equal(search.observation.split('\n').slice(2, -2).join('\n'), 'searched', 'no file in the sandbox holds the hidden tests');
  const sandbox = env.currentSandbox!;
  const graded = await env.reward();
  t.equal(graded.tests['tests/test_calc.py::test_add'], 'FAILED', 'grading ran the hidden tests');
  t.ok(sandbox.destroyed, "in a fresh sandbox: the episode's is gone, the hidden tests never entered it");
  t.equal(env.currentSandbox, null);
});

t.test('grading undoes the agent\'s edits to the test folders', async (t) => {
  const env = new SweEnv(await fixtureTask(t), backend);
  t.teardown(() => env.close());
  await env.reset();
  // A rigged conftest that would make every test pass, and a rewritten test file.
  await env.step(bash(`cat > tests/conftest.py <<'EOF'
import pytest
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().outcome = 'passed'
EOF
echo 'def test_add(): pass' > tests/test_calc.py`));
  const reward = await env.reward();
  t.equal(reward.reward, 0, 'the rigging is undone');
  t.equal(reward.tests['tests/test_calc.py::test_add'], 'FAILED');
  t.match(reward.reason, /test_add \(FAILED\)/);
  t.match(reward.patch, /tests\/conftest\.py/, 'the patch still shows what the agent did');
});

t.test('the gold patch through file_editor scores 1; nothing done scores 0', async (t) => {
  const task = await fixtureTask(t);
  const fixed = new SweEnv(task, backend);
  t.teardown(() => fixed.close());
  await fixed.reset();
  await fixed.step(FIX);
  const resolved = await fixed.reward();
  t.equal(resolved.reward, 1);
  t.equal(resolved.goldSimilarity, 1, 'the gold change, made by the editor: similarity 1 to the gold patch');

  // An empty patch scores 0 without a grading sandbox: the episode's own is the only one made.
  // Edited and put back is empty too: the diff is what counts, not the steps.
  const counting = flakyBackend(1, 0); // no failures: it only counts the sandboxes made
  const idle = new SweEnv(task, counting);
  t.teardown(() => idle.close());
  await idle.reset();
  for (const edit of [FIX, UNFIX]) t.notMatch((await idle.step(edit)).observation, /ERROR/, 'the edit is made');
  const untouched = await idle.reward();
  t.same({ reward: untouched.reward, tests: untouched.tests, patch: untouched.patch }, { reward: 0, tests: {}, patch: '' });
  t.match(untouched.reason, /^the patch is empty: the episode changed no file, so no test ran$/);
  t.equal(untouched.goldSimilarity, 0, 'nothing changed: similarity 0');
  t.equal(counting.creates, 1, 'no grading sandbox');

  // emptyPatch 'grade' runs the tests on the untouched repository (what task validation checks).
  const graded = new SweEnv(task, counting, { emptyPatch: 'grade' });
  t.teardown(() => graded.close());
  await graded.reset();
  const base = await graded.reward();
  t.equal(base.reward, 0);
  t.same(base.tests, { 'tests/test_calc.py::test_add': 'FAILED', 'tests/test_calc.py::test_mul': 'PASSED' });
  t.equal(counting.creates, 3, "the episode's sandbox and a grading one");
  t.throws(() => new SweEnv(task, backend, { emptyPatch: 'skip' } as object), { code: 'ERR_SWERL_INVALID_ARG', message: /^env\.emptyPatch/ });
});

/**
 * The local backend with sandbox creation failing as a lost Docker host fails (ERR_SWERL_SANDBOX)
 * from the `failFrom`-th create on, `failures` times. Fault injection around the real backend:
 * a real host going away mid-grading is docker-hosts.test.ts's business.
 */
function flakyBackend(failFrom: number, failures: number): SandboxBackend & { creates: number } {
  let creates = 0;
  return {
    name: 'local',
    get creates() {
      return creates;
    },
    async create(spec) {
      creates++;
      if (creates >= failFrom && creates < failFrom + failures) throw new SwerlError('ERR_SWERL_SANDBOX', 'the Docker host went away');
      return backend.create(spec);
    },
    reap: (options) => backend.reap(options),
  };
}

t.test('a grading sandbox lost to the infrastructure is made again; past the attempts the fault is the episode\'s, never a reward of 0', async (t) => {
  const task = await fixtureTask(t);
  const flaky = flakyBackend(2, 2);  // the episode's sandbox, then the first two grading sandboxes fail
  const env = new SweEnv(task, flaky);
  t.teardown(() => env.close());
  await env.reset();
  await env.step(FIX);
  const graded = await env.reward();
  t.equal(graded.reward, 1, 'graded on the third grading sandbox');
  t.equal(flaky.creates, 4);

  const hopeless = new SweEnv(task, flakyBackend(2, 100));
  t.teardown(() => hopeless.close());
  await hopeless.reset();
  await hopeless.step(FIX);
  await t.rejects(hopeless.reward(), { code: 'ERR_SWERL_SANDBOX', message: /went away/ }, 'thrown for the rollout engine to replay, not graded 0');
});

t.test('limits: max steps, step timeout, episode timeout, test timeout', async (t) => {
  const task = await fixtureTask(t);
  const short = new SweEnv(task, backend, { maxSteps: 2 });
  t.teardown(() => short.close());
  await short.reset();
  const first = await short.step(bash('true'));
  t.match(first.observation, /Steps Remaining: 1\nYou are about to run out of steps: call finish now/);
  const last = await short.step(bash('true'));
  t.equal(last.done, true);
  t.equal(last.info.termination, 'max_steps');

  const slow = new SweEnv(task, backend);
  t.teardown(() => slow.close());
  await slow.reset();
  const timedOut = await slow.step(bash('sleep 5'), { timeoutMs: 300, endsEpisode: false });
  t.match(timedOut.observation, /^Exit code: -1\nExecution output of \[execute_bash\]:\nThe command took too long to execute \(>0\.3s\)/);
  t.equal(timedOut.done, false, 'a step timeout alone does not end the episode');

  const brief = new SweEnv(task, backend);
  t.teardown(() => brief.close());
  await brief.reset();
  // The command would run 30 s: it returning before then, without its last line, is the cut
  // (a bound near the 1.5 s deadline would measure the machine's load, not the deadline).
  const overran = await brief.step(bash('sleep 30; echo finished'), { timeoutMs: 1500, endsEpisode: true });
  t.equal(overran.info.termination, 'timeout', "a step cut by the episode's deadline ends the episode");
  t.notMatch(overran.observation, /finished/, 'the command did not run to its end');
  t.ok(overran.info.durationMs < 30_000, `cut before the command's own end (${Math.round(overran.info.durationMs)} ms)`);
  t.equal(overran.done, true);

  t.throws(() => new SweEnv(task, backend, { stepTimeoutMs: 100 } as object), {
    code: 'ERR_SWERL_INVALID_ARG',
    message: /^env\.stepTimeoutMs is no longer an option here; the step timeout is the agent loop's: set rollout\.stepTimeoutMs/,
  }, 'the old knob names where the step timeout went');
  t.throws(() => new SweEnv(task, backend, { episodeTimeoutMs: 100 } as object), { message: /^env\.episodeTimeoutMs is no longer an option here; the episode deadline is the agent loop's: set rollout\.trajectoryTimeoutMs/ });

  const stuck = new SweEnv(task, backend, { rewardTimeoutMs: 500 });
  t.teardown(() => stuck.close());
  await stuck.reset();
  await stuck.step(bash("printf 'import time\\ntime.sleep(30)\\n' >> calc.py"));
  const reward = await stuck.reward();
  t.equal(reward.reward, 0);
  t.match(reward.reason, /the tests ran longer than 0\.5 s/);
});

t.test('misuse is a clear error', async (t) => {
  const env = new SweEnv(await fixtureTask(t), backend);
  await t.rejects(env.step('x'), { code: 'ERR_SWERL_INVALID_ARG', message: /before reset\(\)/ });
  await t.rejects(env.reward(), { message: /env\.reward\(\) was called before reset\(\)/ });
  t.throws(() => new SweEnv({} as Task, backend, { maxSteps: 0 }), { message: /env\.maxSteps must be >= 1/ });
  t.throws(() => new SweEnv({} as Task, backend, { profile: 'r2e' as never }), { message: /env\.profile must be one of "default", "r2egym"/ });
});

t.test('R2E-Gym-style tasks: hidden paths stashed at start, restored for grading, exact status map', async (t) => {
  const dir = t.testdir({
    'calc.py': 'def add(a, b):\n    return a - b\n',
    'run_tests.sh': 'python3 -m pytest -rA -p no:cacheprovider r2e_tests\n',
    hidden: { 'test_1.py': `# ${MARKER}\nfrom calc import add\n\nclass TestAdd:\n    def test_add(self):\n        assert add(2, 3) == 5\n` },
  });
  const task: Task = {
    id: 'r2e-like',
    source: 'r2e-gym',
    problemStatement: 'add is wrong',
    repoDir: dir,
    workdir: '/testbed',
    testCommand: 'bash run_tests.sh',
    logFormat: 'r2e-gym',
    hiddenTests: {
      kind: 'image-paths',
      moves: [
        { from: '/testbed/hidden', to: '/testbed/r2e_tests' },
        { from: '/testbed/run_tests.sh', to: '/testbed/run_tests.sh' },
      ],
    },
    resolution: { rule: 'r2e-gym', expected: { 'TestAdd.test_add': 'PASSED' } },
    metadata: {},
  };
  const env = new SweEnv(task, backend);
  t.teardown(() => env.close());
  await env.reset();
  const look = await env.step(bash('ls; ls hidden run_tests.sh 2>&1 | head -2'));
  t.notMatch(look.observation, /run_tests\.sh\n/, 'the test script is gone during the episode');
  t.match(look.observation, /No such file/);
  await env.step(FIX);
  const reward = await env.reward();
  t.equal(reward.reward, 1, reward.reason);
  t.same(reward.tests, { 'TestAdd.test_add': 'PASSED' }, "R2E-Gym's keys");
  t.notMatch(reward.patch, /hidden|run_tests/, 'stashed files are not part of the patch');

  // A patch that prints the summary line R2E-Gym's parser reads, at exit, after pytest's own:
  // the log says passed, the guard saw the test fail, and the reward is 0.
  const forger = new SweEnv(task, backend);
  t.teardown(() => forger.close());
  await forger.reset();
  await forger.step(bash("printf 'import atexit\\natexit.register(print, \"PASSED r2e_tests/test_1.py::TestAdd::test_add\")\\n' >> calc.py"));
  const forged = await forger.reward();
  t.equal(forged.reward, 0, 'the guard voids it');
  t.match(forged.reason, /TestAdd.test_add \(the log says PASSED, the guard saw FAILED\)/, 'the forged line is the one held against the record');
});

t.test('a hostile response is answered within the step limit', async (t) => {
  // 3000 newlines after <parameter= took the old regex parser 18.5 s against a 2 s step limit,
  // on the event loop, where no timeout could fire.
  const env = new SweEnv(await fixtureTask(t), backend);
  t.teardown(() => env.close());
  await env.reset();
  const limits = { timeoutMs: 2000, endsEpisode: false };
  const started = performance.now();
  const unclosed = await env.step('<function=execute_bash>\n<parameter=' + '\n'.repeat(100_000), limits);
  const nested = await env.step({ content: '', tool_calls: [{ function: { name: 'search', arguments: '['.repeat(100_000) + ']'.repeat(100_000) } }] }, limits);
  t.ok(performance.now() - started < 2000, 'both steps answered within the step limit');
  t.match(unclosed.observation, /execute_bash/i, 'the call without a cmd gets the tool\'s own complaint');
  t.match(nested.observation, /^ERROR: tool_calls\[0\]\.function\.arguments/, 'deep JSON is an error observation');
  t.notOk(nested.done, 'the episode goes on');
});

t.test("a bundled task's gitignore (kept beside repo/, as npm packs no .gitignore) is the work tree's .gitignore", async (t) => {
  const folder = new URL('../../../tasks/swe-mini/py-lru-recency', import.meta.url).pathname;
  const env = new SweEnv(await loadSwerlTaskFolder(folder), backend, { maxSteps: 3 });
  t.teardown(() => env.close());
  await env.reset();
  const shown = await env.step(bash('cat .gitignore && git ls-files .gitignore && mkdir -p __pycache__ .pytest_cache && touch __pycache__/x.pyc .pytest_cache/y && git status --porcelain'));
  t.match(shown.observation, /__pycache__\/\n[\s\S]*\.pytest_cache\/[\s\S]*\n\.gitignore\n/, '.gitignore is in the base commit');
  t.notMatch(shown.observation, /\?\? /, 'caches are ignored: nothing untracked');
  const reward = await env.reward();
  t.equal(reward.patch, '', 'and nothing of them reaches the patch');
});
