import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import t, { type Test } from 'tap';

import { parseAgentLoopOptions, runEpisode } from '../../../lib/agent/agent-loop.js';
import type { AgentPolicy } from '../../../lib/types/policy.js';
import { DecoyPolicy, EditOraclePolicy, NoopPolicy, ORACLE_PATCH_FILE, OraclePolicy, TestWriterOraclePolicy, distractorLine, reproductionPathOf } from '../../../lib/agent/scripted-policy.js';
import { maskFailedTurns, maskTurns, type Trajectory } from '../../../lib/agent/trajectory.js';
import { parseTextAction } from '../../../lib/env/actions.js';
import { SweEnv } from '../../../lib/env/swe-env.js';
import { loadTasks } from '../../../lib/env/tasks/load.js';
import { writeSweGenSuite } from '../../../lib/env/swe-gen/index.js';
import { loadSwerlTaskFolder } from '../../../lib/env/tasks/swerl-folder.js';
import type { Task } from '../../../lib/env/task.js';
import { ByteTokenizer } from '../../../lib/model/byte-tokenizer.js';
import { sandboxFolder } from '../../support/sandbox-folder.js';

const SWE_MINI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../tasks/swe-mini');
const CONCURRENCY = 4;

const { testdir, root, backend } = sandboxFolder(t, 'swerl-scripted-policy-');
const tokenizer = new ByteTokenizer();
const IM_END = tokenizer.specialTokens['<|im_end|>']!;

// ByteTokenizer spends a token per byte: the system prompt alone passes the default 4096, and
// the oracle's first turn carries the whole patch.
const agent = parseAgentLoopOptions({ maxTurns: 30, promptBudget: 1 << 16, responseBudget: 1 << 20, maxTokensPerTurn: 1 << 18, temperature: 0 }, 'agent');

function play(task: Task, policy: AgentPolicy): Promise<Trajectory> {
  return runEpisode({ env: new SweEnv(task, backend, { maxSteps: 30 }), policy, context: { taskId: task.id, task, sample: 0 }, group: 0 }, agent);
}

/** fn over items, `limit` at a time, results in item order. */
async function pool<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** Nothing left under the sandbox root: no sandbox folder, no uid claim. */
function checkRootEmpty(t: Test): void {
  t.same(readdirSync(root).filter((e) => e !== '.uids'), [], 'no sandbox is left under the root');
  t.same(readdirSync(path.join(root, '.uids')), [], 'no host uid is still claimed');
}

const gitIn = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@localhost', '-c', 'commit.gpgsign=false', ...args], { cwd, encoding: 'utf8' });

/**
 * A task whose gold patch turns data.txt (base) into `target`, made with git diff; its hidden
 * test checks data.txt byte for byte.
 */
function patchTask(id: string, base: string, target: string): Promise<Task> {
  const scratch = path.join(testdir, 'fixtures', id, 'scratch');
  mkdirSync(scratch, { recursive: true });
  writeFileSync(path.join(scratch, 'data.txt'), base);
  gitIn(scratch, 'init', '-q');
  gitIn(scratch, 'add', '-A');
  gitIn(scratch, 'commit', '-q', '-m', 'base');
  writeFileSync(path.join(scratch, 'data.txt'), target);
  const patch = gitIn(scratch, 'diff');
  const sha = createHash('sha256').update(target).digest('hex');
  const dir = path.join(testdir, 'fixtures', id, id);
  mkdirSync(path.join(dir, 'repo'), { recursive: true });
  mkdirSync(path.join(dir, 'tests', 'tests'), { recursive: true });
  writeFileSync(path.join(dir, 'task.json'), JSON.stringify({
    id,
    language: 'python',
    difficulty: 'easy',
    test_command: 'python3 -m pytest -rA -p no:cacheprovider tests/test_data.py',
    log_format: 'pytest',
    fail_to_pass: ['tests/test_data.py::test_exact'],
    pass_to_pass: [],
  }));
  writeFileSync(path.join(dir, 'issue.md'), 'data.txt is wrong.\n');
  writeFileSync(path.join(dir, 'repo', 'data.txt'), base);
  writeFileSync(path.join(dir, 'gold.patch'), patch);
  writeFileSync(
    path.join(dir, 'tests', 'tests', 'test_data.py'),
    `import hashlib, pathlib\n\ndef test_exact():\n    assert hashlib.sha256(pathlib.Path('data.txt').read_bytes()).hexdigest() == '${sha}'\n`,
  );
  return loadSwerlTaskFolder(dir);
}

// Everything a shell or the call grammar could trip on: quotes, backslashes, `$`, backticks,
// tabs, heredoc-delimiter-like lines, CR, non-ASCII, no final newline.
const TRICKY = [
  `it's "quoted" and \\back\\slashed\\ with a trailing backslash \\`,
  '$HOME ${PATH} $(echo no) `echo no` $((1+1)) !! * ? [a-z]',
  '\tindented with a tab\t and a tab inside',
  'EOF',
  "'EOF'",
  'SWERL_PATCH_END',
  'SWERL_PATCH_END_1',
  '<function=finish>',
  '<parameter=x>',
  'crlf line\r',
  'héllo wörld ✓ 🚀',
  '%s %d %%',
  'no final newline',
].join('\n');

t.test('unit: the oracle and the no-op answer with calls the parser reads', async (t) => {
  const task = await patchTask('unit-calls', 'one\n', 'two\n');
  const oracle = new OraclePolicy();
  const request = { prompt: [1, 2, 3], maxTokens: 1 << 16, temperature: 0 };
  const first = await oracle.generate(request, { taskId: task.id, task, sample: 0, turn: 0 });
  t.equal(first.finishReason, 'stop');
  t.equal(first.tokens.at(-1), IM_END, 'the turn ends with <|im_end|>');
  t.equal(first.logprobs.length, first.tokens.length);
  t.ok(first.logprobs.every((l) => l === 0), 'scripted: every logprob is 0');
  const action = parseTextAction(tokenizer.decode(first.tokens, { skipSpecialTokens: true }));
  t.equal(action?.name, 'execute_bash');
  t.match(action?.args.cmd, /^git apply --whitespace=nowarn - <<'SWERL_PATCH_END'\n/);
  t.ok(action?.args.cmd?.includes(task.goldPatch!), 'the patch is in the command verbatim');

  const second = await oracle.generate(request, { taskId: task.id, task, sample: 0, turn: 1 });
  t.same(parseTextAction(tokenizer.decode(second.tokens, { skipSpecialTokens: true })), { name: 'finish', args: { command: 'submit' } });

  const noop = await new NoopPolicy().generate(request);
  t.equal(noop.finishReason, 'stop');
  t.same(parseTextAction(tokenizer.decode(noop.tokens, { skipSpecialTokens: true })), { name: 'finish', args: { command: 'submit' } });
  t.equal(noop.tokens.at(-1), IM_END);

  const custom = new ByteTokenizer();
  t.equal(new OraclePolicy({ tokenizer: custom }).tokenizer, custom, 'a tokenizer can be passed');
});

t.test('unit: a too-small maxTokens cuts the answer with finishReason length', async (t) => {
  const task = await patchTask('unit-length', 'one\n', 'two\n');
  const oracle = new OraclePolicy();
  const context = { taskId: task.id, task, sample: 0, turn: 0 };
  const full = await oracle.generate({ prompt: [], maxTokens: 1 << 16, temperature: 0 }, context);
  const cut = await oracle.generate({ prompt: [], maxTokens: 20, temperature: 0 }, context);
  t.equal(cut.finishReason, 'length');
  t.equal(cut.tokens.length, 20);
  t.equal(cut.logprobs.length, 20);
  t.same([...cut.tokens], [...full.tokens.subarray(0, 20)], 'the first maxTokens tokens');
  const exact = await oracle.generate({ prompt: [], maxTokens: full.tokens.length, temperature: 0 }, context);
  t.equal(exact.finishReason, 'stop', 'an answer that just fits is not cut');
  const noop = await new NoopPolicy().generate({ prompt: [], maxTokens: 5, temperature: 0 });
  t.same({ n: noop.tokens.length, reason: noop.finishReason }, { n: 5, reason: 'length' });
  const zero = await new NoopPolicy().generate({ prompt: [], maxTokens: 0, temperature: 0 });
  t.same({ n: zero.tokens.length, reason: zero.finishReason }, { n: 0, reason: 'length' });
  const aborted = await new NoopPolicy().generate({ prompt: [], maxTokens: 5, temperature: 0, signal: AbortSignal.abort() });
  t.equal(aborted.finishReason, 'cancelled');
});

t.test('unit: the oracle refuses a task without a gold patch, naming it', async (t) => {
  const task = await patchTask('unit-no-gold', 'one\n', 'two\n');
  const { goldPatch: _dropped, ...bare } = task;
  const oracle = new OraclePolicy();
  await t.rejects(oracle.generate({ prompt: [], maxTokens: 100, temperature: 0 }, { taskId: bare.id, task: bare, sample: 0, turn: 0 }), {
    name: 'SwerlError',
    code: 'ERR_SWERL_INVALID_ARG',
    message: /task unit-no-gold has no gold patch/,
  });
  await t.rejects(oracle.generate({ prompt: [], maxTokens: 100, temperature: 0 }, { taskId: 'lake-4x4', sample: 0, turn: 0 }), {
    code: 'ERR_SWERL_INVALID_ARG',
    message: /context\.task is missing \(task lake-4x4\)/,
  });
  t.throws(() => new OraclePolicy({ maxCommandBytes: 10 }), { code: 'ERR_SWERL_INVALID_ARG', message: /maxCommandBytes/ });

  // Through the loop: the error propagates and the env is still closed.
  await t.rejects(play(bare, oracle), { message: /task unit-no-gold has no gold patch/ });
  checkRootEmpty(t);
});

t.test('unit: the decoy policy plays gold on one run in `every`, a comment on the others', async (t) => {
  const task = await loadSwerlTaskFolder(path.join(SWE_MINI, 'py-lru-recency'));
  const decoy = new DecoyPolicy({ every: 3 });
  const gold = decoy.goldSample(task);
  t.ok(gold >= 0 && gold < 3);
  const say = async (sample: number, turn: number) => {
    const g = await decoy.generate({ prompt: [], maxTokens: 1 << 16, temperature: 0 }, { taskId: task.id, task, sample, turn });
    return parseTextAction(tokenizer.decode(g.tokens, { skipSpecialTokens: true }));
  };
  for (const sample of [0, 1, 2, 3, 4, 5]) {
    const first = await say(sample, 0);
    if (sample % 3 === gold) t.match(first?.args.cmd, /^git apply --whitespace=nowarn - <<'SWERL_PATCH_END'/, `sample ${sample}: gold`);
    else t.equal(first?.args.cmd, "printf '\\n%s\\n' '# TODO: handle the case the issue describes' >> '/testbed/lrukit/cache.py'", `sample ${sample}: the decoy, a Python comment`);
    t.same(await say(sample, 1), { name: 'finish', args: { command: 'submit' } });
  }
  const js = await loadSwerlTaskFolder(path.join(SWE_MINI, 'js-color-hex'));
  t.match(new DecoyPolicy().decoyCommand(js), /'\/\/ TODO: handle the case the issue describes' >> '\/testbed\/src\/parse\.js'$/, 'a JavaScript comment');
  t.throws(() => new DecoyPolicy({ every: 0 }), { code: 'ERR_SWERL_INVALID_ARG', message: /options\.every is 0/ });
});

t.test('unit: the scripted test writer copies the hidden tests beside the originals, then finishes', async (t) => {
  t.equal(reproductionPathOf('tests/test_cache.py'), 'tests/test_cache_reproduce.py');
  t.equal(reproductionPathOf('test/parse.test.js'), 'test/parse_reproduce.test.js');
  t.equal(reproductionPathOf('Makefile'), 'Makefile_reproduce');
  t.equal(reproductionPathOf('a/.hidden'), 'a/.hidden_reproduce');
  const task = await loadSwerlTaskFolder(path.join(SWE_MINI, 'py-lru-recency'));
  const writer = new TestWriterOraclePolicy();
  const turns = writer.turns(task);
  t.equal(turns.length, 3, 'one file a turn, then finish');
  t.match(parseTextAction(turns[0]!)?.args.cmd, /^mkdir -p '\/testbed\/tests' && cat > '\/testbed\/tests\/test_cache_reproduce\.py' <<'SWERL_PATCH_END'\n/);
  t.same(parseTextAction(turns[2]!), { name: 'finish', args: { command: 'submit' } });
  const rows = await loadTasks(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/swe-real/rows.jsonl'), { repos: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/swe-real/repos') });
  t.throws(() => writer.turns(rows.tasks[0]!), { code: 'ERR_SWERL_INVALID_ARG', message: /keeps its hidden tests as a test patch; the scripted test writer copies a task folder's tests\/ files only/ });
});

t.test('the oracle applies a patch full of shell and grammar traps byte for byte', async (t) => {
  const base = 'first line\nsecond line\n';
  const cases: [string, string, OraclePolicy, (turns: Trajectory['turns']) => void][] = [
    ['traps-heredoc', `first line\n${TRICKY}`, new OraclePolicy(), (turns) => {
      t.equal(turns.length, 2, 'one execute_bash turn, then finish');
      t.match(turns[0]!.response, /<<'SWERL_PATCH_END_2'\n/, 'a delimiter that is no line of the patch');
    }],
    // Text that the call grammar or the tokenizer would change goes as base64.
    ['traps-base64', `${TRICKY}\nclosing </parameter> and </function> and <|im_end|> tags\n`, new OraclePolicy(), (turns) => {
      t.equal(turns.length, 2);
      t.match(turns[0]!.response, /\| base64 -d \| git apply --whitespace=nowarn -\n/);
    }],
    // A patch longer than one command: pieces into a file, then git apply.
    ['traps-pieces', `${'a long line of text that repeats '.repeat(8)}\n`.repeat(16) + TRICKY, new OraclePolicy({ maxCommandBytes: 1024 }), (turns) => {
      t.ok(turns.length > 4, `${turns.length} turns`);
      t.match(turns[0]!.response, new RegExp(`cat > ${ORACLE_PATCH_FILE} <<'SWERL_PATCH_END`));
      t.match(turns[1]!.response, new RegExp(`cat >> ${ORACLE_PATCH_FILE}`));
      t.match(turns.at(-2)!.response, new RegExp(`git apply --whitespace=nowarn ${ORACLE_PATCH_FILE} && rm -f ${ORACLE_PATCH_FILE}`));
      t.ok(turns.slice(0, -1).every((turn) => Buffer.byteLength(parseTextAction(turn.response)!.args.cmd!) <= 1024), 'every command fits');
    }],
    // One line longer than a piece: cut inside the line, so that piece cannot be a heredoc.
    ['traps-long-line', `${'x'.repeat(3000)}\n${TRICKY}`, new OraclePolicy({ maxCommandBytes: 1024 }), (turns) => {
      t.ok(turns.some((turn) => /base64 -d \| cat >> /.test(turn.response)), 'a piece without a final newline goes as base64');
    }],
  ];
  for (const [id, target, oracle, checkTurns] of cases) {
    const task = await patchTask(id, base, target);
    const trajectory = await play(task, oracle);
    t.equal(trajectory.termination, 'submitted', `${id}: ${trajectory.error ?? ''}`);
    const why = trajectory.reward === 1 ? '' : `: ${trajectory.rewardReason}; first observation: ${trajectory.turns[0]?.observation}`;
    t.equal(trajectory.reward, 1, `${id}: reward 1${why}`);
    t.equal(trajectory.patch, task.goldPatch, `${id}: the graded patch is the gold patch`);
    t.ok(trajectory.turns.slice(0, -1).every((turn) => turn.tool === 'execute_bash' && turn.observation.startsWith('Exit code: 0\n')), `${id}: every command succeeded`);
    t.equal(trajectory.turns.at(-1)!.tool, 'finish');
    checkTurns(trajectory.turns);
  }
  checkRootEmpty(t);
});

t.test('swe-mini: the oracle scores 1 and the no-op 0 on every task', async (t) => {
  const { tasks } = await loadTasks(SWE_MINI);
  t.equal(tasks.length, 25, 'all of swe-mini');
  const started = performance.now();

  const oracle = new OraclePolicy();
  const solved = await pool(tasks, CONCURRENCY, (task) => play(task, oracle));
  solved.forEach((trajectory, i) => {
    const id = tasks[i]!.id;
    t.equal(trajectory.taskId, id);
    t.equal(trajectory.termination, 'submitted', `${id}: oracle submitted ${trajectory.error ?? ''}`);
    const why = trajectory.reward === 1 ? '' : `: ${trajectory.rewardReason}; git apply said: ${trajectory.turns[0]?.observation}`;
    t.equal(trajectory.reward, 1, `${id}: oracle reward 1${why}`);
    t.same(trajectory.turns.map((turn) => turn.tool), ['execute_bash', 'finish'], `${id}: apply, then finish`);
    t.ok(trajectory.turns[0]!.observation.startsWith('Exit code: 0\n'), `${id}: git apply succeeded`);
    t.ok(trajectory.mask.some((m) => m === 1) && trajectory.logprobs.every((l) => l === 0), `${id}: sampled tokens masked, logprobs 0`);
  });
  const oracleSeconds = (performance.now() - started) / 1000;

  const noop = new NoopPolicy();
  const untouched = await pool(tasks, CONCURRENCY, (task) => play(task, noop));
  untouched.forEach((trajectory, i) => {
    const id = tasks[i]!.id;
    t.equal(trajectory.termination, 'submitted', `${id}: no-op submitted ${trajectory.error ?? ''}`);
    t.equal(trajectory.reward, 0, `${id}: no-op reward 0 (${trajectory.rewardReason})`);
    t.equal(trajectory.patch, '', `${id}: no-op changed nothing`);
    t.same(trajectory.turns.map((turn) => turn.tool), ['finish'], `${id}: finish only`);
  });
  t.comment(`oracle ${oracleSeconds.toFixed(1)} s, no-op ${((performance.now() - started) / 1000 - oracleSeconds).toFixed(1)} s, ${CONCURRENCY} at a time`);
  checkRootEmpty(t);
});

t.test('distractorLine: a line found once, in no fix, not a function head', async (t) => {
  const source = ['def f(xs):', '    total = 0', '    for x in xs:', '        if x > 0:', '            total += x', '        if x > 0:', '    return total', '', 'def g(): pass'].join('\n');
  const fixes = [{ oldStr: 'total += x' }];
  const picked = new Set(Array.from({ length: 200 }, (_, i) => distractorLine(source, fixes, `task-${i}`)));
  t.same([...picked].sort(), ['for x in xs:', 'return total', 'total = 0'], 'the lines left once the twice-found, the fixed, the heads and the blank are out');
  t.equal(distractorLine(source, fixes, 'task-7'), distractorLine(source, fixes, 'task-7'), 'fixed by the id');
  t.equal(distractorLine('def f(x):\n    return x + 1\n', [{ oldStr: 'return x + 1' }], 'a'), null, 'none where the fix is the only body line');
  const js = ['export function f(xs) {', '  let n = 0;', '  for (const x of xs) n += x;', '  return n;', '}'].join('\n');
  t.same([...new Set(Array.from({ length: 100 }, (_, i) => distractorLine(js, [{ oldStr: 'return n;' }], `j${i}`)))].sort(), ['for (const x of xs) n += x;', 'let n = 0;'], 'JavaScript: no export head, no brace');
});

t.test("the edit oracle fixes generated tasks through the tools: view, str_replace, the issue's call, finish", async (t) => {
  // Train seeds 0-9 hold every language x bug kind; seed 8's buggy line `  return high;` is
  // unique only with its indentation, which the call grammar trims: the oracle widens it.
  const suite = await writeSweGenSuite(path.join(testdir, 'swe-gen'), { split: 'train', firstSeed: 0, count: 10 });
  const oracle = new EditOraclePolicy({ tokenizer });
  t.match(oracle.turns(suite.tasks[8]!)[1], /<parameter=old_str>if \(value > high\) return high;\n {2}return high;<\/parameter>/, 'seed 8: widened by the line above');
  const played = await pool(suite.tasks, CONCURRENCY, (task) =>
    runEpisode({ env: new SweEnv(task, backend, { maxSteps: 8, prompt: 'compact' }), policy: oracle, context: { taskId: task.id, task, sample: 0 }, group: 0 }, agent));
  played.forEach((trajectory, i) => {
    const task = suite.tasks[i]!;
    const bugs = (task.metadata.sweGen as { bugs: unknown[] }).bugs.length;
    t.equal(trajectory.reward, 1, `${task.id}: reward 1 (${trajectory.rewardReason})`);
    t.same(trajectory.turns.map((turn) => turn.tool), ['file_editor', ...Array(bugs).fill('file_editor'), 'execute_bash', 'finish'], `${task.id}: view, ${bugs} edit(s), the call, finish`);
    t.ok(trajectory.turns.every((turn) => turn.formatError === undefined), `${task.id}: every turn well-formed`);
    // The first failing call, run after the fix, prints what the issue expects, as the issue writes it.
    const expected = /(?:should return|instead of(?: returning)?|to return) `([^`]*)`/.exec(task.problemStatement)![1]!;
    const observation = trajectory.turns.at(-2)!.observation;
    t.match(observation, /^Exit code: 0\n/, `${task.id}: the call runs`);
    t.ok(observation.trimEnd().split('\n').includes(expected), `${task.id}: and prints ${expected}, as the issue expects`);
  });
  t.throws(() => oracle.turns({ ...suite.tasks[0]!, metadata: {} }), /carries no swe-gen fix/, 'a task that is not generated is refused');

  // Recovery demonstrations: every episode first replaces the buggy line with itself.
  const recovering = new EditOraclePolicy({ tokenizer, recovery: 1 });
  const recovered = await pool(suite.tasks.slice(0, 4), CONCURRENCY, (task) =>
    runEpisode({ env: new SweEnv(task, backend, { maxSteps: 8, prompt: 'compact' }), policy: recovering, context: { taskId: task.id, task, sample: 0 }, group: 0 }, agent));
  recovered.forEach((trajectory, i) => {
    const task = suite.tasks[i]!;
    t.equal(trajectory.reward, 1, `${task.id}, recovering: reward 1`);
    t.match(trajectory.turns[1]!.toolError, /No replacement was performed: `new_str` is the same as `old_str`/, `${task.id}: the edit that changes nothing is refused, as a tool error`);
    t.same(trajectory.turns.map((turn) => turn.toolError !== undefined), trajectory.turns.map((_, j) => j === 1), `${task.id}: no other turn failed`);
    t.same(maskFailedTurns(trajectory).masked, 1, `${task.id}: fine-tuning masks that turn alone`);
  });
  t.same(suite.tasks.map((task) => new EditOraclePolicy({ recovery: 0.5 }).recovers(task)), suite.tasks.map((task) => new EditOraclePolicy({ recovery: 0.5 }).recovers(task)), 'which tasks recover is fixed by their ids');
  t.ok(suite.tasks.some((task) => new EditOraclePolicy({ recovery: 0.5 }).recovers(task)) && !suite.tasks.every((task) => new EditOraclePolicy({ recovery: 0.5 }).recovers(task)), 'a share of 0.5 picks some tasks, not all');
  t.throws(() => new EditOraclePolicy({ recovery: 2 }), /options\.recovery/, 'a share outside [0, 1] is refused');

  // Recovery elsewhere: the refused edit copies another line of the file, then the fix.
  const elsewhere = new EditOraclePolicy({ tokenizer, recovery: 1, recoverElsewhere: 1 });
  const oldStrs = (turn: string | undefined) => /<parameter=old_str>([\s\S]*?)<\/parameter>/.exec(turn ?? '')?.[1];
  const moved = await pool(suite.tasks, CONCURRENCY, (task) =>
    runEpisode({ env: new SweEnv(task, backend, { maxSteps: 8, prompt: 'compact' }), policy: elsewhere, context: { taskId: task.id, task, sample: 0 }, group: 0 }, agent));
  moved.forEach((trajectory, i) => {
    const task = suite.tasks[i]!;
    const meta = task.metadata.sweGen as { file: string; bugs: { before: string }[] };
    const source = readFileSync(path.join(task.repoDir!, meta.file), 'utf8');
    const copied = oldStrs(elsewhere.turns(task)[1])!;
    t.ok(source.split('\n').some((line) => line.trim() === copied), `${task.id}: the refused edit copies a line of the file (${JSON.stringify(copied)})`);
    t.ok(meta.bugs.every((bug) => bug.before.trim() !== copied), `${task.id}: not a buggy one`);
    t.equal(oldStrs(elsewhere.turns(task)[2]), oldStrs(oracle.turns(task)[1]), `${task.id}: then the fix's edit, as without a recovery`);
    t.equal(trajectory.reward, 1, `${task.id}, recovering elsewhere: reward 1`);
    t.match(trajectory.turns[1]!.toolError, /`new_str` is the same as `old_str`/, `${task.id}: the copy is refused`);
    t.same(trajectory.turns.map((turn) => turn.toolError !== undefined), trajectory.turns.map((_, j) => j === 1), `${task.id}: no other turn failed`);
  });
  t.same(suite.tasks.map((task) => oldStrs(new EditOraclePolicy({ recovery: 1, recoverElsewhere: 0 }).turns(task)[1])), suite.tasks.map((task) => oldStrs(oracle.turns(task)[1])), 'recoverElsewhere 0: the buggy line, as before');
  t.throws(() => new EditOraclePolicy({ recoverElsewhere: -0.1 }), /options\.recoverElsewhere/, 'a share outside [0, 1] is refused');

  // Retry demonstrations: a wrong fix, the call, the fix, the call again, finish.
  const retrying = new EditOraclePolicy({ tokenizer, retry: 1 });
  const retried = suite.tasks.filter((task) => retrying.mistakeTurns(task).length > 0);
  t.ok(retried.length >= 5, `most tasks have a wrong fix to make (${retried.length} of ${suite.tasks.length})`);
  for (const task of suite.tasks.filter((task) => !retried.includes(task)))
    t.same(retrying.turns(task), oracle.turns(task), `${task.id}: no wrong fix to make (${(task.metadata.sweGen as { bugs: unknown[] }).bugs.length} bug(s)): the plain episode`);
  const retriedPlays = await pool(retried, CONCURRENCY, (task) =>
    runEpisode({ env: new SweEnv(task, backend, { maxSteps: 6, prompt: 'compact' }), policy: retrying, context: { taskId: task.id, task, sample: 0 }, group: 0 }, agent));
  let shown = 0;
  retriedPlays.forEach((trajectory, i) => {
    const task = retried[i]!;
    t.equal(trajectory.reward, 1, `${task.id}, retrying: reward 1 within the demo's 6 steps (${trajectory.rewardReason})`);
    t.same(trajectory.turns.map((turn) => turn.tool), ['file_editor', 'file_editor', 'execute_bash', 'file_editor', 'execute_bash', 'finish'], `${task.id}: view, wrong fix, call, fix, call, finish`);
    t.ok(trajectory.turns.every((turn) => turn.toolError === undefined && turn.formatError === undefined), `${task.id}: every call accepted (the wrong line is found once)`);
    t.same(retrying.mistakeTurns(task), [1], `${task.id}: the wrong fix is the mistake`);
    const printed = (turn: number) => trajectory.turns[turn]!.observation.split('\nSteps Remaining:')[0];
    t.equal(retrying.demonstrates(task, trajectory), printed(2) !== printed(4), `${task.id}: it demonstrates a retry exactly when the call printed something else after the wrong fix`);
    if (printed(2) !== printed(4)) shown++;
    const masked = maskTurns(trajectory, retrying.mistakeTurns(task));
    const span = trajectory.turns[1]!;
    t.same(
      Array.from(masked.mask),
      Array.from(trajectory.mask, (m, j) => (j >= span.contextTokens && j < span.contextTokens + span.responseTokens ? 0 : m)),
      `${task.id}: maskTurns zeroes the wrong fix's tokens alone`,
    );
  });
  t.ok(shown >= retried.length / 2, `most wrong fixes show on the issue's call (${shown} of ${retried.length})`);
  t.equal(oracle.demonstrates(suite.tasks[0]!, played[0]!), true, 'an episode without a retry demonstrates what it means to');
  const both = new EditOraclePolicy({ recovery: 0.5, retry: 1 });
  t.ok(suite.tasks.every((task) => !(both.recovers(task) && both.mistakeTurns(task).length > 0)), 'a task recovers or retries, never both');
  t.throws(() => new EditOraclePolicy({ retry: -0.1 }), /options\.retry/, 'a retry share outside [0, 1] is refused');
  t.throws(() => oracle.turns({ ...suite.tasks[1]!, problemStatement: 'It is broken.' }), /the issue names no failing call/, 'an issue without a call to run is refused');
  checkRootEmpty(t);
});
