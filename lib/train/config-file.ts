/**
 * A training config as people write it: a YAML or JSON file, then `key.path=value` overrides
 * from the command line (Hydra style). What comes out is still raw: resolveTrainConfig checks
 * and defaults it, taking relative input paths from the file's folder (`baseDir`).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

import { parse as parseYaml, YAMLParseError } from 'yaml';

import { invalidArg } from '../errors.js';

export interface LoadedTrainConfig {
  /** The config with the overrides applied, not yet checked (train() checks it). */
  config: Record<string, unknown>;
  /** Where its relative input paths are taken from: the file's folder. */
  baseDir: string;
  file: string;
}

/**
 * Fields that hold paths. An override of one is a path typed at the command line, so it is
 * taken from the working directory (made absolute here), not from the config file's folder.
 */
export const PATH_FIELDS = ['run.dir', 'model.path', 'tasks.path', 'tasks.repos', 'sampler.syncDir', 'sft.data'] as const;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `line L, column C` of a character offset, for JSON.parse's position-only errors. */
function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return `line ${before.length}, column ${before.at(-1)!.length + 1}`;
}

/** Parses a config file's text: JSON for .json, YAML (which JSON is a subset of) otherwise. */
export function parseConfigText(text: string, file: string): Record<string, unknown> {
  let value: unknown;
  if (path.extname(file).toLowerCase() === '.json') {
    try {
      value = JSON.parse(text);
    } catch (error) {
      const at = /position (\d+)/.exec((error as Error).message);
      throw invalidArg(file, `is not valid JSON${at ? ` at ${lineAndColumn(text, Number(at[1]))}` : ''}: ${(error as Error).message}`);
    }
  } else {
    try {
      // Duplicate keys are errors (uniqueKeys): in a config, the second of two would silently win.
      value = parseYaml(text, { uniqueKeys: true, prettyErrors: true });
    } catch (error) {
      if (error instanceof YAMLParseError) throw invalidArg(file, `is not valid YAML: ${error.message}`);
      throw error;
    }
  }
  if (!isObject(value)) throw invalidArg(file, `must hold an object of sections (run, model, tasks, …), not ${value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value}`);
  return value;
}

/**
 * Applies overrides to a raw config, in order: `a.b.c=value` sets a field (the value read as
 * YAML: 3, 1e-5, true, null, [0, 1], {kind: swe} and plain strings all work; quote a string
 * that looks like a number), `~a.b.c` removes one. A leading `+` or `++` (Hydra's "add") is
 * accepted and means the same as none: every field here is optional until checked.
 */
export function applyOverrides(config: Record<string, unknown>, overrides: readonly string[], cwd = process.cwd()): Record<string, unknown> {
  const result = structuredClone(config);
  for (const override of overrides) {
    const remove = override.startsWith('~');
    const body = override.replace(/^(~|\+\+|\+)/, '');
    const eq = body.indexOf('=');
    const key = remove ? body : body.slice(0, eq);
    if ((!remove && eq < 1) || (remove && body.includes('=')))
      throw invalidArg(`override ${JSON.stringify(override)}`, 'is not key.path=value (or ~key.path to remove a field)', 'e.g. run.steps=3 or rollout.temperature=0.8');
    const parts = key.split('.');
    if (parts.some((p) => p === '' || p === '__proto__' || p === 'constructor' || p === 'prototype'))
      throw invalidArg(`override ${JSON.stringify(override)}`, `has an empty or reserved name in ${JSON.stringify(key)}`);
    let target = result;
    for (const [i, part] of parts.slice(0, -1).entries()) {
      const next = target[part];
      if (next === undefined) target[part] = {};
      else if (!isObject(next)) throw invalidArg(`override ${JSON.stringify(override)}`, `goes into config.${parts.slice(0, i + 1).join('.')}, which is ${JSON.stringify(next)}, not a section`);
      target = target[part] as Record<string, unknown>;
    }
    const last = parts.at(-1)!;
    if (remove) {
      delete target[last];
      continue;
    }
    const text = body.slice(eq + 1);
    let value: unknown;
    try {
      value = text === '' ? '' : parseYaml(text);
    } catch (error) {
      throw invalidArg(`override ${JSON.stringify(override)}`, `has a value that does not parse: ${(error as Error).message.split('\n')[0]}`, 'quote strings with special characters');
    }
    if ((PATH_FIELDS as readonly string[]).includes(key)) {
      if (typeof value === 'string') value = path.resolve(cwd, value);
      // sft.data is a list of paths.
      else if (Array.isArray(value)) value = value.map((item: unknown) => (typeof item === 'string' ? path.resolve(cwd, item) : item));
    }
    target[last] = value;
  }
  return result;
}

/** Reads a YAML or JSON config file and applies the command line's overrides. */
export async function loadTrainConfig(file: string, overrides: readonly string[] = []): Promise<LoadedTrainConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw invalidArg(`the config ${file}`, `cannot be read: ${(error as Error).message}`, 'give a YAML or JSON file (see examples/)');
  }
  const absolute = path.resolve(file);
  return { config: applyOverrides(parseConfigText(text, absolute), overrides), baseDir: path.dirname(absolute), file: absolute };
}
