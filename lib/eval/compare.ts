/**
 * Comparing agents the way a paper would: a resolve rate with its Wilson 95% interval, and two
 * agents paired on the same tasks with McNemar's exact test (over several seeds, the pairs of
 * every seed pooled: each is one task solved or not by each agent).
 */
import { mcnemarExact, wilsonInterval } from './metrics.js';

/** Per task: solved (true) or not, by task id. */
export type Outcomes = ReadonlyMap<string, boolean>;

export interface RateSummary {
  resolved: number;
  tasks: number;
  rate: number;
  low: number;
  high: number;
}

export function rateOf(outcomes: Iterable<boolean>): RateSummary {
  let resolved = 0;
  let tasks = 0;
  for (const solved of outcomes) {
    tasks++;
    if (solved) resolved++;
  }
  if (tasks === 0) return { resolved: 0, tasks: 0, rate: NaN, low: NaN, high: NaN };
  const { low, high } = wilsonInterval(resolved, tasks);
  return { resolved, tasks, rate: resolved / tasks, low, high };
}

export interface PairedComparison {
  /** Pairs compared (tasks x seeds). */
  pairs: number;
  a: RateSummary;
  b: RateSummary;
  /** a minus b, in points of resolve rate. */
  difference: number;
  /** Tasks only a solved, only b solved. */
  onlyA: number;
  onlyB: number;
  /** McNemar's exact two-sided p-value. */
  p: number;
}

/**
 * a against b on the tasks both were run on, over runs (seeds) given as pairs of outcome maps:
 * `runs[i] = [a's outcomes, b's outcomes]` of seed i. A task missing from either side of a run
 * is an error: the comparison is paired or it is nothing.
 */
export function pairedComparison(runs: readonly (readonly [Outcomes, Outcomes])[]): PairedComparison {
  const aAll: boolean[] = [];
  const bAll: boolean[] = [];
  let onlyA = 0;
  let onlyB = 0;
  runs.forEach(([a, b], run) => {
    if (a.size !== b.size) throw new RangeError(`run ${run}: ${a.size} tasks against ${b.size}; a paired comparison needs the same tasks`);
    for (const [id, solvedA] of a) {
      const solvedB = b.get(id);
      if (solvedB === undefined) throw new RangeError(`run ${run}: task ${id} has no outcome for the second agent`);
      aAll.push(solvedA);
      bAll.push(solvedB);
      if (solvedA && !solvedB) onlyA++;
      if (solvedB && !solvedA) onlyB++;
    }
  });
  const a = rateOf(aAll);
  const b = rateOf(bAll);
  return { pairs: aAll.length, a, b, difference: 100 * (a.rate - b.rate), onlyA, onlyB, p: mcnemarExact(onlyA, onlyB) };
}

/** `31.7% [26.7, 37.1] (95/300)`. */
export function formatRate(r: RateSummary): string {
  return `${(100 * r.rate).toFixed(1)}% [${(100 * r.low).toFixed(1)}, ${(100 * r.high).toFixed(1)}] (${r.resolved}/${r.tasks})`;
}
