import t, { type Test } from 'tap';

import { assistantAction, parseAgentLoopOptions, runEpisode, type AgentLoopOptions, type EpisodeSpec } from '../../../lib/agent/agent-loop.js';
import type { Trajectory } from '../../../lib/agent/trajectory.js';
import type { StepResult } from '../../../lib/env/env.js';
import { SwerlError } from '../../../lib/errors.js';
import { renderChat, type ChatMessage } from '../../../lib/model/chat-template.js';
import {
  FakeEnv,
  IM_END,
  OPENING,
  ScriptedPolicy,
  finished,
  going,
  logprobOf,
  never,
  sleep,
  tokenizer,
  within,
  type Reply,
} from '../../support/agent-fakes.js';

/** Every test's episode must settle well within this (a hung loop fails instead of hanging tap). */
const SETTLE_MS = 30_000;

function options(overrides: Partial<AgentLoopOptions> = {}): AgentLoopOptions {
  return parseAgentLoopOptions(
    {
      maxTurns: 10,
      promptBudget: 1000,
      responseBudget: 1000,
      maxTokensPerTurn: 64,
      trajectoryTimeoutMs: 120_000,
      stepTimeoutMs: 60_000,
      enableThinking: false,
      ...overrides,
    },
    'options',
  );
}

function spec(env: FakeEnv, policy: ScriptedPolicy, extra: Partial<EpisodeSpec> = {}): EpisodeSpec {
  return { env, policy, context: { taskId: 'task-7', sample: 3 }, group: 2, ...extra };
}

function play(env: FakeEnv, policy: ScriptedPolicy, opts: Partial<AgentLoopOptions> = {}, extra: Partial<EpisodeSpec> = {}): Promise<Trajectory> {
  return within(runEpisode(spec(env, policy, extra), options(opts)), SETTLE_MS, 'runEpisode');
}

const says = (text: string, end = true): Reply => ({ text, end });

/**
 * Hand counts with ByteTokenizer (one id per byte or ChatML token) and enableThinking false:
 *   system "sys":  <|im_start|> "system\n" "sys" <|im_end|> "\n"        = 1 + 7 + 3 + 1 + 1 = 13
 *   user "task":   <|im_start|> "user\n" "task" <|im_end|> "\n"         = 1 + 5 + 4 + 1 + 1 = 12
 *   header:        <|im_start|> "assistant\n" <think> "\n\n" </think> "\n\n" = 1 + 10 + 1 + 2 + 1 + 2 = 17
 *   a user turn of k characters, then the next header: k + 8 + 17
 */
const PROMPT = 13 + 12 + 17;
const userTurn = (content: string) => new TextEncoder().encode(content).length + 8 + 17;

/** The mask and ids of the conversation rendered all at once, independently of the loop. */
function rendered(messages: ChatMessage[]) {
  return renderChat(tokenizer, messages, { enableThinking: false });
}

function checkConsistency(t: Test, trajectory: Trajectory): void {
  t.equal(trajectory.promptTokens + trajectory.responseTokens, trajectory.tokens.length, 'promptTokens + responseTokens = tokens');
  t.equal(trajectory.mask.length, trajectory.tokens.length);
  t.equal(trajectory.logprobs.length, trajectory.tokens.length);
  for (let i = 0; i < trajectory.tokens.length; i++) {
    if (trajectory.mask[i] === 0 && trajectory.logprobs[i] !== 0) {
      t.fail(`logprob ${trajectory.logprobs[i]} at unmasked position ${i}`);
      return;
    }
  }
}

t.test('PROMPT matches the chat template', async (t) => {
  t.equal(rendered(OPENING).ids.length + 17, PROMPT);
  t.equal(renderChat(tokenizer, OPENING, { enableThinking: false, addGenerationPrompt: true }).ids.length, PROMPT);
  const before = rendered([...OPENING, { role: 'assistant', content: 'x' }]).ids.length;
  const after = renderChat(tokenizer, [...OPENING, { role: 'assistant', content: 'x' }, { role: 'user', content: 'o1' }], { enableThinking: false, addGenerationPrompt: true }).ids.length;
  t.equal(after - before, userTurn('o1'), 'a user turn and the next header');
});

t.test('budgets: maxTokens shrinks, the warning comes, a cut at the remaining budget is max_context', async (t) => {
  const env = new FakeEnv({ step: (_, k) => going(`o${k}`, k) });
  const replies = [says('abcdefghij'), says('ABCDEFGHIJ'), says('x'.repeat(30), false)];
  const policy = new ScriptedPolicy((turn) => replies[turn]!);
  const traj = await play(env, policy, { responseBudget: 100, maxTokensPerTurn: 64, warnTokensLeft: 50, budgetWarning: 'HURRY' }, { seed: 1000 });

  // Turn 0: 64 (the per-turn limit); it uses 11 + "\n", observation o1 27: 39 used.
  // Turn 1: 100 - 39 = 61; it uses 12: 51 used, 49 < 50 left, so o2 carries the warning (33): 84.
  // Turn 2: 100 - 84 = 16, and the 30-token reply is cut there: max_context.
  t.same(policy.requests.map((r) => r.maxTokens), [64, 61, 16], 'maxTokens per turn');
  t.equal(userTurn('o1'), 27);
  t.equal(userTurn('o2\nHURRY'), 33);
  t.same(policy.requests.map((r) => r.seed), [1000, 1001, 1002], 'seed + turn');
  t.same(policy.requests.map((r) => r.context?.turn), [0, 1, 2]);
  t.same(policy.requests.map((r) => r.prompt.length), [PROMPT, 81, 126], 'each prompt is the whole context');
  t.same(policy.requests[0]!.context, { taskId: 'task-7', sample: 3, turn: 0 });
  t.equal(traj.termination, 'max_context');
  t.same(env.actions, ['abcdefghij', 'ABCDEFGHIJ'], 'the cut turn is not stepped; actions are decoded without <|im_end|>');
  t.same(env.terminated, ['max_context']);
  t.equal(env.rewardCalls, 1, 'graded');
  t.equal(env.closes, 1);

  t.same(traj.turns.map((x) => x.contextTokens), [42, 81, 126]);
  t.same(traj.turns.map((x) => x.responseTokens), [11, 11, 16]);
  t.same(traj.turns.map((x) => x.finishReason), ['stop', 'stop', 'length']);
  t.same(traj.turns.map((x) => x.observation), ['o1', 'o2\nHURRY', '']);
  t.same(traj.turns.map((x) => x.observationTokens), [27, 33, 0]);
  t.same(traj.turns.map((x) => x.response), ['abcdefghij', 'ABCDEFGHIJ', 'x'.repeat(16)]);
  t.equal(traj.promptTokens, 42);
  // 11 + 1 + 27 + 11 + 1 + 33 + 16 + 1 (the unsampled <|im_end|>) + 1 ("\n")
  t.equal(traj.responseTokens, 102);
  t.equal(traj.tokens.length, 144);
  checkConsistency(t, traj);

  // The mask is 1 exactly on the sampled tokens, as the template renders the conversation.
  const g = policy.generations;
  const whole = rendered([
    ...OPENING,
    { role: 'assistant', content: null, tokenIds: g[0]!.tokens },
    { role: 'user', content: 'o1' },
    { role: 'assistant', content: null, tokenIds: g[1]!.tokens },
    { role: 'user', content: 'o2\nHURRY' },
    { role: 'assistant', content: null, tokenIds: g[2]!.tokens },
  ]);
  t.same(Array.from(traj.tokens), Array.from(whole.ids), 'tokens = the rendered conversation');
  t.same(Array.from(traj.mask), Array.from(whole.mask), 'mask = the template mask of sampled turns');
  const positions = (start: number, n: number) => Array.from({ length: n }, (_, i) => start + i);
  const expectedOnes = [...positions(42, 11), ...positions(81, 11), ...positions(126, 16)];
  t.same(traj.mask.reduce<number[]>((acc, m, i) => (m ? [...acc, i] : acc), []), expectedOnes, 'mask positions by hand');
  t.equal(traj.tokens[52], IM_END, 'the sampled <|im_end|> is masked in');
  t.equal(traj.tokens[142], IM_END);
  t.equal(traj.mask[142], 0, 'the <|im_end|> closing a cut turn was not sampled');
  const expectedLogprobs = new Float32Array(144);
  [42, 81, 126].forEach((start, turn) => g[turn]!.tokens.forEach((_, i) => (expectedLogprobs[start + i] = logprobOf(turn, i))));
  t.same(Array.from(traj.logprobs), Array.from(expectedLogprobs), 'logprobs at sampled positions, 0 elsewhere');
  t.equal(traj.group, 2);
  t.equal(traj.sample, 3);
  t.equal(traj.taskId, 'task-7');
});

t.test('no warning when warnTokensLeft is 0, and a cut by the per-turn limit is not max_context', async (t) => {
  const env = new FakeEnv({ step: (_, k) => (k < 2 ? going(`o${k}`, k) : finished('bye', k)) });
  const policy = new ScriptedPolicy((turn) => (turn === 0 ? says('y'.repeat(40), false) : says('done')));
  const traj = await play(env, policy, { responseBudget: 100, maxTokensPerTurn: 20, budgetWarning: 'HURRY' });
  // Turn 0 is cut at 20 (< 100 left): the env still gets it. 20 + <|im_end|> + "\n" + o1 27 = 49 used.
  t.same(policy.requests.map((r) => r.maxTokens), [20, 20]);
  t.same(traj.turns.map((x) => x.finishReason), ['length', 'stop']);
  t.same(env.actions, ['y'.repeat(20), 'done']);
  t.equal(traj.turns[0]!.observation, 'o1', 'no warning');
  t.equal(traj.termination, 'submitted');
  t.equal(traj.responseTokens, 20 + 2 + 27 + 5 + 1);
  checkConsistency(t, traj);
});

t.test('submitted: the env ends the episode; reward, tests, patch and tool are recorded', async (t) => {
  const env = new FakeEnv({
    step: (_, k) => (k < 3 ? going(`out ${k}`, k, 'bash') : finished('submitted!', k, undefined, { tool: 'finish' })),
    reward: { reward: 1, tests: { test_a: 'PASSED', test_b: 'PASSED' }, reason: 'every test passes', patch: 'diff --git' },
  });
  const policy = new ScriptedPolicy((turn) => says(`step ${turn}`));
  const traj = await play(env, policy, { temperature: 0.7 }, { weightVersion: 12, seed: 5 });
  t.equal(traj.termination, 'submitted');
  t.equal(traj.turns.length, 3);
  t.same(traj.turns.map((x) => x.tool), ['bash', 'bash', 'finish']);
  t.same(traj.turns.map((x) => x.observation), ['out 1', 'out 2', 'submitted!']);
  t.same(traj.turns.map((x) => x.observationTokens), [userTurn('out 1'), userTurn('out 2'), 0]);
  t.equal(traj.reward, 1);
  t.equal(traj.rewardReason, 'every test passes');
  t.same(traj.tests, { test_a: 'PASSED', test_b: 'PASSED' });
  t.equal(traj.patch, 'diff --git');
  t.equal(traj.weightVersion, 12);
  t.equal(traj.attempts, 1);
  t.equal(traj.error, undefined);
  t.same(env.terminated, ['submitted']);
  t.same(policy.requests.map((r) => r.seed), [5, 6, 7]);
  t.same(policy.requests.map((r) => r.temperature), [0.7, 0.7, 0.7]);
  t.same(policy.requests.map((r) => [r.topK, r.topP]), [[undefined, undefined], [undefined, undefined], [undefined, undefined]], 'pure sampling: no topK/topP');
  t.equal(env.closes, 1);
  // Each turn: "step k" + <|im_end|> + "\n" = 8; two observations between them.
  t.equal(traj.responseTokens, 3 * 8 + userTurn('out 1') + userTurn('out 2'));
  t.same(traj.turns.map((x) => x.contextTokens), [PROMPT, PROMPT + 8 + userTurn('out 1'), PROMPT + 16 + userTurn('out 1') + userTurn('out 2')]);
  checkConsistency(t, traj);
  t.ok(traj.timings.totalMs >= traj.timings.generateMs);
});

t.test("Qwen <tool_call> blocks reach the env as JSON tool calls; plain text stays text", async (t) => {
  t.equal(assistantAction('<function=finish>\n</function>'), '<function=finish>\n</function>', 'the text grammar is the env\'s to read');
  t.same(assistantAction('Let me look.\n<tool_call>\n{"name": "file_editor", "arguments": {"command": "view", "path": "/testbed/a.py"}}\n</tool_call>'), {
    content: 'Let me look.',
    tool_calls: [{ type: 'function', function: { name: 'file_editor', arguments: { command: 'view', path: '/testbed/a.py' } } }],
  });
  const two = assistantAction('<tool_call>{"name": "a", "arguments": {}}</tool_call><tool_call>{"name": "b", "arguments": [1]}</tool_call>') as { tool_calls: unknown[] };
  t.same(two.tool_calls, [{ type: 'function', function: { name: 'a', arguments: {} } }, { type: 'function', function: { name: 'b', arguments: '[1]' } }], 'every call; arguments that are not an object go as text');
  const env = new FakeEnv({ step: (_, k) => finished('done', k, undefined, { tool: 'finish' }) });
  await play(env, new ScriptedPolicy(() => says('<tool_call>\n{"name": "finish", "arguments": {"command": "submit"}}\n</tool_call>')));
  t.same(env.given, [{ content: '', tool_calls: [{ type: 'function', function: { name: 'finish', arguments: { command: 'submit' } } }] }], 'the agent loop hands the env the parsed turn');
});

t.test("the env's format errors are kept on their turns", async (t) => {
  const broken = (observation: string, k: number, formatError: string): StepResult => ({ observation, done: false, info: { steps: k, durationMs: 0, formatError } });
  const env = new FakeEnv({
    step: (_, k) => (k === 1 ? broken('no call', k, 'no tool call') : k === 2 ? going('ok', k, 'bash') : finished('done', k, undefined, { tool: 'finish', formatError: '2 tool calls in one turn (only the first ran)' })),
  });
  const traj = await play(env, new ScriptedPolicy((turn) => says(`step ${turn}`)));
  t.same(traj.turns.map((x) => x.formatError), ['no tool call', undefined, '2 tool calls in one turn (only the first ran)']);
});

t.test('topK, topP and no seed are passed as given', async (t) => {
  const env = new FakeEnv({ step: (_, k) => finished('', k) });
  const policy = new ScriptedPolicy(() => says('a'));
  await play(env, policy, { topK: 5, topP: 0.9 });
  t.equal(policy.requests[0]!.topK, 5);
  t.equal(policy.requests[0]!.topP, 0.9);
  t.equal(policy.requests[0]!.seed, undefined);
});

t.test('max_steps: maxTurns reached', async (t) => {
  const env = new FakeEnv();
  const policy = new ScriptedPolicy(() => says('again'));
  const traj = await play(env, policy, { maxTurns: 2 });
  t.equal(traj.termination, 'max_steps');
  t.equal(traj.turns.length, 2);
  t.equal(policy.requests.length, 2);
  t.equal(env.actions.length, 2, 'both turns were stepped');
  t.same(env.terminated, ['max_steps']);
  t.equal(env.rewardCalls, 1);
  t.equal(env.closes, 1);
  checkConsistency(t, traj);
});

t.test('max_steps: reported by the env', async (t) => {
  const env = new FakeEnv({ step: (_, k) => (k < 2 ? going('go on', k) : finished('out of steps', k, 'max_steps')) });
  const policy = new ScriptedPolicy(() => says('again'));
  const traj = await play(env, policy, { maxTurns: 10 });
  t.equal(traj.termination, 'max_steps');
  t.equal(traj.turns.length, 2);
  t.same(env.terminated, ['max_steps']);
  t.equal(env.closes, 1);
});

t.test('max_context: an opening prompt over promptBudget ends the episode before any turn', async (t) => {
  const env = new FakeEnv({ reward: { reward: 0, tests: {}, reason: 'no patch' } });
  const policy = new ScriptedPolicy(() => says('never'));
  const traj = await play(env, policy, { promptBudget: PROMPT - 1 });
  t.equal(traj.termination, 'max_context');
  t.equal(policy.requests.length, 0, 'no generation');
  t.equal(env.actions.length, 0);
  t.equal(traj.turns.length, 0);
  t.equal(traj.promptTokens, PROMPT);
  t.equal(traj.responseTokens, 0);
  t.equal(traj.mask.reduce((a, b) => a + b, 0), 0);
  t.same(env.terminated, ['max_context']);
  t.equal(traj.rewardReason, 'no patch');
  t.equal(env.closes, 1);

  // A prompt of exactly promptBudget tokens is allowed.
  const env2 = new FakeEnv({ step: (_, k) => finished('', k) });
  const traj2 = await play(env2, new ScriptedPolicy(() => says('ok')), { promptBudget: PROMPT });
  t.equal(traj2.termination, 'submitted');
});

t.test('max_context: the response budget is used up by an observation', async (t) => {
  const env = new FakeEnv({ step: (_, k) => going(`o${k}`, k) });
  const policy = new ScriptedPolicy((turn) => (turn === 0 ? says('abcdefghij') : says('abcde')));
  const traj = await play(env, policy, { responseBudget: 50 });
  // Turn 0: 50; 12 + 27 = 39 used. Turn 1: 11 (its 6 fit); 39 + 7 + 27 = 73 > 50: no third turn.
  t.same(policy.requests.map((r) => r.maxTokens), [50, 11]);
  t.equal(traj.termination, 'max_context');
  t.equal(traj.turns.length, 2);
  t.equal(env.actions.length, 2);
  t.equal(traj.responseTokens, 73);
  t.same(env.terminated, ['max_context']);
  t.equal(env.closes, 1);
  checkConsistency(t, traj);
});

t.test('timeout: a hanging generation is aborted through request.signal', async (t) => {
  const env = new FakeEnv();
  const policy = new ScriptedPolicy(() => 'hang');
  const started = performance.now();
  const traj = await play(env, policy, { trajectoryTimeoutMs: 150 });
  t.ok(performance.now() - started >= 140, 'not before the deadline');
  t.equal(traj.termination, 'timeout');
  t.equal(policy.requests.length, 1);
  t.equal(policy.requests[0]!.aborted, true, 'the request signal was aborted');
  t.equal(traj.turns.length, 0, 'the cancelled turn is not recorded');
  t.equal(traj.responseTokens, 0);
  t.equal(traj.mask.reduce((a, b) => a + b, 0), 0);
  t.same(env.terminated, ['timeout']);
  t.equal(env.rewardCalls, 1, 'graded (compact filtering decides later)');
  t.equal(env.closes, 1);
});

t.test('timeout: a later turn hangs', async (t) => {
  const env = new FakeEnv();
  const policy = new ScriptedPolicy((turn) => (turn === 0 ? says('first') : 'hang'));
  const traj = await play(env, policy, { trajectoryTimeoutMs: 300 });
  t.equal(traj.termination, 'timeout');
  t.equal(traj.turns.length, 1);
  t.equal(policy.requests.length, 2);
  t.equal(policy.requests[1]!.aborted, true);
  t.equal(traj.mask.reduce((a, b) => a + b, 0), 6, 'the first turn stays masked in');
  t.equal(env.closes, 1);
  checkConsistency(t, traj);
});

t.test('timeout: env.step hangs past the trajectory deadline (before stepTimeoutMs)', async (t) => {
  const env = new FakeEnv({ step: () => never() });
  const policy = new ScriptedPolicy(() => says('go'));
  const traj = await play(env, policy, { trajectoryTimeoutMs: 200, stepTimeoutMs: 60_000 });
  t.equal(traj.termination, 'timeout');
  t.equal(traj.turns.length, 1);
  t.same(env.terminated, ['timeout']);
  t.equal(env.closes, 1);
});

t.test('env_timeout: env.step hangs beyond stepTimeoutMs', async (t) => {
  const env = new FakeEnv({ step: (_, k) => (k === 1 ? going('fine', k) : never()) });
  const policy = new ScriptedPolicy(() => says('go'));
  const traj = await play(env, policy, { trajectoryTimeoutMs: 120_000, stepTimeoutMs: 100 });
  t.equal(traj.termination, 'env_timeout');
  t.equal(traj.turns.length, 2);
  t.ok(traj.turns[1]!.stepMs >= 90, `the step ran until its limit (${traj.turns[1]!.stepMs} ms)`);
  t.equal(traj.turns[1]!.observation, '');
  t.same(env.terminated, ['env_timeout']);
  t.equal(env.rewardCalls, 1);
  t.equal(env.closes, 1);
});

t.test('each step gets the step timeout, or the episode time left when less', async (t) => {
  const env = new FakeEnv({ step: async (_, k) => (await new Promise((r) => setTimeout(r, k === 1 ? 0 : 150)), going('ok', k)) });
  const policy = new ScriptedPolicy(() => says('go'));
  const traj = await play(env, policy, { maxTurns: 3, trajectoryTimeoutMs: 400, stepTimeoutMs: 300 });
  t.equal(env.limits[0]!.timeoutMs, 300, 'the first step: the step timeout');
  t.equal(env.limits[0]!.endsEpisode, false);
  const last = env.limits.at(-1)!;
  t.ok(last.timeoutMs < 300 && last.endsEpisode, `a later step: the ${last.timeoutMs} ms the episode has left, which ends it`);
  t.ok(env.limits.every((l) => l!.timeoutMs > 0), 'never a limit of 0 or less');
  t.ok(['timeout', 'max_steps'].includes(traj.termination!), traj.termination!);
});

t.test('error: env.step throws; not graded, reward 0, the error recorded', async (t) => {
  const env = new FakeEnv({
    step: (_, k) => {
      if (k === 2) throw new SwerlError('ERR_SWERL_SANDBOX', 'the container died');
      return going('ok', k);
    },
    reward: { reward: 1, tests: { a: 'PASSED' }, reason: 'would pass' },
  });
  const policy = new ScriptedPolicy(() => says('go'));
  const traj = await play(env, policy);
  t.equal(traj.termination, 'error');
  t.equal(traj.error, 'the container died');
  t.equal(traj.reward, 0);
  t.match(traj.rewardReason, /the container died/);
  t.equal(traj.tests, undefined);
  t.equal(env.rewardCalls, 0, 'not graded');
  t.same(env.terminated, [], 'the env is not told');
  t.equal(traj.turns.length, 2);
  t.equal(env.closes, 1);
  checkConsistency(t, traj);
});

t.test('error: reported by the env (done with termination error)', async (t) => {
  const env = new FakeEnv({
    step: (_, k) => finished('The sandbox failed', k, 'error', { error: 'exec failed' }),
    reward: { reward: 1, tests: {}, reason: 'would pass' },
  });
  const traj = await play(env, new ScriptedPolicy(() => says('go')));
  t.equal(traj.termination, 'error');
  t.equal(traj.error, 'exec failed');
  t.equal(traj.reward, 0);
  t.equal(env.rewardCalls, 0);
  t.equal(env.closes, 1);
});

t.test('env.close() once when reset() or reward() throws', async (t) => {
  const boom = new SwerlError('ERR_SWERL_SANDBOX', 'no container');
  const env = new FakeEnv({ reset: () => Promise.reject(boom) });
  const policy = new ScriptedPolicy(() => says('go'));
  await t.rejects(play(env, policy), boom);
  t.equal(env.closes, 1);
  t.equal(policy.requests.length, 0);

  const plain = new FakeEnv({ reset: () => { throw new TypeError('bug'); } });
  await t.rejects(play(plain, policy), { name: 'TypeError', message: 'bug' });
  t.equal(plain.closes, 1);

  const grading = new FakeEnv({ step: (_, k) => finished('', k), rewardError: new Error('grader crashed') });
  await t.rejects(play(grading, policy), { message: 'grader crashed' });
  t.equal(grading.closes, 1);
});

t.test('a reset that outlives trajectoryTimeoutMs is an infrastructure fault', async (t) => {
  const env = new FakeEnv({ reset: () => never() });
  const policy = new ScriptedPolicy(() => says('go'));
  await t.rejects(play(env, policy, { trajectoryTimeoutMs: 100 }), {
    name: 'SwerlError',
    code: 'ERR_SWERL_SANDBOX',
    message: 'env.reset() did not finish within trajectoryTimeoutMs (100 ms)',
  });
  t.equal(env.closes, 1);
  t.equal(policy.requests.length, 0);
});

t.test('an env without terminate() is fine', async (t) => {
  const env = new FakeEnv({ terminable: false });
  const traj = await play(env, new ScriptedPolicy(() => says('go')), { maxTurns: 1 });
  t.equal(traj.termination, 'max_steps');
  t.equal(env.closes, 1);
});

t.test('an external abort rejects with ERR_SWERL_ABORTED and closes the env', async (t) => {
  t.test('aborted before the episode starts', async (t) => {
    const env = new FakeEnv();
    const policy = new ScriptedPolicy(() => says('go'));
    await t.rejects(play(env, policy, {}, { signal: AbortSignal.abort() }), { code: 'ERR_SWERL_ABORTED' });
    t.equal(env.closes, 1);
    t.equal(policy.requests.length, 0);
  });

  t.test('aborted during a generation', async (t) => {
    const env = new FakeEnv();
    const policy = new ScriptedPolicy((turn) => (turn === 0 ? says('first') : 'hang'));
    const stop = new AbortController();
    const episode = play(env, policy, {}, { signal: stop.signal });
    while (policy.requests.length < 2) await sleep(5);
    stop.abort();
    await t.rejects(episode, { code: 'ERR_SWERL_ABORTED', name: 'SwerlError' });
    t.equal(policy.requests[1]!.aborted, true, 'the generation was aborted');
    t.equal(env.rewardCalls, 0);
    t.equal(env.closes, 1);
  });

  t.test('aborted during a step: no further turn', async (t) => {
    let release: () => void = () => {};
    const env = new FakeEnv({
      step: (_, k) => new Promise((resolve) => (release = () => resolve(going('late', k)))),
    });
    const policy = new ScriptedPolicy(() => says('go'));
    const stop = new AbortController();
    const episode = play(env, policy, {}, { signal: stop.signal });
    while (env.actions.length < 1) await sleep(5);
    stop.abort();
    release();
    await t.rejects(episode, { code: 'ERR_SWERL_ABORTED' });
    t.equal(policy.requests.length, 1);
    t.equal(env.closes, 1);
  });
});
