/**
 * The verifier's training and held-out sets: held out by task, so that no task's candidates
 * straddle the split (a judge must not be graded on a task whose other candidates it was
 * trained on), then each side balanced by downsampling its larger class, so the judge learns
 * no prior for the majority answer and accuracy at 0.5 has chance level 0.5. Both draws are
 * pure functions of the seed.
 */
import { invalidArg } from '../../errors.js';
import { mixSeed, permutation } from '../../util/random.js';

interface Labeled {
  taskId: string;
  resolved: boolean;
}

export interface ClassCounts {
  yes: number;
  no: number;
}

export const classCounts = (items: readonly Labeled[]): ClassCounts => ({ yes: items.filter((r) => r.resolved).length, no: items.filter((r) => !r.resolved).length });

/**
 * Whole tasks held out, drawn in a seeded order until they hold `fraction` of the items; then,
 * should the held-out side lack a class, further tasks that have it, while the training side
 * keeps both.
 */
export function splitByTask<T extends Labeled>(items: readonly T[], fraction: number, seed: number): { train: T[]; heldOut: T[] } {
  if (!(fraction >= 0 && fraction < 1)) throw invalidArg('heldOutFraction', `is ${fraction}`, 'give a number in [0, 1)');
  if (fraction === 0) return { train: [...items], heldOut: [] };
  const tasks = [...new Set(items.map((r) => r.taskId))];
  if (tasks.length < 2) throw invalidArg('data', `has ${tasks.length} task(s)`, 'holding out by task needs at least 2 tasks: add data, or set the held-out fraction to 0');
  const order = permutation(tasks.length, mixSeed(seed, 0x7e1d)).map((i) => tasks[i]!);
  const byTask = new Map(tasks.map((id) => [id, items.filter((r) => r.taskId === id)]));
  const held = new Set<string>();
  const target = Math.max(1, Math.round(fraction * items.length));
  let count = 0;
  for (const id of order) {
    if (count >= target || held.size === tasks.length - 1) break;
    held.add(id);
    count += byTask.get(id)!.length;
  }
  const side = (inHeld: boolean) => items.filter((r) => held.has(r.taskId) === inHeld);
  for (const label of [true, false]) {
    if (side(true).some((r) => r.resolved === label)) continue;
    // A task with the missing class whose leaving still leaves it on the training side.
    const donor = order.find((id) => !held.has(id) && byTask.get(id)!.some((r) => r.resolved === label) && side(false).filter((r) => r.taskId !== id).some((r) => r.resolved === label));
    if (donor !== undefined) held.add(donor);
  }
  return { train: side(false), heldOut: side(true) };
}

/** The larger class downsampled (seeded) to the smaller one's size; the order of the kept items as given. */
export function balanceClasses<T extends Labeled>(items: readonly T[], seed: number): T[] {
  const { yes, no } = classCounts(items);
  const larger = yes > no;
  const excess = Math.abs(yes - no);
  if (excess === 0) return [...items];
  const largerIndexes = items.flatMap((r, i) => (r.resolved === larger ? [i] : []));
  const dropped = new Set(permutation(largerIndexes.length, mixSeed(seed, 0xba1)).slice(0, excess).map((k) => largerIndexes[k]!));
  return items.filter((_, i) => !dropped.has(i));
}
