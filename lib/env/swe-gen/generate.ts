/**
 * One swe-gen task from a split, a seed and options: a file of small functions, one or two of
 * them given a bug some input shows, the issue that input makes, hidden and visible tests,
 * and the gold patch; every file of the task folder as text. The same arguments give the same
 * bytes: everything is drawn from the seed's stream (splits.ts), in a fixed order.
 */
import { internalError, invalidArg } from '../../errors.js';
import { countOccurrences } from '../tools/common.js';
import { candidateBugs, type BugKind } from './bugs.js';
import { sampleCases, type Cases } from './cases.js';
import { unifiedDiff } from './diff.js';
import { Draw } from './draw.js';
import { docText, instantiate, type FunctionInstance } from './instance.js';
import { issueText } from './issue.js';
import { parseSweGenTaskOptions, type SweGenTaskOptions } from './options.js';
import { functionName, type FunctionDef, type Language } from './program.js';
import { javascript } from './render-javascript.js';
import { python } from './render-python.js';
import type { Renderer, TestSpec } from './renderer.js';
import { streamSeed, taskId, type Split } from './splits.js';
import { MODULES, TEMPLATES } from './templates.js';

export const RENDERERS: Readonly<Record<Language, Renderer>> = { python, javascript };

/** Bumped whenever the same seed and options would give a different task. */
export const SWE_GEN_VERSION = 4;

/** One bug, as tools that need the fix without reading the patch want it. */
export interface SweGenBug {
  kind: BugKind;
  /** The function's name in the task's language. */
  function: string;
  /** 1-based line of `before` in the repository's (buggy) file. */
  line: number;
  /**
   * The buggy text, exactly one whole line that occurs once in the file, so it is a valid
   * str_replace old string. For a missing case it is the line the guard belongs above.
   */
  before: string;
  /** Its fixed text (for a missing case: the guard line, a newline, then `before`). */
  after: string;
}

/** task.json's `swe_gen`: the first bug's fields, then every bug under `bugs`. */
export interface SweGenMetadata extends SweGenBug {
  version: number;
  split: Split;
  seed: number;
  language: Language;
  /** The source file, relative to the repository. */
  file: string;
  bugs: SweGenBug[];
}

export interface GeneratedTask {
  id: string;
  /** Every file of the task folder: relative path -> text. */
  files: Record<string, string>;
  metadata: SweGenMetadata;
}

/** Attempts (each a fresh draw of functions) before a seed's options are judged impossible. */
const MAX_ATTEMPTS = 200;
/** Checks per visible test: two calls say enough and cost few bytes of the agent's context. */
const VISIBLE_CHECKS = 2;
/** Checks per hidden ordinary (pass-to-pass) test: enough of the function's use that a wrong fix fails some. */
const HIDDEN_CHECKS = 6;
/** Calls the issue shows: its example and a second one ("Same with ..."). */
const SHOWN_FAILURES = 2;
/**
 * Failing calls of each hidden issue test beyond those the issue shows: a patch that special-cases
 * the issue's examples instead of fixing the function fails them.
 */
const UNSEEN_FAILURES = 2;

interface PlacedBug {
  index: number;
  kind: BugKind;
  buggy: FunctionDef;
  cases: Cases;
}

const subDraw = (draw: Draw) => new Draw(draw.int(0, 0xffffffff));

/** A bug of `kind` in one of the functions not yet bugged, shown by some input; null if none can. */
function placeBug(instances: FunctionInstance[], taken: Set<number>, kind: BugKind, renderer: Renderer, draw: Draw): PlacedBug | null {
  const free = instances.map((_, i) => i).filter((i) => !taken.has(i));
  for (const index of draw.shuffle(free)) {
    const fixed = instances[index]!.def;
    for (const body of draw.shuffle(candidateBugs(fixed, kind))) {
      const buggy = { ...fixed, body };
      const cases = sampleCases(instances[index]!, buggy, renderer, subDraw(draw));
      if (cases.failing.length >= SHOWN_FAILURES + UNSEEN_FAILURES) return { index, kind, buggy, cases };
    }
  }
  return null;
}

/** The one changed line between the file with only this bug and the fixed file, or null. */
function changedLine(single: string, fixed: string): { before: string; after: string } | null {
  const a = single.split('\n');
  const b = fixed.split('\n');
  const d = a.findIndex((line, i) => line !== b[i]);
  if (d < 0) return null;
  if (a.length === b.length) return a.slice(d + 1).every((line, i) => line === b[d + 1 + i]) ? { before: a[d]!, after: b[d]! } : null;
  // a guard line missing: the rest is the same, one line down
  if (a.length + 1 !== b.length || !a.slice(d).every((line, i) => line === b[d + 1 + i])) return null;
  return { before: a[d]!, after: `${b[d]!}\n${a[d]!}` };
}

function attempt(split: Split, seed: number, language: Language, kinds: BugKind[], options: SweGenTaskOptions, draw: Draw): GeneratedTask | null {
  const renderer = RENDERERS[language];
  const count = draw.int(options.functions.min, options.functions.max);
  const instances = draw.shuffle(TEMPLATES).slice(0, count).map((t) => instantiate(t, draw));
  const module = draw.pick(MODULES);
  const fixedDefs = instances.map((i) => i.def);
  const fixed = renderer.source(fixedDefs);
  const fixedLines = fixed.split('\n').length - 1;
  // a guard left out makes the file one line shorter
  if (fixedLines < options.lines.min || fixedLines - kinds.length > options.lines.max) return null;

  const placed: PlacedBug[] = [];
  const taken = new Set<number>();
  for (const kind of kinds) {
    const bug = placeBug(instances, taken, kind, renderer, draw);
    if (!bug) return null;
    placed.push(bug);
    taken.add(bug.index);
  }
  const withBugs = (bugs: readonly PlacedBug[]) => renderer.source(fixedDefs.map((def, i) => bugs.find((b) => b.index === i)?.buggy ?? def));
  const buggy = withBugs(placed);
  const buggyLines = buggy.split('\n').length - 1;
  if (buggyLines < options.lines.min || buggyLines > options.lines.max) return null;

  const file = renderer.sourcePath(module);
  const bugs: SweGenBug[] = [];
  for (const bug of placed) {
    const change = changedLine(withBugs([bug]), fixed);
    if (!change || countOccurrences(buggy, change.before) !== 1 || countOccurrences(fixed, change.after) !== 1) return null;
    const line = buggy.slice(0, buggy.indexOf(change.before)).split('\n').length;
    bugs.push({ kind: bug.kind, function: functionName(instances[bug.index]!.def.words, language), line, ...change });
  }
  if (bugs.reduce((text, b) => text.replace(b.before, b.after), buggy) !== fixed) {
    throw internalError(`swe-gen: the bugs' before/after do not turn the file into its fix (seed ${seed})`);
  }

  // tests: each function's ordinary use (passes with or without the bug), and each bug's issue test
  const specs: TestSpec[] = [];
  for (const [i, instance] of instances.entries()) {
    const fn = functionName(instance.def.words, language);
    const bug = placed.find((b) => b.index === i);
    const cases = bug?.cases ?? sampleCases(instance, null, renderer, subDraw(draw));
    if (cases.passing.length > 0) specs.push({ fn, issue: false, checks: cases.passing.slice(0, HIDDEN_CHECKS) });
    else if (!bug) return null;
    if (bug) specs.push({ fn, issue: true, checks: bug.cases.failing.slice(0, SHOWN_FAILURES + UNSEEN_FAILURES) });
  }
  const ordinary = specs.filter((s) => !s.issue);
  if (ordinary.length === 0) return null;
  const visible = ordinary.map((s) => ({ ...s, checks: s.checks.slice(0, VISIBLE_CHECKS) }));

  const issue = issueText(
    placed.map((b) => ({ fn: functionName(instances[b.index]!.def.words, language), doc: docText(instances[b.index]!, renderer), failures: b.cases.failing.slice(0, SHOWN_FAILURES) })),
    file,
    draw,
  );
  const id = taskId(language, split, seed);
  const testPath = renderer.testPath(module);
  const metadata: SweGenMetadata = { version: SWE_GEN_VERSION, split, seed, language, file, ...bugs[0]!, bugs };
  const taskJson = {
    id,
    language,
    difficulty: bugs.length === 1 ? 'easy' : 'medium',
    test_command: renderer.testCommand(module),
    log_format: renderer.logFormat,
    fail_to_pass: specs.filter((s) => s.issue).map((s) => renderer.testId(module, s)),
    pass_to_pass: ordinary.map((s) => renderer.testId(module, s)),
    swe_gen: metadata,
  };
  const files: Record<string, string> = {
    'task.json': `${JSON.stringify(taskJson, null, 2)}\n`,
    'issue.md': issue,
    'gold.patch': unifiedDiff(file, buggy, fixed),
    gitignore: renderer.gitignore,
    [`repo/${file}`]: buggy,
    [`repo/${testPath}`]: renderer.testFile(module, visible),
    [`tests/${testPath}`]: renderer.testFile(module, specs),
  };
  for (const [name, text] of Object.entries(renderer.extraFiles(module))) files[`repo/${name}`] = text;
  return { id, files, metadata };
}

/** The first bug's kind and the language of a seed: they cycle, so that any kinds x languages consecutive seeds hold each pair once. */
function seedLanguage(seed: number, options: SweGenTaskOptions): Language {
  return options.languages[Math.floor(seed / options.kinds.length) % options.languages.length]!;
}

/** The id generateSweGenTask gives `seed` of `split`, without generating the task. */
export function sweGenTaskId(split: Split, seed: number, options: Partial<SweGenTaskOptions> = {}): string {
  return taskId(seedLanguage(seed, parseSweGenTaskOptions(options, 'options')), split, seed);
}

/** The task of `seed` in `split`; options are validated and defaulted (options.ts). */
export function generateSweGenTask(split: Split, seed: number, options: Partial<SweGenTaskOptions> = {}): GeneratedTask {
  const parsed = parseSweGenTaskOptions(options, 'options');
  const draw = new Draw(streamSeed(split, seed));
  // Small suites stay balanced: see seedLanguage.
  const { kinds: allowed } = parsed;
  const language = seedLanguage(seed, parsed);
  const kinds = [allowed[seed % allowed.length]!, ...Array.from({ length: parsed.bugs - 1 }, () => draw.pick(allowed))];
  for (let i = 0; i < MAX_ATTEMPTS; i++) {
    const task = attempt(split, seed, language, kinds, parsed, draw);
    if (task) return task;
  }
  throw invalidArg(
    'options',
    `allow no ${language} task with ${kinds.join(' and ')} bug(s) for ${split} seed ${seed} (${MAX_ATTEMPTS} draws tried: ${parsed.functions.min}-${parsed.functions.max} functions in ${parsed.lines.min}-${parsed.lines.max} lines)`,
    'allow more lines, other function counts, or more bug kinds',
  );
}
