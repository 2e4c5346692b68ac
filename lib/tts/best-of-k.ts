/**
 * Best@k beside Pass@k and Pass@1, as DeepSWE reports test-time scaling: per task, the reward
 * of the candidate a rule selected (Best@k), whether any of the k resolved (Pass@k: what a
 * perfect verifier would select) and the mean over the k (Pass@1); overall, their means over
 * tasks. Best@k <= Pass@k always: a selection is one of the candidates.
 */
import { invalidArg } from '../errors.js';
import { mean } from '../util/stats.js';
import { selectCandidate, type Candidate, type SelectOptions, type SelectionRule } from './select.js';

export interface TaskSelection {
  id: string;
  k: number;
  /** The candidate selected (its index among the task's runs). */
  selected: number;
  /** Best@k, Pass@k and Pass@1 of this task (a candidate with reward > 0 resolved it). */
  bestAtK: number;
  passAtK: number;
  passAt1: number;
}

export interface BestOfKReport {
  rule: SelectionRule;
  tasks: number;
  k: number;
  bestAtK: number;
  passAtK: number;
  passAt1: number;
  perTask: TaskSelection[];
}

const resolved = (c: Candidate) => (c.reward > 0 ? 1 : 0);

/** Selects per task and sums up; `seedOf` gives the random rule each task's own draw. */
export function bestOfK(
  tasks: readonly { id: string; candidates: readonly Candidate[] }[],
  rule: SelectionRule,
  options: SelectOptions & { seedOf?: (taskIndex: number) => number } = {},
): BestOfKReport {
  if (tasks.length === 0) throw invalidArg('tasks', 'is empty', 'select over at least one task');
  const k = tasks[0]!.candidates.length;
  const { seedOf, ...selectOptions } = options;
  const perTask = tasks.map((task, i): TaskSelection => {
    if (task.candidates.length !== k) throw invalidArg(`tasks[${i}] (${task.id})`, `has ${task.candidates.length} candidates and the first task ${k}`, 'give every task the same k');
    const selected = selectCandidate(task.candidates, rule, { ...selectOptions, ...(seedOf ? { seed: seedOf(i) } : {}) });
    const chosen = task.candidates.find((c) => c.index === selected)!;
    return {
      id: task.id,
      k,
      selected,
      bestAtK: resolved(chosen),
      passAtK: Math.max(...task.candidates.map(resolved)),
      passAt1: mean(task.candidates.map(resolved)),
    };
  });
  return {
    rule,
    tasks: tasks.length,
    k,
    bestAtK: mean(perTask.map((t) => t.bestAtK)),
    passAtK: mean(perTask.map((t) => t.passAtK)),
    passAt1: mean(perTask.map((t) => t.passAt1)),
    perTask,
  };
}
