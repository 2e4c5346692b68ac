/** Synthetic labeled candidates for the verifier's tests: a resolved patch and an unresolved one per task, told apart by what they add. */
import { mulberry32 } from '../../../../lib/util/random.js';

const WORDS = ['parse', 'index', 'cache', 'format', 'render', 'config', 'token', 'stream'];

/**
 * swerl eval's candidates.jsonl records: two per task, run 0 resolved (its patch's added lines
 * return values), run 1 not (they raise), `lines` added lines each.
 */
export function separableCandidates(tasks: number, seed: number, lines = 1): object[] {
  const rng = mulberry32(seed);
  const words = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(rng() * WORDS.length)]).join(' ');
  return Array.from({ length: tasks }, (_, t) =>
    [0, 1].map((run) => ({
      taskId: `task-${t}`,
      run,
      problemStatement: `The ${words(4)} breaks.`,
      patch: `diff --git a/m${t}.py b/m${t}.py\n--- a/m${t}.py\n+++ b/m${t}.py\n@@ -1 +1,${lines} @@\n-    ${words(3)}\n${Array.from({ length: lines }, (_, k) => `+    ${run === 0 ? `return value_${k}` : `raise Todo${k}()`}\n`).join('')}`,
      reward: run === 0 ? 1 : 0,
      messages: [],
    })),
  ).flat();
}

/** A training run's saved trajectory (the fields the verifier reads, and the tokens that make it one). */
export function savedTrajectory(taskId: string, reward: number, extra: object = {}): object {
  return {
    taskId,
    group: 0,
    sample: 0,
    tokens: [1, 2, 3],
    mask: [0, 1, 1],
    logprobs: [0, -1, -1],
    messages: [
      { role: 'system', content: 'You are a software engineer.' },
      { role: 'user', content: `The repository is at /repo.\n\n<issue>\nIssue of ${taskId}.\n</issue>\n\nFix it.` },
    ],
    turns: [{ response: 'Look.\n<function=execute_bash>\n<parameter=command>ls</parameter>\n</function>', observation: 'a.py' }],
    termination: 'finished',
    reward,
    patch: `diff --git a/a.py b/a.py\n+${reward > 0 ? 'good' : 'bad'}\n`,
    ...extra,
  };
}

export const jsonl = (records: readonly object[]) => records.map((r) => JSON.stringify(r)).join('\n') + '\n';
