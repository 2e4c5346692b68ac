/**
 * The `file_editor` tool (docs/swe-env.md, "The four tools"): view, create, str_replace,
 * insert and undo_edit on files inside a sandbox, with R2E-Gym's observation shapes: the
 * `cat -n`-style header lines, numbers right-aligned in 6 columns followed by one space in views
 * and by a TAB in edit snippets, 4 lines of context around edits, and every long text clipped at
 * 10,000 characters with the `<response clipped>` marker.
 *
 * The text returned is what R2E-Gym's script printed, less the newline its final print() added;
 * the caller (SweTools) puts the `Execution output of [file_editor]:` line above it. Errors are
 * observations starting with `ERROR: `, never exceptions, except a failure of the sandbox
 * itself (destroyed, or a command could not be started): its SwerlError is thrown, since the
 * episode cannot go on.
 *
 * Deliberate differences from R2E-Gym's file_editor.py, in both profiles:
 * - `path` must be absolute (R2E-Gym resolved relative paths against the repo root); an unknown
 *   command is reported before the path is checked.
 * - Errors read `ERROR: message` on the first line. R2E-Gym printed an empty line first for some
 *   of them, and doubled the prefix (`ERROR: ERROR: Viewing non-Python files ...`) for one.
 * - Bytes are preserved: the file is decoded as UTF-8 (Latin-1 when it is not valid UTF-8) and
 *   written back in the same encoding; an all-CRLF file is edited as LF and written back as CRLF.
 *   R2E-Gym guessed the encoding with chardet and always wrote UTF-8 with LF newlines. Binary
 *   files (a NUL byte) are refused.
 * - `create` makes missing parent folders (R2E-Gym failed with a Python OSError).
 * - Directory listings are sorted (siblings by name, each folder before the next sibling);
 *   R2E-Gym printed `find`'s unsorted directory order. Hidden entries are excluded below the
 *   listed folder; R2E-Gym's filter on the whole path also emptied listings of hidden folders.
 * - Missing or malformed `insert_line` / `view_range` values get an `ERROR:` line (R2E-Gym
 *   printed argparse usage text or a Python traceback).
 * Differences in the default profile only:
 * - `insert_line` ranges over [0, N] with N the number of lines; R2E-Gym allowed N + 1 for a
 *   file ending in a newline (its line list kept an empty last element).
 * - `undo_edit` of a `create` removes the file; R2E-Gym left an empty file (the r2egym profile
 *   does too).
 * - An explicit `concise` view with a `view_range` checks the range against the file's lines;
 *   R2E-Gym checked it against the number of condensed lines (the r2egym profile does too).
 * - `str_replace` with `new_str` equal to `old_str` is refused, as OpenHands' editor refuses it:
 *   R2E-Gym rewrote the file unchanged and answered as for an edit, so an agent that copied the
 *   line it meant to fix was told it had edited the file.
 */
import path from 'node:path';

import { SwerlError } from '../../errors.js';
import { shellQuote, type Sandbox } from '../sandbox/sandbox.js';
import {
  clip,
  countOccurrences,
  decodeText,
  encodeText,
  expandTabs,
  lineNumber,
  looksBinary,
  inspectPath,
  pathSuffix,
  purePath,
  splitLines,
  type DecodedText,
  type ToolProfile,
} from './common.js';
import { PythonSyntaxError, conciseLines, type OutlineLine } from './python-outline.js';

export const FILE_EDITOR_COMMANDS = ['view', 'create', 'str_replace', 'insert', 'undo_edit'] as const;
export type FileEditorCommand = (typeof FILE_EDITOR_COMMANDS)[number];

/** Lines of context shown before and after an edit. */
export const SNIPPET_LINES = 4;
/** r2egym profile: a .py file with more lines than this is viewed concisely by default. */
export const AUTO_CONCISE_LINES = 110;

export interface FileEditorOptions {
  profile: ToolProfile;
}

export interface FileEditorRunOptions {
  /** This call's limit for each sandbox command it runs, ms; default: the sandbox's exec limit. */
  timeoutMs?: number;
}

/** One call's limit for the sandbox commands it runs (none: the sandbox's default). */
type ExecLimit = { timeoutMs?: number };

/** A failure the model should read as `ERROR: message`. */
class EditorError extends Error {}

const ALLOWED = FILE_EDITOR_COMMANDS.join(', ');

export class FileEditor {
  readonly profile: ToolProfile;
  /**
   * Per-path contents before each edit, most recent last: the bytes, or null when the edit
   * created the file. Lives as long as this editor (one episode).
   */
  private readonly history = new Map<string, Array<Buffer | null>>();

  constructor(
    private readonly sandbox: Sandbox,
    options: FileEditorOptions,
  ) {
    this.profile = options.profile;
  }

  /** Runs one call; the observation text. Throws only the sandbox's own failures (SwerlError). */
  async run(args: Record<string, string>, options: FileEditorRunOptions = {}): Promise<string> {
    const exec = options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs };
    try {
      return await this.dispatch(args, exec);
    } catch (error) {
      if (this.sandbox.destroyed || error instanceof SwerlError) throw error;
      return clip(`ERROR: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private async dispatch(args: Record<string, string>, exec: ExecLimit): Promise<string> {
    const command = args.command;
    if (command === undefined || command === '') {
      throw new EditorError(`Missing required parameter 'command'. Allowed commands: ${ALLOWED}.`);
    }
    if (!(FILE_EDITOR_COMMANDS as readonly string[]).includes(command)) {
      throw new EditorError(`Unrecognized command '${command}'. Allowed commands: ${ALLOWED}.`);
    }
    const raw = args.path;
    if (raw === undefined || raw === '') throw new EditorError(`Missing required parameter 'path' for '${command}'.`);
    if (!raw.startsWith('/')) {
      const suggestion = purePath(path.posix.join(this.sandbox.workdir, raw));
      throw new EditorError(`The path '${raw}' is not an absolute path. Use an absolute path, e.g. '${suggestion}'.`);
    }
    const file = purePath(raw);
    // The file's bytes come with its kind for the commands that read it (one command, not two);
    // not for a view the profile refuses.
    const read = (command === 'view' && !this.refusesView(file)) || command === 'str_replace' || command === 'insert';
    const { kind, bytes } = await inspectPath(this.sandbox, file, { timeoutMs: exec.timeoutMs, read });
    if (command === 'create') {
      if (kind !== 'missing') throw new EditorError(`File already exists at: ${file}. Cannot overwrite with 'create'.`);
    } else if (kind === 'missing') {
      throw new EditorError(`The path '${file}' does not exist.`);
    }
    if (kind === 'dir' && command !== 'view') {
      throw new EditorError(`The path '${file}' is a directory. Only 'view' can be used on directories.`);
    }
    if (kind === 'other') throw new EditorError(`The path '${file}' is not a regular file or directory.`);

    switch (command as FileEditorCommand) {
      case 'view':
        return kind === 'dir' ? this.viewDirectory(file, exec) : this.viewFile(file, args, bytes);
      case 'create':
        return this.create(file, args);
      case 'str_replace':
        return this.strReplace(file, args, bytes);
      case 'insert':
        return this.insert(file, args, bytes);
      case 'undo_edit':
        return this.undo(file, exec);
    }
  }

  // ---------------------------------------------------------------------------------------
  // view

  private async viewDirectory(dir: string, exec: ExecLimit): Promise<string> {
    const select = this.profile === 'r2egym' ? `\\( -type d -o -name '*.py' \\) -print` : '-print';
    const result = await this.sandbox.exec(
      `find -H ${shellQuote(dir)} -mindepth 1 -maxdepth 2 -name '.*' -prune -o ${select}`,
      exec,
    );
    const stderr = result.stderr.toString().trim();
    if (stderr !== '') throw new EditorError(stderr);
    const prefix = dir === '/' ? '/' : `${dir}/`;
    const entries = result.stdout
      .toString()
      .split('\n')
      .filter((line) => line.startsWith(prefix))
      .map((line) => ({ line, parts: line.slice(prefix.length).split('/') }))
      .sort((a, b) => comparePaths(a.parts, b.parts))
      .map((e) => e.line);
    const listing = [dir, ...entries].join('\n') + '\n';
    return clip(`Here's the files and directories up to 2 levels deep in ${dir}, excluding hidden:\n${listing}`);
  }

  /** The r2egym profile views .py files only, as R2E-Gym's editor did (to save context). */
  private refusesView(file: string): boolean {
    return this.profile === 'r2egym' && pathSuffix(file) !== '.py';
  }

  private async viewFile(file: string, args: Record<string, string>, read?: Buffer): Promise<string> {
    const r2egym = this.profile === 'r2egym';
    const isPython = pathSuffix(file) === '.py';
    if (this.refusesView(file)) {
      throw new EditorError(
        `Viewing non-Python files is disallowed for saving context. File '${path.posix.basename(file)}' is not a .py file.`,
      );
    }
    const range = args.view_range === undefined || args.view_range.trim() === '' ? null : parseViewRange(args.view_range);
    let concise = (args.concise ?? '').trim().toLowerCase() === 'true';
    const { text } = await this.readText(file, read);
    const lines = splitLines(text);
    if (r2egym && isPython && range === null && !concise && lines.length > AUTO_CONCISE_LINES) concise = true;
    concise &&= isPython;

    let entries: OutlineLine[];
    if (concise) {
      try {
        entries = conciseLines(text);
      } catch (error) {
        if (!(error instanceof PythonSyntaxError)) throw error;
        throw new EditorError(`Syntax error for file ${file}: ${error.reason} (${file}, line ${error.line})`);
      }
    } else {
      entries = lines.map((line, index) => ({ index, text: line }));
    }

    if (range) {
      const [start, end] = range;
      const total = concise && !r2egym ? lines.length : entries.length;
      const shown = `[${start}, ${end}]`;
      if (start < 1 || start > total) throw new EditorError(`Invalid view_range ${shown}: start line must be in [1, ${total}]`);
      if (end !== -1 && (end < start || end > total)) {
        throw new EditorError(`Invalid view_range ${shown}: end must be >= start and <= ${total}, or -1 to view until end.`);
      }
      entries = entries.filter((e) => e.index + 1 >= start && (end === -1 || e.index + 1 <= end));
    }

    return fileView(file, entries, concise);
  }

  // ---------------------------------------------------------------------------------------
  // edits

  private async create(file: string, args: Record<string, string>): Promise<string> {
    const text = args.file_text;
    if (text === undefined) throw new EditorError("Cannot create file without 'file_text' parameter.");
    await this.write(file, encodeText(text, { encoding: 'utf8', crlf: false }));
    this.remember(file, this.profile === 'r2egym' ? Buffer.alloc(0) : null);
    return (
      `File created at ${file}. ` +
      numberedSnippet(text, file) +
      'Review the file and make sure that it is as expected. Edit the file if necessary.'
    );
  }

  private async strReplace(file: string, args: Record<string, string>, read?: Buffer): Promise<string> {
    const oldStr = args.old_str;
    if (oldStr === undefined) throw new EditorError("Missing required parameter 'old_str' for 'str_replace'.");
    const newStr = args.new_str ?? '';
    const { text, bytes, decoded } = await this.readText(file, read);
    const occurrences = countOccurrences(text, oldStr);
    if (occurrences === 0) throw new EditorError(`No occurrences of '${oldStr}' found in ${file} for replacement.`);
    if (occurrences > 1) {
      throw new EditorError(`Multiple occurrences of '${oldStr}' found in ${file}. Please ensure it is unique before using str_replace.`);
    }
    if (newStr === oldStr && this.profile !== 'r2egym') {
      throw new EditorError('No replacement was performed: `new_str` is the same as `old_str`. Write the changed text in `new_str`.');
    }
    const { updated, observation } = replaceOnce(file, text, oldStr, newStr);
    await this.write(file, encodeText(updated, decoded));
    this.remember(file, bytes);
    return observation;
  }

  private async insert(file: string, args: Record<string, string>, read?: Buffer): Promise<string> {
    const newStr = args.new_str;
    if (newStr === undefined) throw new EditorError("Missing required parameter 'new_str' for 'insert'.");
    const rawLine = args.insert_line;
    if (rawLine === undefined || rawLine.trim() === '') throw new EditorError("Missing required parameter 'insert_line' for 'insert'.");
    if (!/^\s*[+-]?\d+\s*$/.test(rawLine)) {
      throw new EditorError(`Invalid insert_line '${rawLine}': it must be an integer (0 inserts at the top of the file).`);
    }
    const line = Number.parseInt(rawLine, 10);
    const { text, bytes, decoded } = await this.readText(file, read);
    const lines = text.split('\n');
    // R2E-Gym's bound is the length of that split list, one more than the line count when the
    // text ends with a newline; the default profile counts lines as `cat -n` does.
    let last: number;
    if (this.profile === 'r2egym') last = lines.length;
    else if (text === '') last = 0;
    else last = text.endsWith('\n') ? lines.length - 1 : lines.length;
    if (line < 0 || line > last) throw new EditorError(`Invalid insert_line ${line}. Must be in [0, ${last}].`);
    const newLines = newStr.split('\n');
    const updated = [...lines.slice(0, line), ...newLines, ...lines.slice(line)].join('\n');
    await this.write(file, encodeText(updated, decoded));
    this.remember(file, bytes);

    const snippet = [...lines.slice(Math.max(0, line - SNIPPET_LINES), line), ...newLines, ...lines.slice(line, line + SNIPPET_LINES)].join('\n');
    return (
      `The file ${file} has been edited. ` +
      numberedSnippet(snippet, 'a snippet of the edited file', Math.max(1, line - SNIPPET_LINES + 1)) +
      'Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary.'
    );
  }

  private async undo(file: string, exec: ExecLimit): Promise<string> {
    const stack = this.history.get(file);
    const previous = stack?.pop();
    if (previous === undefined) throw new EditorError(`No previous edits found for ${file} to undo.`);
    if (previous === null) {
      const result = await this.sandbox.exec(`rm -f -- ${shellQuote(file)}`, exec);
      if (result.exitCode !== 0) {
        stack!.push(previous);
        throw new EditorError(`Failed to remove ${file}: ${result.output.trim()}`);
      }
      return `Last edit to ${file} undone successfully. The file did not exist before that edit, so it has been removed.`;
    }
    try {
      await this.write(file, previous);
    } catch (error) {
      stack!.push(previous);
      throw error;
    }
    return `Last edit to ${file} undone successfully. ` + numberedSnippet(decodeText(previous).text, file);
  }

  // ---------------------------------------------------------------------------------------
  // helpers

  private remember(file: string, before: Buffer | null): void {
    let stack = this.history.get(file);
    if (!stack) this.history.set(file, (stack = []));
    stack.push(before);
  }

  /** The file's text; `read` is its bytes when inspectPath brought them already. */
  private async readText(file: string, read?: Buffer): Promise<{ text: string; bytes: Buffer; decoded: DecodedText }> {
    let bytes: Buffer;
    try {
      bytes = read ?? await this.sandbox.readFile(file);
    } catch (error) {
      if (this.sandbox.destroyed) throw error;
      throw new EditorError(`Failed to read file ${file}: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (looksBinary(bytes)) throw new EditorError(`The file ${file} looks binary (it contains NUL bytes); file_editor works on text files only.`);
    const decoded = decodeText(bytes);
    return { text: decoded.text, bytes, decoded };
  }

  private async write(file: string, data: Buffer): Promise<void> {
    try {
      await this.sandbox.writeFile(file, data);
    } catch (error) {
      if (this.sandbox.destroyed) throw error;
      throw new EditorError(`Failed to write file ${file}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

/**
 * `view_range` from its string form: "[3, 10]", "3,10", "(3 10)", "[3,-1]" (brackets and
 * parentheses stripped, commas or spaces between two integers), as R2E-Gym parsed it.
 */
export function parseViewRange(raw: string): [number, number] {
  const inner = raw.trim().replace(/^[[\]()]+|[[\]()]+$/g, '');
  const parts = inner.replaceAll(',', ' ').split(/\s+/).filter((p) => p !== '');
  if (parts.length !== 2 || !parts.every((p) => /^[+-]?\d+$/.test(p))) {
    throw new EditorError(`Invalid view_range '${raw}': give two integers [start_line, end_line], e.g. [3, 10]; an end_line of -1 means the end of the file.`);
  }
  return [Number.parseInt(parts[0]!, 10), Number.parseInt(parts[1]!, 10)];
}

/**
 * A file view's text: the header, then each line with its number in 6 columns and a space (the
 * lines shown, condensed or a range of them). Pure, so that text in this exact shape can be made
 * without a sandbox (the reading drills of pretraining, lib/train/pretrain).
 */
export function fileView(file: string, entries: readonly OutlineLine[], concise = false): string {
  const header = concise
    ? `Here is a condensed view for file: ${file}; [Note: Useful for understanding file structure in a concise manner. ` +
      'Please use specific view_range without concise cmd if you want to explore further into the relevant parts.]\n'
    : `Here's the result of running \`cat -n\` on the file: ${file}:\n`;
  return clip(header + entries.map((e) => `${lineNumber(e.index + 1)} ${e.text}`).join('\n'));
}

/**
 * str_replace of `oldStr` (found exactly once in `text`, as the caller checked) by `newStr`: the
 * new text and the observation, with SNIPPET_LINES lines of context around the edit. Pure, as
 * fileView.
 */
export function replaceOnce(file: string, text: string, oldStr: string, newStr: string): { updated: string; observation: string } {
  const at = text.indexOf(oldStr);
  const updated = text.slice(0, at) + newStr + text.slice(at + oldStr.length);
  const editLine = countOccurrences(text.slice(0, at), '\n');
  const start = Math.max(0, editLine - SNIPPET_LINES);
  const end = editLine + SNIPPET_LINES + countOccurrences(newStr, '\n');
  const snippet = updated.split('\n').slice(start, end + 1).join('\n');
  const observation =
    `The file ${file} has been edited. ` +
    numberedSnippet(snippet, `a snippet of ${file}`, start + 1) +
    'Review the changes and make sure they are as expected. Edit the file again if necessary.';
  return { updated, observation };
}

/**
 * An edit's numbered text: R2E-Gym clips the text first (so the marker lands on the last
 * numbered line), expands tabs, then numbers every `\n`-separated line (a final newline gives an
 * empty last line) with the number in 6 columns and a TAB.
 */
function numberedSnippet(text: string, descriptor: string, firstLine = 1): string {
  const numbered = expandTabs(clip(text))
    .split('\n')
    .map((line, i) => `${lineNumber(i + firstLine)}\t${line.replace(/\r$/, '')}`)
    .join('\n');
  return `Here's the result of running \`cat -n\` on ${descriptor}:\n${numbered}\n`;
}

/** Tree order: a folder right before its contents, siblings by name (code point order). */
function comparePaths(a: readonly string[], b: readonly string[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  }
  return a.length - b.length;
}
