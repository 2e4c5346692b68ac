/**
 * The `search` tool (docs/swe-env.md, "The four tools"), with R2E-Gym's observation shapes:
 *
 * - a folder: a plain substring search over its non-hidden files (hidden folders are not
 *   entered), counting matching lines per file:
 *     Found 3 matches for "term" in /testbed:
 *     ./src/a.py (2 matches)
 *     ./b.py (1 matches)
 *     End of matches for "term" in /testbed
 *   over 100 matching files: `More than N files matched for "term" in DIR. Please narrow your
 *   search.`; none: `No matches found for "term" in DIR`. Paths are relative to the work tree,
 *   always with a leading `./`.
 * - a file: its matching lines as `grep -n` prints them, under `Matches for "term" in FILE:`.
 *
 * The default profile searches every text file (binary files are skipped); the r2egym profile
 * only `.py` files in folder searches, as R2E-Gym's search did by default.
 *
 * The term reaches grep as one quoted argument after `-e`, with -F: quotes, `$`, backslashes,
 * a leading `-` and regex characters are all matched literally, and nothing is run by a shell.
 *
 * Differences from R2E-Gym's search.py:
 * - File searches match the term literally too (R2E-Gym ran `grep -n TERM FILE`, a basic
 *   regex, which also took a leading `-` for an option).
 * - Files are listed in a fixed order (each folder's files by name, then its subfolders by
 *   name), where R2E-Gym printed os.walk's directory order.
 * - Paths are normalised lexically; R2E-Gym resolved symlinks (os.path.realpath).
 * - Matches are counted per `\n`-separated line, as grep counts them (Python's text reads also
 *   split at a lone \r).
 * - A file search's output is clipped at 10,000 characters like the editor's views (R2E-Gym did
 *   not clip it); an empty term is an error, and a term spanning lines matches nothing.
 * - The text is what R2E-Gym printed, less the newline of its final print().
 */
import path from 'node:path';

import { shellQuote, type Sandbox } from '../sandbox/sandbox.js';
import { clip, pathKind, resolveInSandbox, type ToolProfile } from './common.js';

/** Folder searches matching more files than this ask the model to narrow the search. */
export const MAX_MATCHED_FILES = 100;

export interface SearchOptions {
  /** Limit for the sandbox command, in milliseconds; default: the sandbox's. */
  timeoutMs?: number;
}

export interface SearchResult {
  observation: string;
  /** The call itself failed (bad arguments, missing path, grep error, timeout). */
  error: boolean;
  /** The search ran past its time limit. */
  timedOut: boolean;
}

/** The search tool's observation for `args` (`search_term`, optional `path`, default "."), and whether the call failed. */
export async function runSearch(
  sandbox: Sandbox,
  args: Record<string, string>,
  profile: ToolProfile = 'default',
  options: SearchOptions = {},
): Promise<SearchResult> {
  const term = args.search_term;
  if (term === undefined || term === '') {
    return { observation: "ERROR: Missing required parameter 'search_term' for 'search'.", error: true, timedOut: false };
  }
  const target = resolveInSandbox(sandbox, args.path === undefined || args.path.trim() === '' ? '.' : args.path);
  const kind = await pathKind(sandbox, target, options.timeoutMs);
  if (kind === 'file') return searchFile(sandbox, term, target, options);
  if (kind !== 'dir') return { observation: `Directory '${target}' not found or not a directory.`, error: true, timedOut: false };
  return searchDirectory(sandbox, term, target, profile, options);
}

async function searchDirectory(
  sandbox: Sandbox,
  term: string,
  dir: string,
  profile: ToolProfile,
  options: SearchOptions,
): Promise<SearchResult> {
  const noMatches: SearchResult = { observation: `No matches found for "${term}" in ${dir}`, error: false, timedOut: false };
  // grep takes a multi-line pattern for several patterns; a line never contains a newline.
  if (term.includes('\n')) return noMatches;
  const names = profile === 'r2egym' ? `-name '*.py' ` : '';
  const binary = profile === 'r2egym' ? '' : '-I ';
  // /dev/null makes grep print FILE:COUNT even when find hands it a single file. Symlinks are
  // searched like files (R2E-Gym opened them); folders behind symlinks are not entered.
  const command =
    `find -H ${shellQuote(dir)} -mindepth 1 -name '.*' -prune -o \\( -type f -o -type l \\) ${names}` +
    `-exec grep -c ${binary}-F -e ${shellQuote(term)} -- /dev/null {} + 2>/dev/null | grep -v -e ':0$'`;
  const result = await sandbox.exec(command, { env: { LC_ALL: 'C' }, ...timeout(options) });
  if (result.timedOut) return { observation: `ERROR: The search in ${dir} took too long; search a smaller folder or a single file.`, error: true, timedOut: true };

  const matches: Array<{ file: string; parts: string[]; count: number }> = [];
  for (const line of result.stdout.toString().split('\n')) {
    const colon = line.lastIndexOf(':');
    if (colon <= 0) continue;
    const file = line.slice(0, colon);
    const count = Number(line.slice(colon + 1));
    if (file === '/dev/null' || !Number.isInteger(count) || count <= 0) continue;
    matches.push({ file, parts: path.posix.relative(dir, file).split('/'), count });
  }
  if (matches.length === 0) return noMatches;
  if (matches.length > MAX_MATCHED_FILES) {
    return { observation: `More than ${matches.length} files matched for "${term}" in ${dir}. Please narrow your search.`, error: false, timedOut: false };
  }
  matches.sort((a, b) => walkOrder(a.parts, b.parts));
  const total = matches.reduce((sum, m) => sum + m.count, 0);
  const lines = matches.map((m) => `./${path.posix.relative(sandbox.workdir, m.file)} (${m.count} matches)`);
  return {
    observation: [`Found ${total} matches for "${term}" in ${dir}:`, ...lines, `End of matches for "${term}" in ${dir}`].join('\n'),
    error: false,
    timedOut: false,
  };
}

async function searchFile(sandbox: Sandbox, term: string, file: string, options: SearchOptions): Promise<SearchResult> {
  const noMatches: SearchResult = { observation: `No matches found for "${term}" in ${file}`, error: false, timedOut: false };
  if (term.includes('\n')) return noMatches;
  const result = await sandbox.exec(`grep -n -F -e ${shellQuote(term)} -- ${shellQuote(file)}`, timeout(options));
  if (result.timedOut) return { observation: `ERROR: The search in ${file} took too long.`, error: true, timedOut: true };
  if (result.exitCode === 1) return noMatches;
  if (result.exitCode !== 0) return { observation: `Error executing grep:\n${result.stderr.toString()}`, error: true, timedOut: false };
  return { observation: clip(`Matches for "${term}" in ${file}:\n${result.stdout.toString().trim()}`), error: false, timedOut: false };
}

function timeout(options: SearchOptions): { timeoutMs?: number } {
  return options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs };
}

/** A top-down walk's order: a folder's own files (by name) before its subfolders (by name). */
function walkOrder(a: readonly string[], b: readonly string[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a[i] === b[i]) continue;
    const aIsFile = i === a.length - 1;
    const bIsFile = i === b.length - 1;
    if (aIsFile !== bIsFile) return aIsFile ? -1 : 1;
    return a[i]! < b[i]! ? -1 : 1;
  }
  return a.length - b.length;
}
