/**
 * Copy probes: does the model read? Greedy generations on drills of held-out programs (never
 * trained on), each cut where the next tokens can only be had by copying:
 *
 *   path          the first turn after the issue: file_editor's path is `<workdir>/<the file the issue names>`
 *   pathMadeUp    the same with the file renamed to a made-up word in the issue (nothing to recall)
 *   line          after a view_range [k, ...] call, the observation's first line: line k exactly, numbered
 *   quote         str_replace's old_str, given its opening words up to where it names one line: the whole line
 *
 * A probe passes only on an exact match. The rates are what `npm run pretrain:swe` reports
 * and the shipped checkpoint's README quotes.
 */
import { parseTextAction } from '../../env/actions.js';
import { lineNumber } from '../../env/tools/common.js';
import { ChatRenderer, type ChatMessage } from '../../model/chat-template.js';
import type { NativePolicy } from '../../model/native-policy.js';
import { DEFAULT_DRILLS, makeDrill, type DrillOptions } from './drills.js';

export const PROBE_KINDS = ['path', 'pathMadeUp', 'line', 'quote'] as const;
export type ProbeKind = (typeof PROBE_KINDS)[number];

export interface ProbeOptions {
  /** Probes of each kind. */
  count: number;
  /** Seeds the held-out drills (programs of the held-out split). */
  seed: number;
  /** The drills' programs and prompt; split is forced to heldout. */
  drills?: Partial<DrillOptions>;
}

export interface ProbeResult {
  /** Share of exact matches per kind. */
  rates: Record<ProbeKind, number>;
  count: number;
  /** A failing example per kind (what was wanted, what came), for reading. */
  misses: Partial<Record<ProbeKind, { wanted: string; got: string }>>;
}

interface Probe {
  kind: ProbeKind;
  prompt: number[];
  /** The generation passes when this returns true. */
  check: (text: string) => boolean;
  wanted: string;
  /** Tokens to generate at most. */
  maxTokens: number;
}

/** The ids of `messages` followed by the start of one more message (`role`'s turn opened, then `partial`). */
function cutIds(renderer: ChatRenderer, messages: readonly ChatMessage[], role: 'assistant' | 'user', partial: string, encode: (t: string) => number[]): number[] {
  renderer.append(...messages);
  if (role === 'assistant') {
    renderer.generationPrompt();
    return [...renderer.ids, ...encode(partial)];
  }
  return [...renderer.ids, ...encode(`<|im_start|>user\n${partial}`)];
}

/** The shortest opening of `line` (whole words and symbols) that no other line of `lines` starts with. */
function uniqueOpening(line: string, lines: readonly string[]): string | null {
  const cuts = [...line.matchAll(/[A-Za-z_0-9]+|\s+|[^A-Za-z_0-9\s]+/g)].map((m) => m.index! + m[0].length);
  for (const cut of cuts) {
    const opening = line.slice(0, cut);
    if (cut < line.length && lines.filter((l) => l.startsWith(opening)).length === 1) return opening;
  }
  return null;
}

function probesOf(policy: NativePolicy, options: ProbeOptions): Probe[] {
  const tokenizer = policy.tokenizer;
  const encode = (t: string) => tokenizer.encode(t);
  // The agent's first view is the whole file: so is every probe's.
  const base: DrillOptions = { ...DEFAULT_DRILLS, ...options.drills, partialViews: 0, programs: { ...DEFAULT_DRILLS.programs, ...options.drills?.programs, split: 'heldout' } };
  const renderer = () => new ChatRenderer(tokenizer, { enableThinking: false });
  const probes: Probe[] = [];
  for (let i = 0; i < options.count; i++) {
    for (const kind of ['path', 'pathMadeUp'] as const) {
      const drill = makeDrill(options.seed, i, { ...base, renameFiles: kind === 'path' ? 0 : 1, turns: { min: 0, max: 0 } });
      const wanted = `${base.workdir}/${drill.file}`;
      probes.push({
        kind,
        prompt: cutIds(renderer(), drill.messages.slice(0, 2), 'assistant', '', encode),
        check: (text) => parseTextAction(text)?.args.path === wanted,
        wanted,
        maxTokens: 64,
      });
    }
    // line: the first view, then a view_range call; the observation is cut after its header.
    const lookup = makeDrill(options.seed, i, { ...base, mix: { lookup: 1, edit: 0, echo: 0 }, turns: { min: 1, max: 1 } });
    const observation = lookup.messages[5]!.content as string;
    const header = observation.slice(0, observation.indexOf('\n', observation.indexOf('cat -n')) + 1);
    const firstLine = observation.slice(header.length).split('\n')[0]!;
    probes.push({
      kind: 'line',
      prompt: cutIds(renderer(), lookup.messages.slice(0, 5), 'user', header, encode),
      check: (text) => text.split('\n')[0] === firstLine,
      wanted: firstLine,
      maxTokens: 48,
    });
    // quote: the first view, then str_replace with old_str opened by its unique opening.
    const edit = makeDrill(options.seed, i, { ...base, mix: { lookup: 0, edit: 1, echo: 0 }, turns: { min: 1, max: 1 } });
    const call = edit.messages[4];
    const action = call?.role === 'assistant' && typeof call.content === 'string' ? parseTextAction(call.content) : null;
    const view = edit.messages[3]!.content as string;
    const fileLines = view.split('\n').filter((l) => /^ {0,5}\d+ /.test(l)).map((l) => l.slice(lineNumber(1).length + 1).trim());
    const oldStr = action?.name === 'file_editor' ? action.args.old_str : undefined;
    const opening = oldStr === undefined ? null : uniqueOpening(oldStr, fileLines);
    if (oldStr !== undefined && opening !== null) {
      const content = call!.content as string;
      const cut = content.indexOf('<parameter=old_str>') + '<parameter=old_str>'.length;
      probes.push({
        kind: 'quote',
        prompt: cutIds(renderer(), edit.messages.slice(0, 4), 'assistant', content.slice(0, cut) + opening, encode),
        check: (text) => text.startsWith(`${oldStr.slice(opening.length)}</parameter>`),
        wanted: oldStr,
        maxTokens: 48,
      });
    }
  }
  return probes;
}

/** Runs every probe greedily (batched by the policy's scheduler) and counts exact matches. */
export async function runCopyProbes(policy: NativePolicy, options: ProbeOptions): Promise<ProbeResult> {
  const probes = probesOf(policy, options);
  const outcomes = await Promise.all(
    probes.map(async (probe) => {
      const g = await policy.generate({ prompt: probe.prompt, maxTokens: probe.maxTokens, temperature: 0 });
      const text = policy.tokenizer.decode(g.tokens, { skipSpecialTokens: true });
      return { probe, text, pass: probe.check(text) };
    }),
  );
  const rates = {} as Record<ProbeKind, number>;
  const misses: ProbeResult['misses'] = {};
  for (const kind of PROBE_KINDS) {
    const mine = outcomes.filter((o) => o.probe.kind === kind);
    rates[kind] = mine.length === 0 ? NaN : mine.filter((o) => o.pass).length / mine.length;
    const miss = mine.find((o) => !o.pass);
    if (miss) misses[kind] = { wanted: miss.probe.wanted, got: miss.text };
  }
  return { rates, count: options.count, misses };
}
