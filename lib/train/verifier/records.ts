/**
 * The verifier's labeled data: candidates from `swerl eval` (candidates.jsonl: {taskId, run,
 * problemStatement, patch, reward, messages}) and episodes of training runs
 * (trajectories/step-N.jsonl.gz: whole trajectories). The label is the environment's: reward
 * > 0 resolved the task (YES). Saved trajectories carry no problem statement: it comes from
 * the task file (--tasks) by task id, else from the <issue> of the episode's first user
 * message; the data's summary counts which.
 */
import { existsSync, statSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

import { invalidArg } from '../../errors.js';
import type { PromptMessage } from '../../agent/trajectory.js';
import { episodeChat } from '../../tts/judge.js';
import { jsonLines } from '../sft/lines.js';

export interface LabeledRecord {
  taskId: string;
  issue: string;
  patch: string;
  /** The episode's chat (the opening, then each turn and observation). */
  messages: PromptMessage[];
  /** reward > 0. */
  resolved: boolean;
  /** `file:line`. */
  where: string;
}

export type IssueSource = 'record' | 'tasks' | 'firstUserMessage';

export interface VerifierFileReport {
  file: string;
  /** Labeled records read. */
  records: number;
  candidates: number;
  trajectories: number;
  /** Episodes that ended in an infrastructure error: their reward is no label. */
  skipped: number;
}

export interface VerifierData {
  records: LabeledRecord[];
  files: VerifierFileReport[];
  /** Where each record's issue came from. */
  issueFrom: Record<IssueSource, number>;
}

const DATA_FILE = /\.jsonl(\.gz)?$/;
const FIX_SHAPE = 'give swerl eval\'s candidates.jsonl or a run\'s trajectories/step-N.jsonl.gz';

async function dataFiles(folder: string): Promise<string[]> {
  const names = (await fs.readdir(folder)).filter((name) => DATA_FILE.test(name) && statSync(path.join(folder, name)).isFile());
  // step-2 before step-10.
  return names.sort((a, b) => a.localeCompare(b, 'en', { numeric: true })).map((name) => path.join(folder, name));
}

/** A file, or a folder's candidates.jsonl and trajectories/ (an eval's output, a run directory), else its .jsonl(.gz) files. */
async function filesOf(target: string, field: string): Promise<string[]> {
  if (!existsSync(target)) throw invalidArg(field, `names ${target}, which does not exist`);
  if (!statSync(target).isDirectory()) return [target];
  const candidates = path.join(target, 'candidates.jsonl');
  const trajectories = path.join(target, 'trajectories');
  const known = [
    ...(existsSync(candidates) ? [candidates] : []),
    ...(existsSync(trajectories) && statSync(trajectories).isDirectory() ? await dataFiles(trajectories) : []),
  ];
  const files = known.length > 0 ? known : await dataFiles(target);
  if (files.length === 0) throw invalidArg(field, `names the folder ${target}, which holds no candidates.jsonl, trajectories/ or .jsonl(.gz) file`, FIX_SHAPE);
  return files;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function messagesOf(value: unknown, where: string): PromptMessage[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw invalidArg(`${where} messages`, 'must be an array of {role, content}');
  return value.map((m: unknown, i) => {
    if (!isObject(m) || typeof m.role !== 'string' || typeof m.content !== 'string') throw invalidArg(`${where} messages[${i}]`, `is ${JSON.stringify(m)?.slice(0, 80)}`, 'each message is {role, content} with strings');
    return { role: m.role, content: m.content };
  });
}

function turnsOf(value: unknown, where: string): { response: string; observation: string }[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw invalidArg(`${where} turns`, 'must be an array of {response, observation}');
  return value.map((turn: unknown, i) => {
    if (!isObject(turn) || typeof turn.response !== 'string') throw invalidArg(`${where} turns[${i}].response`, 'must be a string');
    return { response: turn.response, observation: typeof turn.observation === 'string' ? turn.observation : '' };
  });
}

/** The <issue> block of the episode's first user message (swerl's SWE prompt), else the whole message. */
function issueOfFirstUserMessage(messages: readonly PromptMessage[]): string | undefined {
  const first = messages.find((m) => m.role === 'user')?.content;
  if (first === undefined) return undefined;
  const match = /<issue>\n?([\s\S]*?)\n?<\/issue>/.exec(first);
  return match ? match[1]! : first;
}

export interface LoadVerifierOptions {
  /** Files or folders (--data). */
  paths: readonly string[];
  /** Problem statements by task id (from --tasks), for trajectories. */
  issues?: ReadonlyMap<string, string>;
  /** The field the paths came from, for errors (default --data). */
  field?: string;
}

/** Every labeled record of the paths, in order. */
export async function loadVerifierData(options: LoadVerifierOptions): Promise<VerifierData> {
  const field = options.field ?? '--data';
  if (options.paths.length === 0) throw invalidArg(field, 'names nothing', FIX_SHAPE);
  const files: string[] = [];
  for (const [i, p] of options.paths.entries()) for (const file of await filesOf(path.resolve(p), `${field}[${i}]`)) if (!files.includes(file)) files.push(file);

  const records: LabeledRecord[] = [];
  const reports: VerifierFileReport[] = [];
  const issueFrom: Record<IssueSource, number> = { record: 0, tasks: 0, firstUserMessage: 0 };
  for (const file of files) {
    const report: VerifierFileReport = { file, records: 0, candidates: 0, trajectories: 0, skipped: 0 };
    let withPatch = 0;
    for await (const { line, value } of jsonLines(file)) {
      const where = `${file}:${line}`;
      if (!isObject(value)) throw invalidArg(where, 'is not a JSON object', FIX_SHAPE);
      const trajectory = Array.isArray(value.tokens);
      if (!trajectory && typeof value.problemStatement !== 'string')
        throw invalidArg(where, 'is neither a candidate of swerl eval ({taskId, problemStatement, patch, reward, messages}) nor a saved trajectory ({taskId, messages, turns, patch, reward, ...})', FIX_SHAPE);
      if (value.termination === 'error') {
        report.skipped++;
        continue;
      }
      if (typeof value.taskId !== 'string' || value.taskId === '') throw invalidArg(`${where} taskId`, `is ${JSON.stringify(value.taskId)}`, 'each record names its task (a non-empty string)');
      if (typeof value.reward !== 'number' || !Number.isFinite(value.reward)) throw invalidArg(`${where} reward`, `is ${JSON.stringify(value.reward)}`, 'the label is the reward (> 0: resolved): a finite number');
      if (value.patch !== undefined && typeof value.patch !== 'string') throw invalidArg(`${where} patch`, `is ${JSON.stringify(value.patch)?.slice(0, 80)}`, 'a git diff as a string');
      if (typeof value.patch === 'string') withPatch++;
      const messages = episodeChat({ messages: messagesOf(value.messages, where), turns: turnsOf(value.turns, where) });

      let issue: string | undefined;
      let source: IssueSource;
      if (typeof value.problemStatement === 'string') [issue, source] = [value.problemStatement, 'record'];
      else if (options.issues?.has(value.taskId)) [issue, source] = [options.issues.get(value.taskId)!, 'tasks'];
      else [issue, source] = [issueOfFirstUserMessage(messages), 'firstUserMessage'];
      if (issue === undefined)
        throw invalidArg(where, `has no problem statement: task ${value.taskId} is not in the tasks given and the episode has no user message`, 'give the task file with --tasks');
      issueFrom[source]++;

      records.push({ taskId: value.taskId, issue, patch: (value.patch as string | undefined) ?? '', messages, resolved: value.reward > 0, where });
      report.records++;
      report[trajectory ? 'trajectories' : 'candidates']++;
    }
    if (report.records === 0)
      throw invalidArg(file, report.skipped > 0 ? `holds no labeled record: all ${report.skipped} ended in an infrastructure error (termination "error")` : 'holds no labeled record (it is empty)', `remove it from ${field}, or ${FIX_SHAPE}`);
    if (withPatch === 0) throw invalidArg(file, 'has no record with a patch: these are not SWE episodes', `the judge reads patches: ${FIX_SHAPE} of SWE tasks`);
    reports.push(report);
  }
  return { records, files: reports, issueFrom };
}
