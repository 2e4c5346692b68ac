/**
 * The gold patch: what `git diff` prints for one changed file (a/ and b/ prefixes, blob ids,
 * three lines of context, hunks closer than six lines merged, git's default hunk-header
 * function line). The files are a few dozen lines, so a plain LCS table finds the changes.
 */
import { createHash } from 'node:crypto';

const CONTEXT = 3;

/** git's abbreviated blob id of a file's text. */
export function blobId(text: string): string {
  const data = Buffer.from(text, 'utf8');
  return createHash('sha1').update(`blob ${data.length}\0`).update(data).digest('hex').slice(0, 7);
}

type Op = { kind: ' ' | '-' | '+'; line: string; old: number; new: number };

/** The edit script from `a` to `b` (lines), deletions before insertions in a changed run. */
function editScript(a: readonly string[], b: readonly string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) ops.push({ kind: ' ', line: a[i]!, old: i++, new: j++ });
    else if (j >= m || (i < n && lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) ops.push({ kind: '-', line: a[i]!, old: i++, new: j });
    else ops.push({ kind: '+', line: b[j]!, old: i, new: j++ });
  }
  return ops;
}

/** git's default function line: the nearest line above that starts with a letter, `_` or `$`. */
function functionLine(lines: readonly string[], before: number): string {
  for (let i = before - 1; i >= 0; i--) {
    if (/^[A-Za-z_$]/.test(lines[i]!)) return ` ${lines[i]!.slice(0, 80).trimEnd()}`;
  }
  return '';
}

function range(start: number, count: number): string {
  // 1-based; an empty range names the line before it
  const first = count === 0 ? start : start + 1;
  return count === 1 ? `${first}` : `${first},${count}`;
}

/** The `git diff` of one file from `before` to `after` (both whole texts ending in a newline). */
export function unifiedDiff(file: string, before: string, after: string): string {
  const a = before.split('\n').slice(0, -1);
  const b = after.split('\n').slice(0, -1);
  const ops = editScript(a, b);
  const changed = ops.map((op, k) => (op.kind === ' ' ? -1 : k)).filter((k) => k >= 0);
  if (changed.length === 0) return '';
  // group changes whose gap of unchanged lines fits in the context of both
  const groups: [number, number][] = [];
  for (const k of changed) {
    const last = groups[groups.length - 1];
    if (last && k - last[1] - 1 <= 2 * CONTEXT) last[1] = k;
    else groups.push([k, k]);
  }
  const hunks = groups.map(([first, last]) => {
    const from = Math.max(0, first - CONTEXT);
    const to = Math.min(ops.length - 1, last + CONTEXT);
    const slice = ops.slice(from, to + 1);
    const oldCount = slice.filter((op) => op.kind !== '+').length;
    const newCount = slice.filter((op) => op.kind !== '-').length;
    const head = `@@ -${range(ops[from]!.old, oldCount)} +${range(ops[from]!.new, newCount)} @@${functionLine(a, ops[from]!.old)}`;
    return [head, ...slice.map((op) => op.kind + op.line)].join('\n');
  });
  return [`diff --git a/${file} b/${file}`, `index ${blobId(before)}..${blobId(after)} 100644`, `--- a/${file}`, `+++ b/${file}`, ...hunks].join('\n') + '\n';
}
