/**
 * Scripted policies: they answer with fixed tool calls instead of sampling, to check an
 * environment end to end through the real agent loop (rendering, action parsing, tools,
 * grading) without a model.
 *
 *   OraclePolicy  applies the task's gold patch with execute_bash, then calls finish: every
 *                 valid task must score 1 with it.
 *   NoopPolicy    calls finish at once, changing nothing: every valid task must score 0.
 *
 * Their answers are text-mode calls (lib/env/actions.ts's <function=...> grammar) encoded with
 * the policy's tokenizer and closed with its end-of-turn token, finishReason 'stop', each
 * token's logprob 0. Like a model, they stop at request.maxTokens: a longer answer comes back
 * cut to its first maxTokens tokens with finishReason 'length' (the loop then closes the
 * turn, and the cut call usually no longer does what it should). The oracle's first turn
 * carries the whole patch (one token per byte with ByteTokenizer), so its episodes need
 * maxTokensPerTurn and responseBudget large enough for the patch and the call around it.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { SwerlError, invalidArg } from '../errors.js';
import { formatTextAction, parseTextAction } from '../env/actions.js';
import { shellQuote } from '../env/sandbox/sandbox.js';
import { patchFiles } from '../env/patch-files.js';
import { withoutStepsLine } from '../env/prompts.js';
import type { Task } from '../env/task.js';
import { countOccurrences } from '../env/tools/common.js';
import { ByteTokenizer } from '../model/byte-tokenizer.js';
import { wrongFixes } from './wrong-fix.js';
import type { Tokenizer } from '../types/tokenizer.js';
import type { AgentPolicy, EpisodeContext, Generation, SamplingRequest } from '../types/policy.js';

export interface ScriptedPolicyOptions {
  /** Default: a new ByteTokenizer. It needs an end-of-turn token (eosTokenIds[0]). */
  tokenizer?: Tokenizer;
}

export interface EditOraclePolicyOptions extends ScriptedPolicyOptions {
  /**
   * The share of tasks (chosen by id) whose episode first replaces the buggy line with itself,
   * gets the editor's refusal, and then makes the fix: a recovery to learn from. The failed
   * turn is a tool error, so fine-tuning keeps it in the context and out of the loss
   * (agent/trajectory.ts, maskFailedTurns). Needs the default editor profile (r2egym's editor
   * accepts such an edit silently). Default 0.
   */
  recovery?: number;
  /**
   * The share of recovering tasks (chosen by id) whose refused edit copies another line of the
   * file, not the buggy one, before the fix: the mistake a model trained on these episodes
   * makes most is a copy of a line that is not buggy (two thirds of its failures on generated
   * tasks), and recovering from it means editing another line, not the same one. Default 0.
   */
  recoverElsewhere?: number;
  /**
   * The share of one-bug tasks (chosen by id, among those that do not recover) whose episode
   * first replaces the buggy line with a wrong fix (agent/wrong-fix.ts), runs the issue's call
   * and sees it still print the wrong value, then replaces its own line with the fix, runs the
   * call again and finishes: acting on what the call printed. The wrong edit is a mistake to
   * keep out of the loss (`mistakeTurns`). Default 0.
   */
  retry?: number;
}

export interface OraclePolicyOptions extends ScriptedPolicyOptions {
  /**
   * The longest execute_bash command, in UTF-8 bytes. A patch that does not fit in one is
   * written to a file in the sandbox's /tmp a piece per turn, then applied. Default 64 KiB:
   * the command reaches the sandbox as one argument of `sh -c`, and Linux refuses a single
   * argument over 128 KiB (MAX_ARG_STRLEN).
   */
  maxCommandBytes?: number;
}

/** Where a patch written in pieces is put together, inside the sandbox. */
export const ORACLE_PATCH_FILE = '/tmp/swerl-oracle.patch';

const APPLY = 'git apply --whitespace=nowarn';
const FINISH = formatTextAction('finish', { command: 'submit' });
/** What a heredoc around a piece costs beyond the piece and its delimiter (twice). */
const HEREDOC_OVERHEAD = 64;

function bashCall(cmd: string): string {
  return formatTextAction('execute_bash', { cmd: `\n${cmd}\n` });
}

/**
 * A quoted-heredoc delimiter that is no line of `text` (nor part of one, to be safe): in a
 * quoted heredoc nothing is expanded, so quotes, backslashes, `$` and tabs pass unchanged.
 */
function heredocDelimiter(text: string): string {
  let delimiter = 'SWERL_PATCH_END';
  for (let n = 1; text.includes(delimiter); n++) delimiter = `SWERL_PATCH_END_${n}`;
  return delimiter;
}

/**
 * `head` fed `text` byte for byte on its stdin: as a quoted heredoc when the text ends with a
 * newline (a heredoc always ends with one) and survives the trip through the tokenizer and the
 * call grammar, else as base64.
 */
function feed(head: string, text: string, roundTrips: (cmd: string) => boolean): string {
  if (text.endsWith('\n')) {
    const delimiter = heredocDelimiter(text);
    const heredoc = `${head} <<'${delimiter}'\n${text}${delimiter}`;
    if (roundTrips(heredoc)) return heredoc;
  }
  // Text the call grammar or the tokenizer would alter (a "</parameter>" or "<|im_end|>" in
  // the patch, say) goes as base64, which has none of those characters.
  return `printf '%s' '${Buffer.from(text, 'utf8').toString('base64')}' | base64 -d | ${head}`;
}

/** Pieces of `text` of at most `limit` UTF-8 bytes, cut after a newline where one is near. */
function splitText(text: string, limit: number): string[] {
  const bytes = Buffer.from(text, 'utf8');
  const pieces: string[] = [];
  let start = 0;
  while (start < bytes.length) {
    let end = Math.min(start + limit, bytes.length);
    if (end < bytes.length) {
      const newline = bytes.lastIndexOf(0x0a, end - 1);
      if (newline >= start) end = newline + 1;
      // No newline in reach: cut at a character boundary (never inside a UTF-8 sequence).
      else while (end > start + 1 && (bytes[end]! & 0xc0) === 0x80) end--;
    }
    pieces.push(bytes.subarray(start, end).toString('utf8'));
    start = end;
  }
  return pieces;
}

abstract class ScriptedPolicy implements AgentPolicy {
  readonly tokenizer: Tokenizer;
  readonly #endOfTurn: number;

  constructor(options: ScriptedPolicyOptions) {
    this.tokenizer = options.tokenizer ?? new ByteTokenizer();
    const endOfTurn = this.tokenizer.eosTokenIds[0];
    if (endOfTurn === undefined) throw invalidArg('options.tokenizer', 'has no end-of-turn token (eosTokenIds is empty)', 'use a ChatML tokenizer such as ByteTokenizer or Qwen3\'s');
    this.#endOfTurn = endOfTurn;
  }

  /** The text of this turn's answer. */
  protected abstract answer(context: EpisodeContext<Task> | undefined): string;

  async generate(request: SamplingRequest, context?: EpisodeContext<Task>): Promise<Generation> {
    if (request.signal?.aborted) return { tokens: new Int32Array(0), logprobs: new Float32Array(0), finishReason: 'cancelled' };
    const full = [...this.tokenizer.encode(this.answer(context)), this.#endOfTurn];
    const limit = Math.max(0, Math.floor(request.maxTokens));
    const cut = full.length > limit;
    const tokens = Int32Array.from(cut ? full.slice(0, limit) : full);
    return { tokens, logprobs: new Float32Array(tokens.length), finishReason: cut ? 'length' : 'stop' };
  }

  /** Whether `cmd` reaches execute_bash unchanged when written as this policy writes it. */
  protected roundTrips(cmd: string): boolean {
    const response = this.tokenizer.decode(this.tokenizer.encode(bashCall(cmd)), { skipSpecialTokens: true });
    const action = parseTextAction(response);
    return action?.name === 'execute_bash' && action.args.cmd === cmd.trim() && cmd === cmd.trim();
  }
}

/** Calls finish at once: the untouched repository is graded. */
export class NoopPolicy extends ScriptedPolicy {
  constructor(options: ScriptedPolicyOptions = {}) {
    super(options);
  }

  protected answer(): string {
    return FINISH;
  }
}

/**
 * Applies the task's gold patch with execute_bash, then calls finish. A patch that fits in one
 * command is fed to `git apply -` through a quoted heredoc in one turn; a longer one is
 * written to ORACLE_PATCH_FILE a piece per turn and applied in the turn after. Each turn's
 * answer depends only on the task and context.turn.
 */
export class OraclePolicy extends ScriptedPolicy {
  readonly maxCommandBytes: number;
  /** The commands of the last task seen (episodes of one task ask turn after turn). */
  #cached: { task: Task; commands: string[] } | null = null;

  constructor(options: OraclePolicyOptions = {}) {
    super(options);
    const max = options.maxCommandBytes ?? 64 * 1024;
    if (!Number.isInteger(max) || max < 4 * HEREDOC_OVERHEAD) {
      throw invalidArg('options.maxCommandBytes', `is ${max}`, `give an integer of at least ${4 * HEREDOC_OVERHEAD}`);
    }
    this.maxCommandBytes = max;
  }

  /** The execute_bash commands that apply the task's gold patch, in turn order. */
  commands(task: Task): string[] {
    if (this.#cached?.task === task) return this.#cached.commands;
    if (task.goldPatch === undefined || task.goldPatch.trim() === '') {
      const what = task.goldPatch === undefined ? 'has no gold patch' : 'has an empty gold patch';
      throw new SwerlError('ERR_SWERL_INVALID_ARG', `task ${task.id} ${what}; the oracle policy can only play tasks that carry one`);
    }
    // git apply wants the last line ended.
    const patch = task.goldPatch.endsWith('\n') ? task.goldPatch : `${task.goldPatch}\n`;
    const roundTrips = (cmd: string) => this.roundTrips(cmd);
    const fits = (cmd: string) => Buffer.byteLength(cmd, 'utf8') <= this.maxCommandBytes;
    let commands = [feed(`${APPLY} -`, patch, roundTrips)];
    if (!fits(commands[0]!)) {
      // base64 grows a piece by 4/3: size the pieces so that either form fits.
      const pieceBytes = Math.floor(((this.maxCommandBytes - HEREDOC_OVERHEAD - ORACLE_PATCH_FILE.length) * 3) / 4) - 2 * 32;
      commands = splitText(patch, pieceBytes).map((piece, i) => feed(`cat ${i === 0 ? '>' : '>>'} ${ORACLE_PATCH_FILE}`, piece, roundTrips));
      commands.push(`${APPLY} ${ORACLE_PATCH_FILE} && rm -f ${ORACLE_PATCH_FILE}`);
    }
    this.#cached = { task, commands };
    return commands;
  }

  protected answer(context: EpisodeContext<Task> | undefined): string {
    const task = context?.task;
    if (!task) {
      throw invalidArg('context.task', `is missing${context ? ` (task ${context.taskId})` : ''}`, 'the oracle policy plays SWE episodes only: give the episode context its task');
    }
    const commands = this.commands(task);
    return context.turn < commands.length ? bashCall(commands[context.turn]!) : FINISH;
  }
}

const HASH_PRIME = 2654435761;

/** A task's own small number (FNV-style over its id): which run plays gold, per task. */
function taskNumber(id: string): number {
  let h = 2166136261;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 16777619) >>> 0;
  return Math.imul(h, HASH_PRIME) >>> 0;
}

/** The comment a line of the file starts with, by its extension ('#' or '//'). */
function commentFor(file: string): string {
  return /\.(py|pyi|sh|bash|rb|pl|r|ya?ml|toml|cfg|ini|txt)$/i.test(file) ? '#' : '//';
}

export interface DecoyPolicyOptions extends OraclePolicyOptions {
  /** One run in `every` plays the gold patch; default 4. */
  every?: number;
}

/**
 * Candidates for test-time scaling without a model: on one run in `every` (which one depends
 * on the task) it plays the gold patch as OraclePolicy does; on the others a decoy, a comment
 * appended to the first file the gold patch changes, which leaves the behaviour as it was. The
 * decoys are the same on every run, so a majority vote picks one: it is the case where a vote
 * fails and tests do not.
 */
export class DecoyPolicy extends OraclePolicy {
  readonly every: number;

  constructor(options: DecoyPolicyOptions = {}) {
    const { every = 4, ...oracle } = options;
    super(oracle);
    if (!Number.isInteger(every) || every < 1) throw invalidArg('options.every', `is ${every}`, 'give an integer >= 1 (one run in `every` plays gold)');
    this.every = every;
  }

  /** The sample (mod `every`) that plays gold for this task. */
  goldSample(task: Task): number {
    return taskNumber(task.id) % this.every;
  }

  /** The decoy's one command: a harmless comment on the gold patch's first file. */
  decoyCommand(task: Task): string {
    this.commands(task); // refuses a task without a gold patch, as the oracle does
    const file = patchFiles(task.goldPatch!).find((f) => f.oldPath !== null && f.newPath !== null);
    if (!file) throw new SwerlError('ERR_SWERL_INVALID_ARG', `task ${task.id}: its gold patch changes no existing file for the decoy to touch`);
    const line = `${commentFor(file.newPath!)} TODO: handle the case the issue describes`;
    return `printf '\\n%s\\n' ${shellQuote(line)} >> ${shellQuote(`${task.workdir}/${file.newPath}`)}`;
  }

  protected override answer(context: EpisodeContext<Task> | undefined): string {
    const task = context?.task;
    if (task && context.sample % this.every !== this.goldSample(task)) return context.turn === 0 ? bashCall(this.decoyCommand(task)) : FINISH;
    return super.answer(context);
  }
}

/** Where the test writer puts a copy of `file`: `_reproduce` before the first dot of its name. */
export function reproductionPathOf(file: string): string {
  const slash = file.lastIndexOf('/');
  const name = file.slice(slash + 1);
  const dot = name.indexOf('.');
  const renamed = dot <= 0 ? `${name}_reproduce` : `${name.slice(0, dot)}_reproduce${name.slice(dot)}`;
  return `${file.slice(0, slash + 1)}${renamed}`;
}

/**
 * The test writer of test-time scaling (SweEnv goal 'reproduce') without a model: writes each
 * of the task's hidden test files (a task folder's tests/) as a new file beside the original
 * (reproductionPathOf), then calls finish. Its tests fail at the base where the issue's tests
 * do, and pass with the gold patch: what a good test writer would produce.
 */
export class TestWriterOraclePolicy extends ScriptedPolicy {
  readonly maxCommandBytes: number;
  #cached: { task: Task; turns: string[] } | null = null;

  constructor(options: OraclePolicyOptions = {}) {
    super(options);
    this.maxCommandBytes = options.maxCommandBytes ?? 64 * 1024;
  }

  turns(task: Task): string[] {
    if (this.#cached?.task === task) return this.#cached.turns;
    const hidden = task.hiddenTests;
    if (hidden.kind !== 'files') throw new SwerlError('ERR_SWERL_INVALID_ARG', `task ${task.id} keeps its hidden tests as ${hidden.kind === 'patch' ? 'a test patch' : 'image paths'}; the scripted test writer copies a task folder's tests/ files only`);
    const turns = hidden.paths.map((rel) => {
      const target = `${task.workdir}/${reproductionPathOf(rel)}`;
      const command = feed(`mkdir -p ${shellQuote(path.posix.dirname(target))} && cat > ${shellQuote(target)}`, readFileSync(path.join(hidden.dir, rel), 'utf8'), (cmd) => this.roundTrips(cmd));
      if (Buffer.byteLength(command) > this.maxCommandBytes) throw new SwerlError('ERR_SWERL_INVALID_ARG', `task ${task.id}: the test file ${rel} does not fit one command of ${this.maxCommandBytes} bytes`);
      return bashCall(command);
    });
    this.#cached = { task, turns: [...turns, FINISH] };
    return this.#cached.turns;
  }

  protected answer(context: EpisodeContext<Task> | undefined): string {
    const task = context?.task;
    if (!task) throw invalidArg('context.task', 'is missing', 'the scripted test writer plays SWE episodes only: give the episode context its task');
    const turns = this.turns(task);
    return turns[Math.min(context.turn, turns.length - 1)]!;
  }
}

/** What EditOraclePolicy reads of a generated task (task.metadata.sweGen: task.json's swe_gen, lib/env/swe-gen). */
interface EditableTask {
  file: string;
  language: string;
  bugs: { line: number; before: string; after: string }[];
}

/**
 * The str_replace arguments of each fix, applied in order to `source` (the file as the
 * repository has it). The call grammar trims a value's ends, so a line that is unique only
 * with its indentation (`  return high;` beside `    return high;`) is widened with the lines
 * above it until its trimmed text occurs once.
 */
function replacements(source: string, bugs: EditableTask['bugs']): { oldStr: string; newStr: string }[] {
  let text = source;
  return bugs.map((bug) => {
    const lines = text.split('\n');
    let first = bug.line - 1;
    let oldStr = bug.before;
    let newStr = bug.after;
    while (countOccurrences(text, oldStr.trim()) > 1 && first > 0) {
      first--;
      oldStr = `${lines[first]}\n${oldStr}`;
      newStr = `${lines[first]}\n${newStr}`;
    }
    text = text.replace(oldStr, newStr);
    return { oldStr: oldStr.trim(), newStr: newStr.trim() };
  });
}

/** A task id's place in [0, 1): which tasks a share picks, fixed by their ids. */
function unitHash(id: string): number {
  return createHash('sha256').update(id).digest().readUInt32BE(0) / 2 ** 32;
}

/**
 * The str_replace new_str of a retry's wrong fix of a one-bug task (the fix's old_str, its
 * last line a wrong fix, picked by the task's id), or null where there is none to make: a
 * fix of more than one line or bug, or no wrong fix whose text the editor could then find once.
 */
function wrongEdit(source: string, bugs: EditableTask['bugs'], fixes: { oldStr: string; newStr: string }[], id: string): string | null {
  const [bug] = bugs;
  if (bugs.length !== 1 || bug!.before.includes('\n') || bug!.after.includes('\n')) return null;
  const { oldStr } = fixes[0]!;
  // old_str is the buggy line, trimmed, after any lines it was widened with.
  const head = oldStr.slice(0, oldStr.length - bug!.before.trim().length);
  const candidates = wrongFixes(bug!.before, bug!.after, source)
    .map((line) => head + line.trim())
    .filter((wrong) => countOccurrences(source.replace(oldStr, () => wrong), wrong) === 1);
  return candidates.length ? candidates[Math.floor(unitHash(`wrong:${id}`) * candidates.length)]! : null;
}

/**
 * A line of the file that a recovery's refused edit copies instead of the buggy one, picked by
 * the task's id: trimmed, found once in the file, in no fix's old_str, and not a function's
 * first line; null where the file has none.
 */
export function distractorLine(source: string, fixes: readonly { oldStr: string }[], id: string): string | null {
  const candidates = [...new Set(source.split('\n').map((line) => line.trim()))].filter(
    (line) => line.length >= 4 && !/^(def|function|async function|export)\b/.test(line) && countOccurrences(source, line) === 1 && !fixes.some((fix) => fix.oldStr.includes(line)),
  );
  return candidates.length ? candidates[Math.floor(unitHash(`distractor:${id}`) * candidates.length)]! : null;
}

function editableTask(task: Task): EditableTask {
  const meta = task.metadata.sweGen as Partial<EditableTask> | undefined;
  const ok = meta && typeof meta.file === 'string' && typeof meta.language === 'string' && Array.isArray(meta.bugs) &&
    meta.bugs.every((b) => typeof b?.before === 'string' && typeof b?.after === 'string' && Number.isInteger(b?.line));
  if (!ok) throw new SwerlError('ERR_SWERL_INVALID_ARG', `task ${task.id} carries no swe-gen fix (metadata.sweGen with file, language and bugs); the edit oracle plays generated tasks only (swerl tasks generate)`);
  return meta as EditableTask;
}

function editorCall(args: Record<string, string>): string {
  return formatTextAction('file_editor', args);
}

/**
 * A command that prints what the issue's first failing call returns, written as the issue
 * writes values (lib/env/swe-gen/values.ts: Python's repr; for JavaScript, lists as JSON
 * with ", " and the rest as console.log prints them), so that its output reads against the
 * issue's "expected" at a glance. The call is the first backticked `name(...)` of the issue;
 * the module is the file at the repository's root.
 */
export function reproductionCommand(issue: string, file: string, language: string): string {
  const call = /`([A-Za-z_][A-Za-z0-9_]*)\(([^`]*)\)`/.exec(issue);
  if (!call) throw new SwerlError('ERR_SWERL_INVALID_ARG', `the issue names no failing call (\`name(...)\`) to reproduce: ${JSON.stringify(issue.slice(0, 200))}`);
  const [text, fn] = [call[0].slice(1, -1), call[1]!];
  const code = language === 'python'
    ? `from ${path.posix.basename(file, '.py')} import ${fn}; print(repr(${text}))`
    : `import { ${fn} } from './${file}'; const r = ${text}; console.log(Array.isArray(r) ? JSON.stringify(r).replace(/,/g, ', ') : r)`;
  // Double quotes read best; a call with a character the shell expands there is quoted whole.
  const quoted = /["$`\\]/.test(code) ? shellQuote(code) : `"${code}"`;
  return language === 'python' ? `python3 -c ${quoted}` : `node --input-type=module -e ${quoted}`;
}

/**
 * Fixes a generated task the way an agent would, through the tools: views the source file,
 * (with `recovery`, first tries an edit that changes nothing and reads the refusal), replaces
 * each buggy line with file_editor's str_replace, runs the issue's failing call to
 * see it now gives what the issue expects, then calls finish. (The repository's own tests
 * pass before the fix as after it: swe-gen's failing tests are hidden, so running them would
 * show the model nothing.) Its episodes are the supervised warm-up of a model that has never
 * seen code: every turn is a tool call a model can learn to make from the issue and what it
 * observed.
 */
export class EditOraclePolicy extends ScriptedPolicy {
  /** The turns of the last task seen (episodes of one task ask turn after turn). */
  #cached: { task: Task; turns: string[]; mistakes: number[] } | null = null;
  readonly #recovery: number;
  readonly #recoverElsewhere: number;
  readonly #retry: number;

  constructor(options: EditOraclePolicyOptions = {}) {
    super(options);
    const share = (name: 'recovery' | 'recoverElsewhere' | 'retry') => {
      const value = options[name] ?? 0;
      if (!(value >= 0 && value <= 1)) throw invalidArg(`options.${name}`, `is ${value}; it must be a fraction in [0, 1]`);
      return value;
    };
    this.#recovery = share('recovery');
    this.#recoverElsewhere = share('recoverElsewhere');
    this.#retry = share('retry');
  }

  /**
   * Whether the task's episode first tries an edit that changes nothing (a fixed share of the
   * tasks, chosen by their ids): the mistake a model trained on these episodes made most.
   */
  recovers(task: Task): boolean {
    return this.#recovery > 0 && unitHash(task.id) < this.#recovery;
  }

  /**
   * The line a recovering task's refused edit copies: the buggy one, or (a share of them, by
   * id, where the file has one) another line (`distractorLine`).
   */
  #refusedCopy(task: Task, source: string, fixes: readonly { oldStr: string }[]): string {
    const elsewhere = this.#recoverElsewhere > 0 && unitHash(`elsewhere:${task.id}`) < this.#recoverElsewhere;
    return (elsewhere ? distractorLine(source, fixes, task.id) : null) ?? fixes[0]!.oldStr;
  }

  /** Whether the task is drawn for a wrong fix first (by its id; the task may still have none to make). */
  #drawnForRetry(task: Task): boolean {
    return this.#retry > 0 && !this.recovers(task) && unitHash(`retry:${task.id}`) < this.#retry;
  }

  /** The turns' answers for a task, in order. */
  turns(task: Task): string[] {
    return this.#plan(task).turns;
  }

  /**
   * The turns whose answers are deliberate mistakes (a retry's wrong fix), by index: fine-tuning
   * keeps them in the context and out of the loss (agent/trajectory.ts, maskTurns). The refused
   * edit of a recovery is not listed: its tool error masks it already.
   */
  mistakeTurns(task: Task): number[] {
    return this.#plan(task).mistakes;
  }

  /**
   * Whether an episode of the task shows what its turns mean to: a retry's wrong fix must make
   * the issue's call print something other than what it prints after the fix, or the episode
   * teaches replacing a line the call showed right (about a quarter of wrong fixes give the
   * issue's one call its expected value). Episodes of other tasks always do.
   */
  demonstrates(task: Task, trajectory: { turns: readonly { observation: string }[] }): boolean {
    if (this.mistakeTurns(task).length === 0) return true;
    const [first, second] = [trajectory.turns[2], trajectory.turns[4]];
    return first !== undefined && second !== undefined && withoutStepsLine(first.observation) !== withoutStepsLine(second.observation);
  }

  #plan(task: Task): { turns: string[]; mistakes: number[] } {
    if (this.#cached?.task === task) return this.#cached;
    const { file, language, bugs } = editableTask(task);
    if (task.repoDir === undefined) throw invalidArg(`task ${task.id}`, 'has no repoDir', 'the edit oracle reads the source file from the task folder');
    const filePath = `${task.workdir}/${file}`;
    const run = bashCall(reproductionCommand(task.problemStatement, file, language));
    const source = readFileSync(path.join(task.repoDir, file), 'utf8');
    const fixes = replacements(source, bugs);
    const replace = (oldStr: string, newStr: string) => editorCall({ command: 'str_replace', path: filePath, old_str: oldStr, new_str: newStr });
    const view = editorCall({ command: 'view', path: filePath });
    const copy = (line: string) => replace(line, line);
    const wrong = this.#drawnForRetry(task) ? wrongEdit(source, bugs, fixes, task.id) : null;
    const plan = wrong
      ? { turns: [view, replace(fixes[0]!.oldStr, wrong), run, replace(wrong, fixes[0]!.newStr), run, FINISH], mistakes: [1] }
      : {
          turns: [
            view,
            ...(this.recovers(task) ? [copy(this.#refusedCopy(task, source, fixes))] : []),
            ...fixes.map((r) => replace(r.oldStr, r.newStr)),
            run,
            FINISH,
          ],
          mistakes: [],
        };
    this.#cached = { task, ...plan };
    return plan;
  }

  protected answer(context: EpisodeContext<Task> | undefined): string {
    const task = context?.task;
    if (!task) throw invalidArg('context.task', 'is missing', 'the edit oracle plays SWE episodes only: give the episode context its task');
    const turns = this.turns(task);
    return turns[Math.min(context.turn, turns.length - 1)]!;
  }
}
