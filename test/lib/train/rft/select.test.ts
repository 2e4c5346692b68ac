/**
 * Rejection sampling's filter on real episodes: a scripted policy that makes known format
 * errors plays a bundled task in the local (bwrap) sandbox, graded by its hidden tests. Only
 * resolved trajectories are kept, and exactly the turns that broke the format are masked.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import t from 'tap';

import { parseAgentLoopOptions, runEpisode } from '../../../../lib/agent/agent-loop.js';
import { OraclePolicy } from '../../../../lib/agent/scripted-policy.js';
import { maskFailedTurns, type Trajectory } from '../../../../lib/agent/trajectory.js';
import { SweEnv } from '../../../../lib/env/swe-env.js';
import { loadSwerlTaskFolder } from '../../../../lib/env/tasks/swerl-folder.js';
import type { Task } from '../../../../lib/env/task.js';
import { ByteTokenizer } from '../../../../lib/model/byte-tokenizer.js';
import { selectResolved } from '../../../../lib/train/rft/select.js';
import type { AgentPolicy, EpisodeContext, Generation, SamplingRequest } from '../../../../lib/types/policy.js';
import { sandboxFolder } from '../../../support/sandbox-folder.js';

const TASK_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../tasks/swe-mini/py-lru-recency');
const { backend } = sandboxFolder(t, 'swerl-rft-select-');
const tokenizer = new ByteTokenizer();
const agent = parseAgentLoopOptions({ maxTurns: 8, promptBudget: 1 << 16, responseBudget: 1 << 20, maxTokensPerTurn: 1 << 18, temperature: 0 }, 'agent');

const bash = (cmd: string) => `<function=execute_bash>\n<parameter=cmd>${cmd}</parameter>\n</function>`;
const FINISH = '<function=finish>\n<parameter=command>submit</parameter>\n</function>';
// Well formed, and refused by its tool: the path does not exist.
const VIEW_NOWHERE = '<function=file_editor>\n<parameter=command>view</parameter>\n<parameter=path>/nowhere/cache.py</parameter>\n</function>';

/** Answers a fixed script, turn by turn; `apply` stands for the task's gold patch applied. */
class Script implements AgentPolicy {
  readonly tokenizer = tokenizer;
  readonly #oracle = new OraclePolicy({ tokenizer });
  constructor(private readonly turns: (string | ((apply: string) => string))[]) {}
  async generate(_request: SamplingRequest, context?: EpisodeContext): Promise<Generation> {
    const apply = bash(this.#oracle.commands(context!.task as Task)[0]!);
    const turn = this.turns[context!.turn]!;
    const text = typeof turn === 'string' ? turn : turn(apply);
    const tokens = Int32Array.from([...tokenizer.encode(text), tokenizer.eosTokenIds[0]!]);
    return { tokens, logprobs: new Float32Array(tokens.length), finishReason: 'stop' };
  }
}

const SCRIPTS = {
  // Turn 0: prose, no call; turn 1: two calls; turn 2: a call its tool refuses; then the fix and finish.
  errorsThenFix: [`I will look at the cache first.`, `${bash('true')}\n${bash('ls')}`, VIEW_NOWHERE, (apply: string) => apply, FINISH],
  clean: [(apply: string) => apply, FINISH],
  noop: [FINISH],
  // Resolved, but every turn broke the format: nothing is left to learn.
  allBroken: [(apply: string) => `${apply}\n${bash('ls')}`, `${FINISH}\n${bash('ls')}`],
};

t.test('only resolved trajectories are kept, with exactly their failed turns masked', async (t) => {
  const task = await loadSwerlTaskFolder(TASK_DIR);
  const play = (name: keyof typeof SCRIPTS, sample: number): Promise<Trajectory> =>
    runEpisode({ env: new SweEnv(task, backend, { maxSteps: 8 }), policy: new Script(SCRIPTS[name]), context: { taskId: task.id, task, sample }, group: 0 }, agent);
  const [errors, clean, noop, broken] = await Promise.all([play('errorsThenFix', 0), play('clean', 1), play('noop', 2), play('allBroken', 3)]);
  t.same([errors, clean, noop, broken].map((x) => x.reward), [1, 1, 0, 1], 'rewards from the hidden tests');
  t.same(errors.turns.map((x) => x.formatError), ['no tool call', '2 tool calls in one turn (only the first ran)', undefined, undefined, undefined]);
  t.same(errors.turns.map((x) => x.toolError !== undefined), [false, false, true, false, false], 'the refused call is a tool error, not a format error');
  t.match(errors.turns[2]!.toolError, /nowhere/, 'the tool error is the observation\'s first line');

  const round = selectResolved([errors, clean, noop, broken]);
  t.match(round, { sampled: 4, resolved: 3, maskedTurns: 5, emptyAfterMasking: 1, tasksSolved: 1 });
  t.same(round.examples.map((e) => e.id), [`${task.id}#0`, `${task.id}#1`], 'the unresolved and the all-broken trajectories are dropped');

  const kept = round.examples[0]!;
  t.equal(kept.tokens, errors.tokens, 'the conversation is kept whole: the broken turns stay in the context');
  const learned = (mask: Uint8Array, turn: { contextTokens: number; responseTokens: number }) =>
    mask.subarray(turn.contextTokens, turn.contextTokens + turn.responseTokens);
  errors.turns.forEach((turn, i) => {
    const span = learned(kept.mask, turn);
    if (i < 3) t.ok(span.every((m) => m === 0), `turn ${i} (${turn.formatError ?? turn.toolError}) is masked out`);
    else t.ok(span.length > 0 && span.every((m) => m === 1), `turn ${i} is learned whole`);
  });
  const outsideTurns = kept.mask.reduce((n, m) => n + m, 0) - errors.turns.slice(3).reduce((n, x) => n + x.responseTokens, 0);
  t.equal(outsideTurns, 0, 'nothing outside the well-formed turns is learned');
  t.same(Array.from(round.examples[1]!.mask), Array.from(clean.mask), 'a clean trajectory keeps its mask as sampled');
  t.same(Array.from(maskFailedTurns(clean).mask), Array.from(clean.mask));
});
