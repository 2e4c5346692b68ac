/**
 * What a patch changes, as one string two patches share exactly when they make the same edits:
 * the majority-vote selector counts candidates by it. Everything a diff carries that is not the
 * edit goes (index lines, hunk positions, context lines, the order of files), and so does
 * layout (each changed line's whitespace folded to single spaces, blank lines dropped; a file
 * whose changes are whitespace only is unchanged). Language-agnostic: no parsing of the code.
 */
import { patchBlocks, patchFiles } from '../env/patch-files.js';

interface FileEdit {
  path: string;
  removed: string[];
  added: string[];
}

const fold = (line: string) => line.trim().replace(/\s+/g, ' ');

/** Each file's changed lines, its path read by patchFiles (quoting, renames, deletions). */
function fileEdits(patch: string): FileEdit[] {
  return patchBlocks(patch).map((block) => {
    const file = patchFiles(block)[0]!;
    const edit: FileEdit = { path: (file.newPath ?? file.oldPath)!, removed: [], added: [] };
    const lines = block.split('\n');
    const firstHunk = lines.findIndex((l) => l.startsWith('@@'));
    // Before the first hunk are the headers (---/+++): no edit there; a block without hunks has none.
    for (const line of firstHunk < 0 ? [] : lines.slice(firstHunk)) {
      if (!line.startsWith('+') && !line.startsWith('-')) continue;
      const text = fold(line.slice(1));
      if (text !== '') (line[0] === '+' ? edit.added : edit.removed).push(text);
    }
    return edit;
  });
}

/** The patch's edits as a canonical string; '' for a patch that changes nothing that counts. */
export function patchKey(patch: string): string {
  const edits = fileEdits(patch)
    .filter((f) => f.removed.join('\n') !== f.added.join('\n'))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return edits.map((f) => [`file ${f.path}`, ...f.removed.map((l) => `- ${l}`), ...f.added.map((l) => `+ ${l}`)].join('\n')).join('\n');
}
