/**
 * Pieces the agent's tools share: the tool profiles, the 10,000-character clip with its marker,
 * sandbox path handling, and byte-preserving text decoding for the file editor.
 *
 * Everything here talks to the sandbox through the Sandbox interface only (exec / readFile /
 * writeFile) and POSIX shell tools, so that the tools behave the same in every backend.
 */
import path from 'node:path';

import { shellQuote, type Sandbox } from '../sandbox/sandbox.js';

/**
 * `default`: docs/swe-env.md's interface on every text file. `r2egym`: adds R2E-Gym's quirks
 * (`.py`-only viewing and searching, automatic concise view of long Python files).
 */
export type ToolProfile = 'default' | 'r2egym';

export const TOOL_PROFILES: readonly ToolProfile[] = ['default', 'r2egym'];

/** Observations longer than this many characters (code points) are clipped. */
export const MAX_RESPONSE_CHARS = 10_000;

/** Appended where an observation was clipped; R2E-Gym's marker, byte for byte. */
export const CLIPPED_MARKER =
  '<response clipped><NOTE>To save on context only part of this file has been shown to you. ' +
  'You should retry this tool after you have searched inside the file with `grep -n` in order ' +
  'to find the line numbers of what you are looking for.</NOTE>';

/**
 * The first `limit` characters of `text` followed by the clipped marker, or `text` itself when
 * it is no longer than that. Characters are Unicode code points, as Python's len() counts them.
 */
export function clip(text: string, limit: number = MAX_RESPONSE_CHARS): string {
  if (text.length <= limit) return text; // UTF-16 length >= code points: surely short enough
  let count = 0;
  let index = 0;
  while (index < text.length) {
    if (count === limit) return text.slice(0, index) + CLIPPED_MARKER;
    const code = text.codePointAt(index)!;
    index += code > 0xffff ? 2 : 1;
    count++;
  }
  return text;
}

/** Python's str.expandtabs(): tabs to the next multiple of `size` columns; \n and \r reset. */
export function expandTabs(text: string, size = 8): string {
  if (!text.includes('\t')) return text;
  let out = '';
  let column = 0;
  for (const ch of text) {
    if (ch === '\t') {
      const spaces = size - (column % size);
      out += ' '.repeat(spaces);
      column += spaces;
    } else {
      out += ch;
      column = ch === '\n' || ch === '\r' ? 0 : column + 1;
    }
  }
  return out;
}

/** Python's str.count(): non-overlapping occurrences; the empty string occurs len + 1 times. */
export function countOccurrences(haystack: string, needle: string): number {
  if (needle === '') return [...haystack].length + 1;
  let count = 0;
  for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + needle.length)) count++;
  return count;
}

/**
 * A path normalised the way Python's PurePosixPath prints it: repeated slashes and `.` parts
 * dropped, no trailing slash; `..` parts are kept as written.
 */
export function purePath(value: string): string {
  const absolute = value.startsWith('/');
  const parts = value.split('/').filter((part) => part !== '' && part !== '.');
  const joined = parts.join('/');
  if (absolute) return `/${joined}`;
  return joined === '' ? '.' : joined;
}

/** `value` made absolute against the sandbox's work tree (for tools that accept relative paths). */
export function resolveInSandbox(sandbox: Sandbox, value: string): string {
  return path.posix.normalize(path.posix.isAbsolute(value) ? value : path.posix.join(sandbox.workdir, value)).replace(/(.)\/+$/, '$1');
}

/** Python's PurePath.suffix: the final component's last `.ext`, '' when there is none. */
export function pathSuffix(value: string): string {
  const name = path.posix.basename(value);
  const dot = name.lastIndexOf('.');
  return dot > 0 && dot < name.length - 1 ? name.slice(dot) : '';
}

export type PathKind = 'dir' | 'file' | 'other' | 'missing';

/** What is at `target` inside the sandbox (symlinks followed). */
export async function pathKind(sandbox: Sandbox, target: string, timeoutMs?: number): Promise<PathKind> {
  return (await inspectPath(sandbox, target, { timeoutMs })).kind;
}

/**
 * What is at `target`, and with `read`, a regular file's bytes from the same sandbox command
 * (one command fewer a file_editor call). `bytes` is absent when the file could not be read
 * whole in that command (too large for its output, unreadable): read it on its own to learn why.
 */
export async function inspectPath(sandbox: Sandbox, target: string, options: { timeoutMs?: number | undefined; read?: boolean } = {}): Promise<{ kind: PathKind; bytes?: Buffer }> {
  const q = shellQuote(target);
  const result = await sandbox.exec(
    `if [ -d ${q} ]; then echo dir; elif [ -f ${q} ]; then echo file${options.read ? ` && exec cat -- ${q}` : ''}; elif [ -e ${q} ]; then echo other; else echo missing; fi`,
    options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs },
  );
  const newline = result.stdout.indexOf(10);
  const kind = result.stdout.subarray(0, newline < 0 ? undefined : newline).toString().trim();
  if (kind !== 'dir' && kind !== 'file' && kind !== 'other' && kind !== 'missing') {
    // A plain Error on purpose: the tool's caller makes it the agent's observation, where a
    // SwerlError would mean the sandbox itself failed (the one error class is for what escapes).
    throw new Error(`could not inspect ${target}: ${result.output.trim() || `exit code ${result.exitCode}`}`);
  }
  const whole = kind === 'file' && options.read && result.exitCode === 0 && !result.outputLimited && !result.timedOut;
  return whole ? { kind, bytes: result.stdout.subarray(newline + 1) } : { kind };
}

/**
 * A file's text and how to write it back unchanged: UTF-8 when the bytes are valid UTF-8
 * (a byte-order mark is kept), else Latin-1 (every byte maps to one character and back). A file
 * whose every newline is CRLF is edited with LF newlines and written back with CRLF, so that
 * `old_str` values written with \n match, as they did under R2E-Gym's universal-newline reads.
 */
export interface DecodedText {
  text: string;
  encoding: 'utf8' | 'latin1';
  crlf: boolean;
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function decodeText(bytes: Uint8Array): DecodedText {
  let text: string;
  let encoding: DecodedText['encoding'] = 'utf8';
  try {
    text = STRICT_UTF8.decode(bytes);
  } catch {
    text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
    encoding = 'latin1';
  }
  const newlines = text.split('\n').length - 1;
  const crlf = newlines > 0 && text.split('\r\n').length - 1 === newlines;
  return { text: crlf ? text.replaceAll('\r\n', '\n') : text, encoding, crlf };
}

export function encodeText(text: string, like: Pick<DecodedText, 'encoding' | 'crlf'>): Buffer {
  return Buffer.from(like.crlf ? text.replaceAll('\n', '\r\n') : text, like.encoding);
}

/** Whether the bytes look binary (a NUL byte in the first 8 KiB, as grep and git decide). */
export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, 8192).includes(0);
}

/**
 * The lines of a text as Python's str.splitlines() gives them for ordinary files: split at
 * \r\n, \r or \n, no empty last line for a final newline, none at all for an empty text.
 * (Python also splits at \v, \f and a few Unicode separators; line numbers here follow
 * `grep -n` instead.)
 */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split(/\r\n|\r|\n/);
  if (/[\r\n]$/.test(text)) lines.pop();
  return lines;
}

/** Python's `f"{n:6d}"`: right-aligned in 6 columns, wider numbers as they are. */
export function lineNumber(n: number): string {
  return String(n).padStart(6);
}
