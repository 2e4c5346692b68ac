/**
 * The files a `git diff` touches, read from its headers as git writes them: `diff --git a/X b/Y`,
 * then `---`/`+++` (with git's "C-quoting" for names with special characters, and a trailing tab
 * after names with spaces), `rename from`/`rename to`, `new file`/`deleted file`.
 */
import { invalidArg } from '../errors.js';

export interface PatchFile {
  /** The path before (null for an added file). */
  oldPath: string | null;
  /** The path after (null for a deleted file). */
  newPath: string | null;
}

/** Undoes git's quoting of a path ("a/t\303\251st.py"), giving the UTF-8 text. */
function unquote(name: string): string {
  if (!name.startsWith('"')) return name;
  const bytes: number[] = [];
  const escapes: Record<string, number> = { n: 10, t: 9, '"': 34, '\\': 92, a: 7, b: 8, f: 12, r: 13, v: 11 };
  for (let i = 1; i < name.length - 1; i++) {
    const c = name[i]!;
    if (c !== '\\') {
      bytes.push(...Buffer.from(c, 'utf8'));
      continue;
    }
    const next = name[++i]!;
    if (/[0-7]/.test(next)) {
      bytes.push(parseInt(name.slice(i, i + 3), 8));
      i += 2;
    } else bytes.push(escapes[next] ?? next.charCodeAt(0));
  }
  return Buffer.from(bytes).toString('utf8');
}

/** A `---`/`+++` name: /dev/null, or the path without its a/ or b/ prefix. */
function sideName(raw: string, prefix: 'a/' | 'b/'): string | null {
  const name = unquote(raw.replace(/\t$/, ''));
  if (name === '/dev/null') return null;
  return name.startsWith(prefix) ? name.slice(2) : name;
}

/** The `diff --git` header's paths when it has no ---/+++ lines (binary, mode-only, empty files). */
function headerNames(header: string): [string, string] | null {
  const rest = header.slice('diff --git '.length);
  const quoted = /^("(?:[^"\\]|\\.)*"|\S+) ("(?:[^"\\]|\\.)*"|\S+)$/.exec(rest);
  if (quoted) return [unquote(quoted[1]!).slice(2), unquote(quoted[2]!).slice(2)];
  // Unquoted names with spaces: "a/X b/X" with the same X on both sides.
  const half = (rest.length - 1) / 2;
  if (Number.isInteger(half) && rest.startsWith('a/') && rest.slice(half + 1).startsWith('b/') && rest.slice(2, half) === rest.slice(half + 3)) {
    return [rest.slice(2, half), rest.slice(half + 3)];
  }
  return null;
}

/** A diff's per-file blocks (each from its `diff --git` line), text as it stands. */
export function patchBlocks(patch: string): string[] {
  return patch.split(/^(?=diff --git )/m).filter((block) => block.startsWith('diff --git '));
}

export function patchFiles(patch: string, field = 'patch'): PatchFile[] {
  const files: PatchFile[] = [];
  for (const block of patchBlocks(patch)) {
    const lines = block.split('\n');
    const header = lines[0]!;
    let oldPath: string | null | undefined;
    let newPath: string | null | undefined;
    let added = false;
    let deleted = false;
    for (const line of lines.slice(1)) {
      if (line.startsWith('@@') || line.startsWith('GIT binary patch')) break;
      if (line.startsWith('--- ')) oldPath = sideName(line.slice(4), 'a/');
      else if (line.startsWith('+++ ')) newPath = sideName(line.slice(4), 'b/');
      else if (line.startsWith('rename from ')) oldPath = unquote(line.slice(12));
      else if (line.startsWith('rename to ')) newPath = unquote(line.slice(10));
      else if (line.startsWith('new file mode')) added = true;
      else if (line.startsWith('deleted file mode')) deleted = true;
    }
    if (oldPath === undefined || newPath === undefined) {
      const names = headerNames(header);
      if (!names) throw invalidArg(field, `has a file header swerl cannot read: ${JSON.stringify(header.slice(0, 200))}`, 'give the diff as git writes it');
      oldPath ??= names[0];
      newPath ??= names[1];
    }
    files.push({ oldPath: added ? null : oldPath, newPath: deleted ? null : newPath });
  }
  return files;
}

/** The paths a diff touches (after the change; with `old`, before it too: renames, deletions). */
export function patchedPaths(patch: string, options: { old?: boolean; field?: string } = {}): string[] {
  const paths = new Set<string>();
  for (const file of patchFiles(patch, options.field)) {
    if (options.old && file.oldPath !== null) paths.add(file.oldPath);
    if (file.newPath !== null) paths.add(file.newPath);
  }
  return [...paths];
}
