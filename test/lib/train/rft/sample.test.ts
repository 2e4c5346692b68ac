/**
 * Rejection sampling by rounds on real episodes: a scripted policy that applies a task's gold
 * patch on chosen samples only plays bundled tasks in the local (bwrap) sandbox, graded by their
 * hidden tests, so which episodes resolve is known and each round's draws and counts follow.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import t from 'tap';

import { parseAgentLoopOptions } from '../../../../lib/agent/agent-loop.js';
import { runRollouts } from '../../../../lib/agent/rollout.js';
import { OraclePolicy } from '../../../../lib/agent/scripted-policy.js';
import type { Trajectory } from '../../../../lib/agent/trajectory.js';
import { SweEnv } from '../../../../lib/env/swe-env.js';
import { loadSwerlTaskFolder } from '../../../../lib/env/tasks/swerl-folder.js';
import type { Task } from '../../../../lib/env/task.js';
import { ByteTokenizer } from '../../../../lib/model/byte-tokenizer.js';
import { sampleUntilResolved, type Draw } from '../../../../lib/train/rft/sample.js';
import type { AgentPolicy, EpisodeContext, Generation, SamplingRequest } from '../../../../lib/types/policy.js';
import { sandboxFolder } from '../../../support/sandbox-folder.js';

const TASKS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../tasks/swe-mini');
const { backend } = sandboxFolder(t, 'swerl-rft-sample-');
const tokenizer = new ByteTokenizer();
const agent = parseAgentLoopOptions({ maxTurns: 4, promptBudget: 1 << 16, responseBudget: 1 << 20, maxTokensPerTurn: 1 << 18, temperature: 0 }, 'agent');

const FINISH = '<function=finish>\n<parameter=command>submit</parameter>\n</function>';

/** Applies the task's gold patch, then finishes, on the samples `fixes` names for its task; finishes with no change on the others. */
class FixOnSamples implements AgentPolicy {
  readonly tokenizer = tokenizer;
  readonly #oracle = new OraclePolicy({ tokenizer });
  constructor(private readonly fixes: Record<string, number[]>) {}
  async generate(_request: SamplingRequest, context?: EpisodeContext): Promise<Generation> {
    const fix = this.fixes[context!.taskId]!.includes(context!.sample);
    const text = fix && context!.turn === 0 ? `<function=execute_bash>\n<parameter=cmd>${this.#oracle.commands(context!.task as Task)[0]}</parameter>\n</function>` : FINISH;
    const tokens = Int32Array.from([...tokenizer.encode(text), tokenizer.eosTokenIds[0]!]);
    return { tokens, logprobs: new Float32Array(tokens.length), finishReason: 'stop' };
  }
}

const tasks = await Promise.all(['py-lru-recency', 'js-color-hex', 'js-cron-next'].map((name) => loadSwerlTaskFolder(path.join(TASKS_DIR, name))));
const [a, b, c] = tasks.map((task) => task.id) as [string, string, string];

/** Plays the draws as the demo does: one rollout item a draw, its seed from (group, sample); records every draw. */
function player(policy: AgentPolicy, log: Draw<Task>[][]) {
  return async (draws: Draw<Task>[]): Promise<Trajectory[]> => {
    log.push(draws);
    const items = draws.map(({ task, group, sample }) => ({ taskId: task.id, task, group, sample, seed: group * 1024 + sample, makeEnv: () => new SweEnv(task, backend) }));
    return runRollouts(items, policy, { concurrency: 2, generationConcurrency: 0, retries: 0, agent });
  };
}
const drawn = (round: Draw<Task>[]) => round.map((d) => `${d.task.id}:${d.group}:${d.sample}`);

t.test('each extra round plays again only the tasks none of whose episodes resolved, its samples numbered on', async (t) => {
  const log: Draw<Task>[][] = [];
  // a resolves on sample 0 (round 0), b on sample 3 (round 1), c never.
  const policy = new FixOnSamples({ [a]: [0], [b]: [3], [c]: [] });
  const { trajectories, rounds } = await sampleUntilResolved(tasks, { samples: 2, extraRounds: 2 }, player(policy, log));
  t.same(log.map(drawn), [
    [`${a}:0:0`, `${a}:0:1`, `${b}:1:0`, `${b}:1:1`, `${c}:2:0`, `${c}:2:1`],
    [`${b}:1:2`, `${b}:1:3`, `${c}:2:2`, `${c}:2:3`],
    [`${c}:2:4`, `${c}:2:5`],
  ]);
  t.same(rounds, [
    { tasks: 3, sampled: 6, resolved: 1, newlySolved: 1 },
    { tasks: 2, sampled: 4, resolved: 1, newlySolved: 1 },
    { tasks: 1, sampled: 2, resolved: 0, newlySolved: 0 },
  ]);
  t.equal(trajectories.length, 12);
  const resolved = trajectories.filter((tr) => tr.reward === 1).map((tr) => `${tr.taskId}:${tr.sample}`);
  t.same(resolved.sort(), [`${a}:0`, `${b}:3`].sort(), 'the hidden tests resolved exactly the fixed samples');
});

t.test('no extra round is one round; rounds stop once every task has resolved', async (t) => {
  const everyTask = new FixOnSamples({ [a]: [1], [b]: [0], [c]: [0, 1] });
  const oneRound: Draw<Task>[][] = [];
  const single = await sampleUntilResolved(tasks, { samples: 2, extraRounds: 0 }, player(new FixOnSamples({ [a]: [], [b]: [], [c]: [] }), oneRound));
  t.equal(oneRound.length, 1);
  t.same(single.rounds, [{ tasks: 3, sampled: 6, resolved: 0, newlySolved: 0 }]);
  const allSolved: Draw<Task>[][] = [];
  const early = await sampleUntilResolved(tasks, { samples: 2, extraRounds: 3 }, player(everyTask, allSolved));
  t.equal(allSolved.length, 1, 'nothing left to play after round 0');
  t.same(early.rounds, [{ tasks: 3, sampled: 6, resolved: 4, newlySolved: 3 }]);
});

t.test('bad options and a play function that breaks its contract are refused, naming the field', async (t) => {
  const never = async (): Promise<Trajectory[]> => t.fail('nothing may be played') as never;
  await t.rejects(sampleUntilResolved(tasks, { samples: 0, extraRounds: 1 }, never), { code: 'ERR_SWERL_INVALID_ARG', message: /^samples is 0; it must be an integer >= 1/ });
  await t.rejects(sampleUntilResolved(tasks, { samples: 2, extraRounds: 1.5 }, never), { message: /^extraRounds is 1.5; it must be an integer >= 0/ });
  await t.rejects(sampleUntilResolved(tasks, { samples: 2, extraRounds: -1 }, never), { message: /^extraRounds is -1/ });
  await t.rejects(sampleUntilResolved([tasks[0]!, tasks[0]!], { samples: 1, extraRounds: 0 }, never), { message: /^tasks\[1\]\.id is .*as an earlier task's; give each task once/ });
  const real = player(new FixOnSamples({ [a]: [0], [b]: [], [c]: [] }), []);
  await t.rejects(sampleUntilResolved(tasks, { samples: 1, extraRounds: 0 }, async (draws) => (await real(draws)).slice(1)), { message: /^play returned 2 trajectories for 3 draws/ });
  // Two draws (tasks b and c) answered with the trajectories of tasks a and b.
  await t.rejects(
    sampleUntilResolved(tasks.slice(1), { samples: 1, extraRounds: 0 }, async () => (await real(tasks.map((task, group) => ({ task, group, sample: 0 })))).slice(0, 2)),
    { message: new RegExp(`^play returned a trajectory of task "${a}", which is not one of the tasks`) },
  );
});
