// The execution-based verifier in real bwrap sandboxes on swe-mini: regression tests (those
// passing at the base) tell a breaking patch from the gold one; the scripted test writer's
// episode (SweEnv goal 'reproduce') writes tests that fail at the base and pass with gold; its
// tests that pass at the base are discarded, and the reproduction score separates gold from a
// decoy that regression tests cannot.
import { readFileSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import { parseAgentLoopOptions } from '../../../lib/agent/agent-loop.js';
import { DecoyPolicy, TestWriterOraclePolicy, reproductionPathOf } from '../../../lib/agent/scripted-policy.js';
import { LocalSandboxBackend } from '../../../lib/env/sandbox/local.js';
import { loadSwerlTaskFolder } from '../../../lib/env/tasks/swerl-folder.js';
import type { Task } from '../../../lib/env/task.js';
import { regressionScores } from '../../../lib/tts/regression.js';
import { reproductionCommand, reproductionScores, writeReproductionTests, writtenTests } from '../../../lib/tts/reproduction.js';
import type { Candidate } from '../../../lib/tts/select.js';
import { verifyCandidates } from '../../../lib/tts/verify.js';
import { Slots } from '../../../lib/util/bounded.js';
import { ROOT } from '../../support/child-process.js';

const backend = new LocalSandboxBackend({ root: t.testdir({ root: {} }) + '/root' });
const tasks = await Promise.all(['js-color-hex', 'py-lru-recency'].map((id) => loadSwerlTaskFolder(path.join(ROOT, 'tasks/swe-mini', id))));
const agent = parseAgentLoopOptions({ maxTurns: 8, promptBudget: 1 << 20, responseBudget: 1 << 20, maxTokensPerTurn: 1 << 20, temperature: 0, enableThinking: false }, 'test');
const run = { timeoutMs: 120_000, slots: new Slots(3) };

/** A patch that adds `line` above the first three lines of `file` (context from the task folder). */
function prependLine(task: Task, file: string, line: string): string {
  const head = readFileSync(path.join(task.repoDir!, file), 'utf8').split('\n').slice(0, 3);
  return [`diff --git a/${file} b/${file}`, `--- a/${file}`, `+++ b/${file}`, '@@ -1,3 +1,4 @@', `+${line}`, ...head.map((l) => ` ${l}`), ''].join('\n');
}

/** The decoy policy's edit, as a patch: a comment line appended (what DecoyPolicy's command does). */
function decoyPatch(task: Task): string {
  const file = task.id.startsWith('js') ? 'src/parse.js' : 'lrukit/cache.py';
  return prependLine(task, file, task.id.startsWith('js') ? '// TODO: handle the case the issue describes' : '# TODO: handle the case the issue describes');
}

const breaking = (task: Task) => prependLine(task, task.id.startsWith('js') ? 'src/parse.js' : 'lrukit/cache.py', task.id.startsWith('js') ? "throw new Error('broken');" : "raise RuntimeError('broken')");

/** The hidden test id a reproduction test id stands for (pytest ids carry the file). */
const hiddenId = (task: Task, id: string) => (task.logFormat === 'pytest' ? id.replace(/^([^:]*)_reproduce(\.py::)/, '$1$2') : id);

t.test('the swe-mini files the patches below edit exist', async (t) => {
  for (const task of tasks) t.ok(readFileSync(path.join(task.repoDir!, task.id.startsWith('js') ? 'src/parse.js' : 'lrukit/cache.py'), 'utf8').length > 0, task.id);
});

t.test('regression: tests passing at the base, counted per candidate', async (t) => {
  for (const task of tasks) {
    const result = await regressionScores(backend, task, [task.goldPatch!, breaking(task), '', decoyPatch(task)], run);
    t.ok(result.baseline.length > 0, `${task.id}: ${result.baseline.length} tests pass at the base`);
    t.equal(result.note, undefined);
    t.same(result.passes[2], result.baseline.length, `${task.id}: the base passes its own baseline`);
    t.same(result.passes[3], result.baseline.length, `${task.id}: a comment breaks nothing`);
    t.ok(result.passes[0]! >= result.baseline.length - 0, `${task.id}: gold keeps every baseline test (${result.passes[0]})`);
    t.ok(result.passes[1]! < result.baseline.length, `${task.id}: the breaking patch loses tests (${result.passes[1]} of ${result.baseline.length})`);
  }
});

t.test('the scripted test writer: tests that fail at the base and pass with gold, from a real episode', async (t) => {
  const writer = new TestWriterOraclePolicy();
  const written = await writeReproductionTests(writer, tasks, backend, { agent, concurrency: 2, retries: 0, seed: 0 });
  for (const [i, task] of tasks.entries()) {
    const tests = writtenTests(task, written[i]!.patch);
    const hidden = task.hiddenTests.kind === 'files' ? task.hiddenTests.paths : [];
    t.same(tests.files.sort(), hidden.map(reproductionPathOf).sort(), `${task.id}: one new file per hidden test file`);
    t.same(tests.testFiles, tests.files, `${task.id}: all of them are tests by name`);
    t.ok(written[i]!.tokens > 0);

    const result = await reproductionScores(backend, task, tests, [task.goldPatch!, decoyPatch(task), ''], run);
    const resolution = task.resolution.rule === 'swe-bench' ? task.resolution : null;
    // node's TAP reports a suite as a test too: it fails at the base when one of its tests does.
    const suites = task.logFormat === 'node-tap' ? resolution!.failToPass.map((id) => id.split(' > ')[0]!) : [];
    t.same(result.tests.map((id) => hiddenId(task, id)).sort(), [...new Set([...resolution!.failToPass, ...suites])].sort(), `${task.id}: the kept tests are the issue's failing tests`);
    t.ok(resolution!.passToPass.every((id) => result.discarded.passAtBase.map((d) => hiddenId(task, d)).includes(id)), `${task.id}: tests passing at the base are discarded`);
    t.same(result.discarded.failEverywhere, []);
    t.same(result.passes, [result.tests.length, 0, 0], `${task.id}: gold passes every kept test, the decoy and the base none`);
  }
});

t.test('reproduction: tests that fail on every candidate are discarded; no tests, no scores', async (t) => {
  const task = tasks[0]!;
  const writer = new TestWriterOraclePolicy();
  const [written] = await writeReproductionTests(writer, [task], backend, { agent, concurrency: 1, retries: 0, seed: 0 });
  const result = await reproductionScores(backend, task, writtenTests(task, written!.patch), [decoyPatch(task), ''], run);
  t.same(result.tests, []);
  t.ok(result.discarded.failEverywhere.length > 0, 'the issue\'s tests fail on both candidates');
  t.same(result.passes, [0, 0]);
  t.match(result.note, /fails on every candidate/);
  const none = await reproductionScores(backend, task, writtenTests(task, ''), [task.goldPatch!], run);
  t.same(none.passes, [0]);
  t.match(none.note, /wrote no new test file/);
});

t.test('the runner command follows the task: node TAP, pytest as the task invokes it, or a template', async (t) => {
  t.same(reproductionCommand(tasks[0]!, ['test/a_reproduce.test.js']), { command: "node --test --test-reporter=tap 'test/a_reproduce.test.js'", logFormat: 'node-tap' });
  t.same(reproductionCommand(tasks[1]!, ['tests/test_x_reproduce.py']), { command: "python3 -m pytest -rA -p no:cacheprovider 'tests/test_x_reproduce.py'", logFormat: 'pytest' });
  t.same(reproductionCommand({ ...tasks[1]!, testCommand: 'bash run_tests.sh' }, ['t.py']).command, "python -m pytest -rA -p no:cacheprovider 't.py'");
  t.same(reproductionCommand(tasks[1]!, ['a b.py'], 'tox -- {files}').command, "tox -- 'a b.py'");
  t.same(writtenTests(tasks[1]!, ['diff --git a/helper.py b/helper.py', 'new file mode 100644', '--- /dev/null', '+++ b/helper.py', '@@ -0,0 +1 @@', '+x = 1', 'diff --git a/lru/cache.py b/lru/cache.py', '--- a/lru/cache.py', '+++ b/lru/cache.py', '@@ -1 +1 @@', '-a', '+b', ''].join('\n')), {
    patch: ['diff --git a/helper.py b/helper.py', 'new file mode 100644', '--- /dev/null', '+++ b/helper.py', '@@ -0,0 +1 @@', '+x = 1', ''].join('\n'),
    files: ['helper.py'],
    testFiles: [],
  }, 'new files only; only test-named ones run');
});

t.test('verifyCandidates: decoy policy candidates scored for the execution rule, costs counted', async (t) => {
  const decoy = new DecoyPolicy({ every: 3 });
  const entries = tasks.map((task) => {
    const gold = decoy.goldSample(task);
    return { task, candidates: [0, 1, 2].map((index): Candidate => ({ index, patch: index === gold ? task.goldPatch! : decoyPatch(task), reward: index === gold ? 1 : 0 })) };
  });
  const { details, cost } = await verifyCandidates(entries, ['execution'], { backend, concurrency: 3, timeoutMs: 120_000, reproduction: { writer: new TestWriterOraclePolicy(), agent, seed: 0, retries: 0 } });
  for (const [i, entry] of entries.entries()) {
    const gold = entry.candidates.find((c) => c.reward === 1)!;
    t.ok(gold.reproduction! > 0 && entry.candidates.every((c) => c === gold || c.reproduction === 0), `${entry.task.id}: only gold passes the reproduction tests`);
    t.ok(entry.candidates.every((c) => c.regression === details[i]!.regression!.baseline.length), 'neither breaks a regression test');
  }
  t.same(cost, { regressionSandboxes: 6, reproductionSandboxes: 6, writerEpisodes: 2, writerTokens: cost.writerTokens });
  t.ok(cost.writerTokens > 0);
});
