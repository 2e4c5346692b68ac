/**
 * How close a candidate patch comes to the task's gold patch: SWE-RL's reward signal (Wei et
 * al., 2025), here a graded credit for episodes the tests did not resolve (algorithm
 * .partialCredit). Only what the patches change is compared, file by file: each patch becomes
 * its files' paths and their added and removed lines, in order, so hunk offsets and context
 * lines (which the candidate's editor chooses) do not count, and an edit of the right line that
 * gets the replacement wrong still scores above an edit elsewhere.
 *
 * The score is 2·LCS / (|a| + |b|) over those texts' characters, in [0, 1]: 1 for the same
 * change, 0 when nothing is shared (or the candidate changed nothing). Where the two texts are
 * too long for a character table (MAX_CELLS), their lines are the units, each counting its
 * length, so a long patch costs lines², not characters².
 */

/** The change a patch makes: per file, its path and its added and removed lines, in order. */
export function changedText(patch: string): string {
  const out: string[] = [];
  for (const line of patch.split('\n')) {
    if (line.startsWith('diff --git ')) out.push(line.slice('diff --git '.length));
    else if ((line.startsWith('+') && !line.startsWith('+++')) || (line.startsWith('-') && !line.startsWith('---'))) out.push(line);
  }
  return out.join('\n');
}

/** Character tables past this many cells compare lines instead (~16 M: tens of ms). */
const MAX_CELLS = 16_000_000;

/** Length of the longest common subsequence of two sequences, units weighted by `weight`. */
function lcsWeight<T>(a: readonly T[], b: readonly T[], same: (x: T, y: T) => boolean, weight: (x: T) => number): number {
  let previous = new Float64Array(b.length + 1);
  let current = new Float64Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    const x = a[i - 1]!;
    for (let j = 1; j <= b.length; j++) {
      const y = b[j - 1]!;
      current[j] = same(x, y) ? previous[j - 1]! + weight(x) : Math.max(previous[j]!, current[j - 1]!);
    }
    [previous, current] = [current, previous];
  }
  return previous[b.length]!;
}

/** 2·LCS / (|a| + |b|) of two texts: characters, or lines weighted by length when long. */
export function textSimilarity(a: string, b: string): number {
  if (a.length + b.length === 0) return 1;
  if (a.length === 0 || b.length === 0) return 0;
  let common: number;
  let total: number;
  if (a.length * b.length <= MAX_CELLS) {
    const ca = [...a];
    const cb = [...b];
    common = lcsWeight(ca, cb, (x, y) => x === y, () => 1);
    total = ca.length + cb.length;
  } else {
    // Each line counts its characters and the newline after it.
    const lines = (text: string) => text.split('\n');
    const size = (line: string) => [...line].length + 1;
    const la = lines(a);
    const lb = lines(b);
    common = lcsWeight(la, lb, (x, y) => x === y, size);
    total = la.reduce((s, l) => s + size(l), 0) + lb.reduce((s, l) => s + size(l), 0);
  }
  return (2 * common) / total;
}

/** How close `candidate` comes to `gold`, in [0, 1] (the module's comment); 0 for an empty candidate. */
export function patchSimilarity(candidate: string, gold: string): number {
  const a = changedText(candidate);
  if (a === '') return 0;
  return textSimilarity(a, changedText(gold));
}
