import t from 'tap';

import { parseAgentLoopOptions, type AgentLoopOptions } from '../../../lib/agent/agent-loop.js';
import { isInfrastructureFault, runRollouts, type RolloutItem, type RolloutOptions, type RolloutProgress } from '../../../lib/agent/rollout.js';
import { SwerlError } from '../../../lib/errors.js';
import { EnvCounter, FakeEnv, ScriptedPolicy, finished, going, sleep, within, type FakeEnvSpec, type Reply } from '../../support/agent-fakes.js';

const SETTLE_MS = 60_000;

function agent(overrides: Partial<AgentLoopOptions> = {}): AgentLoopOptions {
  return parseAgentLoopOptions(
    { maxTurns: 5, promptBudget: 1000, responseBudget: 1000, maxTokensPerTurn: 32, trajectoryTimeoutMs: 120_000, stepTimeoutMs: 60_000, enableThinking: false, ...overrides },
    'options',
  );
}

function rolloutOptions(overrides: Partial<RolloutOptions> = {}): RolloutOptions {
  return { concurrency: 4, generationConcurrency: 0, retries: 0, agent: agent(), ...overrides };
}

const says = (text: string): Reply => ({ text });

/** Items of `groups` x `samples`, each env made by make(group, sample, attempt). */
function items(groups: number, samples: number, make: (group: number, sample: number, attempt: number) => FakeEnv): RolloutItem[] {
  const out: RolloutItem[] = [];
  for (let group = 0; group < groups; group++) {
    for (let sample = 0; sample < samples; sample++) {
      let attempt = 0;
      out.push({ taskId: `task-${group}`, group, sample, seed: 100 * group + sample, makeEnv: () => make(group, sample, attempt++) });
    }
  }
  return out;
}

/** Reward 1 for odd (group + sample): lets a test check that labels follow the right env. */
const solves = (group: number, sample: number) => (group + sample) % 2 === 1;

function gradedEnv(group: number, sample: number, counter: EnvCounter, extra: FakeEnvSpec = {}): FakeEnv {
  return new FakeEnv({
    counter,
    reset: () => sleep(2),
    step: async (_, k) => {
      await sleep(1 + ((group * 7 + sample * 3) % 5));
      return k < 2 ? going(`obs ${k}`, k) : finished('done', k);
    },
    reward: { reward: solves(group, sample) ? 1 : 0, tests: {}, reason: `g${group}s${sample}` },
    ...extra,
  });
}

t.test('isInfrastructureFault: ERR_SWERL_SANDBOX SwerlErrors only', async (t) => {
  t.equal(isInfrastructureFault(new SwerlError('ERR_SWERL_SANDBOX', 'x')), true);
  t.equal(isInfrastructureFault(new SwerlError('ERR_SWERL_INVALID_ARG', 'x')), false);
  t.equal(isInfrastructureFault(new SwerlError('ERR_SWERL_ABORTED', 'x')), false);
  t.equal(isInfrastructureFault(Object.assign(new Error('x'), { code: 'ERR_SWERL_SANDBOX' })), false);
  t.equal(isInfrastructureFault('ERR_SWERL_SANDBOX'), false);
});

t.test('results are in item order and labelled by (group, sample); progress counts up', async (t) => {
  const counter = new EnvCounter();
  const policy = new ScriptedPolicy((turn, context) => says(`${context!.taskId} s${context!.sample} t${turn}`), 3);
  // Items shuffled, so item order is neither completion order nor (group, sample) order.
  const all = items(3, 4, (g, s) => gradedEnv(g, s, counter));
  const order = [5, 0, 11, 3, 8, 1, 10, 6, 2, 9, 4, 7];
  const shuffled = order.map((i) => all[i]!);
  const progress: RolloutProgress[] = [];
  const results = await within(runRollouts(shuffled, policy, rolloutOptions({ concurrency: 5 }), { weightVersion: 9, onProgress: (p) => progress.push(p) }), SETTLE_MS, 'runRollouts');

  t.same(results.map((r) => [r.group, r.sample]), shuffled.map((i) => [i.group, i.sample]));
  t.same(results.map((r) => r.taskId), shuffled.map((i) => i.taskId));
  t.same(results.map((r) => r.rewardReason), shuffled.map((i) => `g${i.group}s${i.sample}`), 'each trajectory came from its own env');
  t.same(results.map((r) => r.reward), shuffled.map((i) => (solves(i.group, i.sample) ? 1 : 0)));
  t.same(results.map((r) => r.turns[0]!.response), shuffled.map((i) => `task-${i.group} s${i.sample} t0`), 'the policy was told the episode');
  t.ok(results.every((r) => r.weightVersion === 9 && r.attempts === 1 && r.termination === 'submitted'));
  // Seeds: the item's seed, + turn.
  const seeds = new Map(policy.requests.map((r) => [`${r.context!.taskId}/${r.context!.sample}/${r.context!.turn}`, r.seed]));
  for (const item of shuffled) {
    t.equal(seeds.get(`${item.taskId}/${item.sample}/0`), item.seed);
    t.equal(seeds.get(`${item.taskId}/${item.sample}/1`), item.seed! + 1);
  }

  t.same(progress.map((p) => p.done), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  t.ok(progress.every((p) => p.total === 12));
  const solved = shuffled.filter((i) => solves(i.group, i.sample)).length;
  t.equal(progress.at(-1)!.rewardSum, solved);
  t.equal(progress.at(-1)!.solved, solved);
  t.equal(progress.at(-1)!.retries, 0);
  t.ok(progress.every((p) => p.running >= 1 && p.running <= 5));
  t.same(progress.map((p) => p.last?.rewardReason).sort(), shuffled.map((i) => `g${i.group}s${i.sample}`).sort(), 'last: each trajectory once');
  t.equal(counter.created, 12);
  t.equal(counter.alive, 0);
});

t.test('concurrency bounds envs alive; generationConcurrency bounds generations in flight', async (t) => {
  for (const [concurrency, generationConcurrency, expectGen] of [[3, 2, 2], [3, 0, 3], [1, 0, 1], [6, 4, 4]] as const) {
    const counter = new EnvCounter();
    const policy = new ScriptedPolicy(() => says('go'), 15);
    const results = await within(
      runRollouts(items(4, 3, (g, s) => gradedEnv(g, s, counter)), policy, rolloutOptions({ concurrency, generationConcurrency })),
      SETTLE_MS,
      'runRollouts',
    );
    t.equal(results.length, 12);
    t.equal(counter.maxAlive, concurrency, `concurrency ${concurrency}: at most (and here exactly) ${concurrency} envs alive`);
    t.equal(policy.maxInFlight, expectGen, `concurrency ${concurrency}, generationConcurrency ${generationConcurrency}: ${expectGen} generations in flight at most`);
    t.equal(counter.alive, 0);
    t.equal(counter.closed, 12);
  }
});

t.test('infrastructure faults are retried with a fresh env; model behaviour never is', async (t) => {
  const counter = new EnvCounter();
  const made = new Map<string, number>();
  const sandbox = (what: string) => new SwerlError('ERR_SWERL_SANDBOX', what);
  const envs: Record<string, (attempt: number) => FakeEnvSpec> = {
    // reset fails once (the sandbox could not start), then works
    resetFault: (a) => ({ reset: () => { if (a === 0) throw sandbox('no container'); }, step: (_, k) => finished('', k), reward: { reward: 1, tests: {}, reason: 'ok' } }),
    // the sandbox dies mid-episode twice (step throws: an 'error' trajectory), then works
    stepFault: (a) => ({ step: (_, k) => { if (a < 2) throw sandbox('died'); return finished('', k); }, reward: { reward: 1, tests: {}, reason: 'ok' } }),
    // the env itself reports the sandbox failure
    reported: (a) => ({ step: (_, k) => (a === 0 ? finished('failed', k, 'error', { error: 'exec failed' }) : finished('', k)) }),
    // model behaviour: out of steps, a wrong answer, a timeout of its own, an exhausted budget
    maxSteps: () => ({ step: (_, k) => finished('out of steps', k, 'max_steps') }),
    wrong: () => ({ step: (_, k) => finished('', k), reward: { reward: 0, tests: { a: 'FAILED' }, reason: 'wrong' } }),
    envTimeout: () => ({ step: (_, k) => finished('', k, 'env_timeout') }),
    maxTurns: () => ({}),
    // always failing mid-episode: after the retries, kept as an 'error' trajectory
    hopeless: () => ({ step: () => { throw sandbox('always dies'); } }),
  };
  const names = Object.keys(envs);
  const list: RolloutItem[] = names.map((name, group) => ({
    taskId: name,
    group,
    sample: 0,
    makeEnv: () => {
      const attempt = made.get(name) ?? 0;
      made.set(name, attempt + 1);
      return new FakeEnv({ counter, ...envs[name]!(attempt) });
    },
  }));
  const progress: RolloutProgress[] = [];
  const results = await within(
    runRollouts(list, new ScriptedPolicy(() => says('go')), rolloutOptions({ retries: 2, agent: agent({ maxTurns: 2 }) }), { onProgress: (p) => progress.push(p) }),
    SETTLE_MS,
    'runRollouts',
  );
  const byName = Object.fromEntries(results.map((r) => [r.taskId, r]));
  const attempts = Object.fromEntries(names.map((n) => [n, byName[n]!.attempts]));
  t.same(attempts, { resetFault: 2, stepFault: 3, reported: 2, maxSteps: 1, wrong: 1, envTimeout: 1, maxTurns: 1, hopeless: 3 });
  t.same(Object.fromEntries(made), attempts, 'one fresh env per attempt');
  t.same(
    Object.fromEntries(names.map((n) => [n, byName[n]!.termination])),
    { resetFault: 'submitted', stepFault: 'submitted', reported: 'submitted', maxSteps: 'max_steps', wrong: 'submitted', envTimeout: 'env_timeout', maxTurns: 'max_steps', hopeless: 'error' },
  );
  t.equal(byName.resetFault!.reward, 1);
  t.equal(byName.stepFault!.reward, 1);
  t.equal(byName.hopeless!.error, 'always dies');
  t.equal(byName.hopeless!.reward, 0);
  t.equal(progress.at(-1)!.retries, 1 + 2 + 1 + 2);
  t.equal(counter.created, 2 + 3 + 2 + 1 + 1 + 1 + 1 + 3, 'every env');
  t.equal(counter.closed, counter.created, 'every env closed');
});

t.test('a reset that hangs past the trajectory timeout is retried', async (t) => {
  const counter = new EnvCounter();
  let attempts = 0;
  const list: RolloutItem[] = [{
    taskId: 'stuck',
    group: 0,
    sample: 0,
    makeEnv: () => new FakeEnv({ counter, reset: attempts++ === 0 ? () => new Promise<void>(() => {}) : undefined, step: (_, k) => finished('', k) }),
  }];
  const [result] = await within(runRollouts(list, new ScriptedPolicy(() => says('go')), rolloutOptions({ retries: 1, agent: agent({ trajectoryTimeoutMs: 200 }) })), SETTLE_MS, 'runRollouts');
  t.equal(result!.attempts, 2);
  t.equal(result!.termination, 'submitted');
  t.equal(counter.created, 2);
  t.equal(counter.alive, 0);
});

t.test('retries exhausted: the batch rejects and every env created is closed', async (t) => {
  const counter = new EnvCounter();
  let brokenAttempts = 0;
  const policy = new ScriptedPolicy((_, context) => (context!.taskId === 'slow' ? 'hang' : says('go')));
  const list: RolloutItem[] = [
    { taskId: 'slow', group: 0, sample: 0, makeEnv: () => new FakeEnv({ counter }) },
    { taskId: 'slow', group: 0, sample: 1, makeEnv: () => new FakeEnv({ counter }) },
    {
      taskId: 'broken',
      group: 1,
      sample: 0,
      makeEnv: () => {
        brokenAttempts++;
        return new FakeEnv({ counter, reset: async () => { await sleep(20); throw new SwerlError('ERR_SWERL_SANDBOX', 'cannot start'); } });
      },
    },
    // Never started: concurrency 3 is taken until the batch fails.
    ...Array.from({ length: 3 }, (_, i) => ({ taskId: 'later', group: 2, sample: i, makeEnv: () => new FakeEnv({ counter }) })),
  ];
  await t.rejects(
    within(runRollouts(list, policy, rolloutOptions({ concurrency: 3, retries: 2 })), SETTLE_MS, 'runRollouts'),
    { code: 'ERR_SWERL_SANDBOX', message: 'cannot start' },
  );
  t.equal(brokenAttempts, 3, '1 + 2 retries');
  t.equal(counter.alive, 0, 'no env left open');
  t.equal(counter.closed, counter.created);
  t.ok(policy.requests.filter((r) => r.context!.taskId === 'slow').every((r) => r.aborted), 'the hanging generations were aborted');
});

t.test('a fault that is not infrastructure is not retried and fails the batch', async (t) => {
  for (const error of [new SwerlError('ERR_SWERL_INVALID_TASK', 'bad task row'), new TypeError('a bug')]) {
    const counter = new EnvCounter();
    let attempts = 0;
    const list: RolloutItem[] = [
      { taskId: 'bad', group: 0, sample: 0, makeEnv: () => (attempts++, new FakeEnv({ counter, reset: () => { throw error; } })) },
      { taskId: 'ok', group: 1, sample: 0, makeEnv: () => new FakeEnv({ counter }) },
    ];
    await t.rejects(within(runRollouts(list, new ScriptedPolicy(() => says('go'), 5), rolloutOptions({ retries: 3 })), SETTLE_MS, 'runRollouts'), error);
    t.equal(attempts, 1, `${error.message}: no retry`);
    t.equal(counter.alive, 0);
  }
});

t.test('an external abort rejects with ERR_SWERL_ABORTED and leaves no env open', async (t) => {
  const counter = new EnvCounter();
  const policy = new ScriptedPolicy((turn) => (turn === 0 ? says('first') : 'hang'));
  const stop = new AbortController();
  const list = items(3, 3, () => new FakeEnv({ counter }));
  const batch = within(runRollouts(list, policy, rolloutOptions({ concurrency: 4, retries: 2 }), { signal: stop.signal }), SETTLE_MS, 'runRollouts');
  while (policy.requests.filter((r) => r.context!.turn === 1).length < 4) await sleep(5);
  stop.abort();
  await t.rejects(batch, { code: 'ERR_SWERL_ABORTED', name: 'SwerlError' });
  t.equal(counter.created, 4, 'items waiting for a slot never start');
  t.equal(counter.alive, 0);
  t.ok(policy.requests.filter((r) => r.context!.turn === 1).every((r) => r.aborted));

  const early = new EnvCounter();
  await t.rejects(
    runRollouts(items(2, 2, () => new FakeEnv({ counter: early })), policy, rolloutOptions(), { signal: AbortSignal.abort() }),
    { code: 'ERR_SWERL_ABORTED' },
  );
  t.equal(early.created, 0, 'an aborted signal starts nothing');
});

t.test('an empty batch resolves to []', async (t) => {
  t.same(await runRollouts([], new ScriptedPolicy(() => says('go')), rolloutOptions()), []);
});
