/**
 * The tokenizer a run trained with, found from what the run directory holds: a preset's
 * tokenizer folder or, without one, the byte-level tokenizer, else the newest checkpoint's tokenizer files (they travel
 * with the run), else the model directory the config names.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';

import { ByteTokenizer } from '../model/byte-tokenizer.js';
import { loadTokenizer } from '../model/hf-tokenizer.js';
import { RunDirectory } from '../train/run-dir.js';
import type { Tokenizer } from '../types/tokenizer.js';

export interface RunTokenizer {
  tokenizer: Tokenizer;
  /** Where it came from, for the page: 'byte-level (preset)' or a directory. */
  source: string;
}

interface ModelConfig {
  preset?: string;
  path?: string;
  /** A preset's own tokenizer folder (model.tokenizer). */
  tokenizer?: string;
}

export async function runTokenizer(dir: string, model: ModelConfig | undefined): Promise<RunTokenizer> {
  if (model?.preset !== undefined && model.tokenizer !== undefined) return { tokenizer: await loadTokenizer(model.tokenizer), source: model.tokenizer };
  if (model?.preset !== undefined) return { tokenizer: new ByteTokenizer(), source: `byte-level (preset ${model.preset})` };
  const run = new RunDirectory(dir);
  const checkpoints = (await run.checkpointSteps()).map((step) => run.checkpointDir(step)).reverse();
  const candidates = [...checkpoints, ...(model?.path !== undefined ? [model.path] : [])];
  const found = candidates.find((candidate) => existsSync(path.join(candidate, 'tokenizer.json')));
  // No candidate: loadTokenizer's own error (the missing tokenizer.json and the fix) says why.
  const source = found ?? candidates[0] ?? path.join(dir, 'checkpoints');
  return { tokenizer: await loadTokenizer(source), source };
}
