/**
 * An SFT data set from the paths a config names: chat JSONL files, trajectory files, folders of
 * either, and run directories (their trajectories/). Each file's format is told by its first
 * record unless the config fixes it; every problem names the file (and line, and field).
 */
import { existsSync, statSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

import { invalidArg } from '../../errors.js';
import { tokenizerId } from '../../model/tokenizer-id.js';
import { loadChatFile, type ChatRenderSettings } from './chat.js';
import type { SftExample } from './example.js';
import { firstJsonLine } from './lines.js';
import { loadTrajectoryFile, type TrajectoryFilters } from './trajectories.js';

export const SFT_FORMATS = ['auto', 'chat', 'trajectories'] as const;
export type SftFormat = (typeof SFT_FORMATS)[number];

export interface SftDataOptions extends TrajectoryFilters, ChatRenderSettings {
  paths: readonly string[];
  format: SftFormat;
  /** The config field the paths came from, for errors (default sft.data). */
  field?: string;
}

export interface SftFileReport {
  file: string;
  format: 'chat' | 'trajectories';
  examples: number;
  /** Trajectories the filters left out. */
  filtered: number;
  /** Trajectories without a trained token. */
  untrained: number;
  /** Trajectories saved without their tokenizer's id (older runs): not checked against the model's tokenizer. */
  unlabeled: number;
  /** Failed turns (format or tool errors) kept in the context and out of the loss. */
  maskedTurns: number;
}

export interface SftData {
  examples: SftExample[];
  files: SftFileReport[];
}

const DATA_FILE = /\.jsonl(\.gz)?$/;

/** The files a path stands for: itself, a folder's .jsonl / .jsonl.gz files, or a run directory's trajectories. */
async function filesOf(target: string, field: string): Promise<string[]> {
  if (!existsSync(target)) throw invalidArg(field, `names ${target}, which does not exist`);
  if (!statSync(target).isDirectory()) return [target];
  const trajectories = path.join(target, 'trajectories');
  const folder = existsSync(trajectories) && statSync(trajectories).isDirectory() ? trajectories : target;
  const names = (await fs.readdir(folder)).filter((name) => DATA_FILE.test(name) && statSync(path.join(folder, name)).isFile());
  if (names.length === 0) throw invalidArg(field, `names the folder ${folder}, which holds no .jsonl or .jsonl.gz file`, 'give chat JSONL files, trajectories/step-N.jsonl.gz files, or a run directory');
  // step-2 before step-10.
  return names.sort((a, b) => a.localeCompare(b, 'en', { numeric: true })).map((name) => path.join(folder, name));
}

/** 'chat' or 'trajectories', from a file's first record. */
export async function detectFormat(file: string): Promise<'chat' | 'trajectories'> {
  const first = await firstJsonLine(file);
  if (first === undefined) throw invalidArg(file, 'is empty', 'remove it from sft.data, or fill it');
  const value = first.value as Record<string, unknown> | null;
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    // Tokens and a mask first: a saved trajectory also carries its opening prompt's `messages`.
    if (Array.isArray(value.tokens) && Array.isArray(value.mask)) return 'trajectories';
    if (Array.isArray(value.messages)) return 'chat';
  }
  throw invalidArg(
    `${file}:${first.line}`,
    'is neither a chat conversation ({"messages": [...]}) nor a saved trajectory ({"tokens": [...], "mask": [...], ...})',
    'fix the data, or set sft.format to "chat" or "trajectories"',
  );
}

/** Loads every example of the paths, in order (files in a folder by name, step-2 before step-10). */
export async function loadSftData(options: SftDataOptions): Promise<SftData> {
  const field = options.field ?? 'sft.data';
  if (options.paths.length === 0) throw invalidArg(field, 'is empty', 'name at least one chat JSONL file, trajectories file or run directory');
  const files: string[] = [];
  for (const [i, p] of options.paths.entries()) for (const file of await filesOf(path.resolve(p), `${field}[${i}]`)) if (!files.includes(file)) files.push(file);

  const examples: SftExample[] = [];
  const reports: SftFileReport[] = [];
  for (const file of files) {
    const format = options.format === 'auto' ? await detectFormat(file) : options.format;
    if (format === 'chat') {
      const loaded = await loadChatFile(file, options);
      if (loaded.length === 0) throw invalidArg(file, 'is empty', 'remove it from sft.data, or fill it');
      // A loop, not push(...loaded): spreading a file of 100k examples overflows the stack.
      for (const e of loaded) examples.push(e);
      reports.push({ file, format, examples: loaded.length, filtered: 0, untrained: 0, unlabeled: 0, maskedTurns: 0 });
    } else {
      const loaded = await loadTrajectoryFile(file, options, tokenizerId(options.tokenizer));
      if (loaded.examples.length + loaded.filtered + loaded.untrained === 0) throw invalidArg(file, 'is empty', 'remove it from sft.data, or fill it');
      for (const e of loaded.examples) examples.push(e);
      reports.push({ file, format, examples: loaded.examples.length, filtered: loaded.filtered, untrained: loaded.untrained, unlabeled: loaded.unlabeled, maskedTurns: loaded.maskedTurns });
    }
  }
  const filtersSet = options.minReward !== undefined || options.terminations !== undefined;
  if (filtersSet && !reports.some((r) => r.format === 'trajectories'))
    throw invalidArg('sft.minReward / sft.terminations', 'filter trajectories, and the data holds none (only chat files)', 'remove the filters');
  if (examples.length === 0) {
    const filtered = reports.reduce((s, r) => s + r.filtered, 0);
    const untrained = reports.reduce((s, r) => s + r.untrained, 0);
    throw invalidArg(field, `leaves no example to train on: ${filtered} record(s) filtered out (sft.minReward / sft.terminations), ${untrained} without a trained token`, 'loosen the filters or add data');
  }
  return { examples, files: reports };
}
