/**
 * Reading drills: synthetic episodes, in the exact text of the SWE environment's episodes, whose
 * every token a model that has never seen code can learn to predict by copying from earlier in
 * the same conversation. Pretraining on them (every token trained) is how a small model learns
 * to read before it learns to act: to write the file the issue names, to find line K of a view,
 * to quote a line into old_str, and to echo a span it has seen.
 *
 * A drill is one conversation: the compact system prompt, a generated task's issue (train
 * split), then the assistant views the file the issue names and takes turns drawn from the mix:
 *
 *   lookup  view_range [a, b]: the observation repeats lines a..b of the earlier view
 *   edit    str_replace of one line by a random one-token change of it: old_str quotes the
 *           line, the observation's snippet repeats the lines around it (the change included)
 *   echo    execute_bash `echo` of words from the file and made-up ones: the output repeats them
 *
 * then calls finish. Edits change a random line at random (a number, an operator or a name):
 * the drills teach reading, never which line is wrong or what its fix is; that is left to
 * fine-tuning and RL on the tasks. Half of the issues have the file renamed to a made-up word,
 * so the path must be copied from the issue, not recalled. Every observation is made by the
 * same functions the tools use (fileView, replaceOnce, bashObservation), so a drill reads
 * exactly like an episode the agent loop renders.
 */
import { formatTextAction } from '../../env/actions.js';
import { bashObservation } from '../../env/observations.js';
import { compactIssuePrompt, compactSystemPrompt, stepsRemainingLine } from '../../env/prompts.js';
import { generateSweGenTask, type GeneratedTask } from '../../env/swe-gen/index.js';
import type { SweGenTaskOptions } from '../../env/swe-gen/options.js';
import { countOccurrences, lineNumber, splitLines } from '../../env/tools/common.js';
import { fileView, replaceOnce, toolDescriptions, toolOutput } from '../../env/tools/index.js';
import { ByteTokenizer } from '../../model/byte-tokenizer.js';
import { ChatRenderer, type ChatMessage } from '../../model/chat-template.js';
import type { Tokenizer } from '../../types/tokenizer.js';
import { mixSeed, mulberry32 } from '../../util/random.js';

export const DRILL_TURNS = ['lookup', 'edit', 'echo'] as const;
export type DrillTurn = (typeof DRILL_TURNS)[number];

export interface DrillOptions {
  /** Relative weights of the turn kinds after the first view. */
  mix: Record<DrillTurn, number>;
  /** Turns after the first view: drawn uniformly in [min, max]. */
  turns: { min: number; max: number };
  /** Words an echo turn says: drawn uniformly in [min, max]. */
  echoWords: { min: number; max: number };
  /** The programs drills read: swe-gen tasks of this split and seed range, with these options. */
  programs: { split: 'train' | 'heldout'; firstSeed: number; count: number } & Partial<SweGenTaskOptions>;
  /** Share of issues whose file is renamed to a made-up word (0..1). */
  renameFiles: number;
  /**
   * Share of drills (0..1) whose first view is a view_range [s, end] from a random line s past
   * the first, not the whole file; their lookups and edits stay within the lines shown. A view
   * from line 1 shows line K as its K-th line, so a lookup can be had by counting lines as well as
   * by matching K; from line s it cannot.
   */
  partialViews: number;
  /** The step budget the prompt's "Steps Remaining" counts down from (the env's maxSteps). */
  maxSteps: number;
  /** Where the repository is (the env's workdir). */
  workdir: string;
}

export const DEFAULT_DRILLS: DrillOptions = {
  mix: { lookup: 2, edit: 2, echo: 1 },
  turns: { min: 1, max: 4 },
  echoWords: { min: 4, max: 24 },
  programs: { split: 'train', firstSeed: 0, count: 100_000 },
  renameFiles: 0.5,
  partialViews: 0,
  maxSteps: 6,
  workdir: '/testbed',
};

/** The drill's turns, as the agent loop's conversation (system, user, then assistant / observation pairs). */
export interface Drill {
  messages: ChatMessage[];
  /** The generated task the drill reads (its id), and the file name the issue gives. */
  taskId: string;
  file: string;
}

class Rng {
  readonly #next: () => number;
  constructor(seed: number) {
    this.#next = mulberry32(seed);
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.#next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)]!;
  }
  chance(p: number): boolean {
    return this.#next() < p;
  }
  weighted<K extends string>(weights: Record<K, number>): K {
    const entries = Object.entries(weights) as [K, number][];
    const total = entries.reduce((s, [, w]) => s + w, 0);
    let at = this.#next() * total;
    for (const [key, w] of entries) {
      if ((at -= w) < 0) return key;
    }
    return entries.at(-1)![0];
  }
}

const CONSONANTS = 'bdfgklmnprstvz';
const VOWELS = 'aeiou';

/** A pronounceable made-up word of 2-3 syllables ("kovra", "temilu"): no vocabulary has it whole. */
function madeUpWord(rng: Rng): string {
  let word = '';
  for (let i = rng.int(2, 3); i > 0; i--) word += CONSONANTS[rng.int(0, CONSONANTS.length - 1)]! + VOWELS[rng.int(0, VOWELS.length - 1)]!;
  return rng.chance(0.5) ? word + CONSONANTS[rng.int(0, CONSONANTS.length - 1)]! : word;
}

const OPERATOR_GROUPS: readonly (readonly string[])[] = [
  ['+', '-', '*'],
  ['<', '<=', '>', '>='],
  ['==', '!='],
  ['===', '!=='],
  ['+=', '-=', '*='],
];
const KEYWORDS = new Set([
  'def', 'return', 'if', 'else', 'elif', 'for', 'in', 'while', 'not', 'and', 'or', 'None', 'True', 'False', 'len', 'range', 'min', 'max', 'abs',
  'function', 'export', 'const', 'let', 'of', 'null', 'undefined', 'true', 'false', 'Math', 'length', 'import', 'from', 'assert', 'test', 'new',
]);

/**
 * One random one-token change of `line`: a number moved by 1 or 2, an operator swapped within its
 * group, or a name swapped for another name of the file. Null when the line has nothing to change.
 */
function mutateLine(line: string, names: readonly string[], rng: Rng): string | null {
  const tokens = [...line.matchAll(/[A-Za-z_][A-Za-z_0-9]*|\d+|===|!==|[<>=!+\-*]=|[<>+\-*]/g)];
  const changes: { at: number; length: number; to: string }[] = [];
  for (const m of tokens) {
    const text = m[0];
    const at = m.index!;
    if (/^\d+$/.test(text)) {
      const n = Number(text);
      const to = String(rng.chance(0.5) || n < 2 ? n + rng.int(1, 2) : n - rng.int(1, 2));
      changes.push({ at, length: text.length, to });
    } else if (/^[A-Za-z_]/.test(text)) {
      const others = names.filter((n) => n !== text);
      if (!KEYWORDS.has(text) && others.length > 0) changes.push({ at, length: text.length, to: rng.pick(others) });
    } else {
      const group = OPERATOR_GROUPS.find((g) => g.includes(text));
      const others = group?.filter((op) => op !== text) ?? [];
      if (others.length > 0) changes.push({ at, length: text.length, to: rng.pick(others) });
    }
  }
  if (changes.length === 0) return null;
  const c = rng.pick(changes);
  return line.slice(0, c.at) + c.to + line.slice(c.at + c.length);
}

/** The names a source file defines and uses (identifiers that are not keywords), in order of first use. */
function fileNames(source: string): string[] {
  return [...new Set([...source.matchAll(/[A-Za-z_][A-Za-z_0-9]*/g)].map((m) => m[0]).filter((w) => !KEYWORDS.has(w)))];
}

const editorCall = (args: Record<string, string>) => formatTextAction('file_editor', args);

/** The id a repeat or a lookup sheet opens with: `<|im_start|>`, or the end of text where a tokenizer has none. */
function sequenceStart(tokenizer: Tokenizer): number {
  return tokenizer.specialTokens['<|im_start|>'] ?? tokenizer.eosTokenIds[0]!;
}

/**
 * A task of `programs` drawn with `rng`. A seed the options cannot make a task of (a bug kind
 * that needs more lines, say) is passed over for another: a drill only reads the program.
 * Options that make none are an error.
 */
function drawTask(rng: Rng, programs: DrillOptions['programs']): GeneratedTask {
  const { split, firstSeed, count, ...taskOptions } = programs;
  for (let attempt = 0; ; attempt++) {
    try {
      return generateSweGenTask(split, firstSeed + rng.int(0, count - 1), taskOptions);
    } catch (error) {
      if (attempt >= 20) throw error;
    }
  }
}

/** The drill of index `index` under `seed`: a pure function of both and the options. */
export function makeDrill(seed: number, index: number, options: DrillOptions = DEFAULT_DRILLS): Drill {
  const rng = new Rng(mixSeed(seed, index, 0xd811));
  const task = drawTask(rng, options.programs);
  const meta = task.metadata;
  const source = task.files[`repo/${meta.file}`]!;
  const extension = meta.file.slice(meta.file.lastIndexOf('.'));
  const file = rng.chance(options.renameFiles) ? `${madeUpWord(rng)}${extension}` : meta.file;
  const issue = task.files['issue.md']!.replaceAll(meta.file, file);
  const filePath = `${options.workdir}/${file}`;
  const tools = toolDescriptions('default');

  let stepsLeft = options.maxSteps;
  const messages: ChatMessage[] = [
    { role: 'system', content: compactSystemPrompt(tools.compactText) },
    { role: 'user', content: `${compactIssuePrompt(issue, options.workdir)}\n${stepsRemainingLine(stepsLeft)}` },
  ];
  const turn = (call: string, observation: string): void => {
    stepsLeft--;
    messages.push({ role: 'assistant', content: call }, { role: 'user', content: `${observation}\n${stepsRemainingLine(stepsLeft)}` });
  };

  let text = source;
  const lines = () => splitLines(text);
  const lineCount = lines().length;
  // The first line shown (1-based); drawn only where partial views are asked for, so that other drills stay as they were.
  const first = options.partialViews > 0 && lineCount > 2 && rng.chance(options.partialViews) ? rng.int(2, Math.ceil(lineCount / 2)) : 1;
  const numbered = (from: number, to: number) => lines().map((t, i) => ({ index: i, text: t })).slice(from - 1, to);
  turn(
    editorCall(first === 1 ? { command: 'view', path: filePath } : { command: 'view', path: filePath, view_range: `[${first}, ${lineCount}]` }),
    toolOutput('file_editor', fileView(filePath, numbered(first, lineCount))),
  );
  const names = fileNames(source);
  const turns = Math.min(rng.int(options.turns.min, options.turns.max), options.maxSteps - 2);
  for (let t = 0; t < turns; t++) {
    const kind = rng.weighted(options.mix);
    const all = lines();
    if (kind === 'lookup') {
      const a = rng.int(first, all.length);
      const b = Math.min(all.length, a + rng.int(0, 3));
      turn(editorCall({ command: 'view', path: filePath, view_range: `[${a}, ${b}]` }), toolOutput('file_editor', fileView(filePath, numbered(a, b))));
    } else if (kind === 'edit') {
      // A line shown whose trimmed text occurs once in the file, so that it is a valid old_str.
      const candidates = all.slice(first - 1).map((l) => l.trim()).filter((l) => l !== '' && countOccurrences(text, l) === 1);
      const oldStr = candidates.length > 0 ? rng.pick(candidates) : undefined;
      const newStr = oldStr === undefined ? null : mutateLine(oldStr, names, rng);
      // A random change may be the task's fix by chance: drills never show one.
      const isFix = meta.bugs.some((b) => b.after.trim() === newStr);
      if (oldStr === undefined || newStr === null || isFix || countOccurrences(text, newStr) > 0) continue;
      const { updated, observation } = replaceOnce(filePath, text, oldStr, newStr);
      turn(editorCall({ command: 'str_replace', path: filePath, old_str: oldStr, new_str: newStr }), toolOutput('file_editor', observation));
      text = updated;
    } else {
      const words = Array.from({ length: rng.int(options.echoWords.min, options.echoWords.max) }, () => (rng.chance(0.5) && names.length > 0 ? rng.pick(names) : madeUpWord(rng)));
      const cmd = `echo ${words.join(' ')}`;
      turn(formatTextAction('execute_bash', { cmd: `\n${cmd}\n` }), bashObservation({ exitCode: 0, output: `${words.join(' ')}\n`, timedOut: false }, 90));
    }
  }
  messages.push({ role: 'assistant', content: formatTextAction('finish', { command: 'submit' }) });
  return { messages, taskId: task.id, file };
}

/**
 * A repeated span, the canonical task that induction heads (the attention circuit that copies)
 * form on: `<|im_start|>` a run of random ids of the tokenizer's vocabulary (no added token), a
 * newline, and the same run again. Nothing in the first half can be predicted; everything in
 * the second half can, by copying. A pure function of seed and index.
 */
export function repeatIds(tokenizer: Tokenizer, seed: number, index: number, length: { min: number; max: number }): number[] {
  const rng = new Rng(mixSeed(seed, index, 0x5eba7));
  const added = new Set(Object.values(tokenizer.specialTokens));
  const ordinary = tokenizer.vocabSize - added.size;
  const n = rng.int(length.min, length.max);
  const span = Array.from({ length: n }, () => {
    let id = rng.int(0, ordinary - 1);
    while (added.has(id)) id = (id + 1) % tokenizer.vocabSize;
    return id;
  });
  return [sequenceStart(tokenizer), ...span, ...tokenizer.encode('\n'), ...span];
}

/**
 * A lookup sheet, the line probe's skill made dense: `<|im_start|>`, the editor's `cat -n` view
 * of a train-split program (as a drill's first view shows it), then lookups, each a line
 * `view_range [K, K]` and line K as the view numbers it. A lookup's line can only be had by
 * matching K against the view's numbers (K drawn at random, each line once at most), where a drill
 * has one such line a lookup turn among a few hundred tokens of chat. A pure function of seed,
 * index and the options.
 */
export function lookupIds(tokenizer: Tokenizer, seed: number, index: number, queries: { min: number; max: number }, drills: DrillOptions): number[] {
  const rng = new Rng(mixSeed(seed, index, 0x100c));
  const task = drawTask(rng, drills.programs);
  const file = task.metadata.file;
  const source = task.files[`repo/${file}`]!;
  const lines = splitLines(source);
  let text = fileView(`${drills.workdir}/${file}`, lines.map((line, i) => ({ index: i, text: line }))) + '\n';
  // Each line asked for once at most: a line asked for twice could be copied from its first answer.
  const unasked = lines.map((_, i) => i + 1);
  for (let q = Math.min(rng.int(queries.min, queries.max), lines.length); q > 0; q--) {
    const k = unasked.splice(rng.int(0, unasked.length - 1), 1)[0]!;
    text += `view_range [${k}, ${k}]\n${lineNumber(k)} ${lines[k - 1]}\n`;
  }
  return [sequenceStart(tokenizer), ...tokenizer.encode(text)];
}

/** A drill as the text the chat template renders (ChatML, with the added tokens' text): a tokenizer corpus's document. */
export function drillText(seed: number, index: number, options: DrillOptions = DEFAULT_DRILLS): string {
  const bytes = new ByteTokenizer();
  const renderer = new ChatRenderer(bytes, { enableThinking: false }).append(...makeDrill(seed, index, options).messages);
  return bytes.decode(renderer.ids);
}
