/**
 * Train and held-out tasks never share a seed. A task is named by its split and its seed
 * within the split (`gen-py-train-000123`); the generator draws from the split's own half of
 * the 32-bit seeds: train's seed s is s, held-out's is 2^31 + s. Two tasks of different splits
 * therefore never draw from the same stream, whatever seeds and options they were given.
 */
import { invalidArg } from '../../errors.js';
import type { Language } from './program.js';

export const SPLITS = ['train', 'heldout'] as const;
export type Split = (typeof SPLITS)[number];

/** Seeds of one split: 0 <= seed < SEEDS_PER_SPLIT. */
export const SEEDS_PER_SPLIT = 2 ** 31;

/** The 32-bit seed a split's seed draws from. */
export function streamSeed(split: Split, seed: number): number {
  if (!Number.isSafeInteger(seed) || seed < 0 || seed >= SEEDS_PER_SPLIT) throw invalidArg('seed', `is ${seed}; a split's seeds are whole numbers from 0 to ${SEEDS_PER_SPLIT - 1}`);
  return split === 'train' ? seed : SEEDS_PER_SPLIT + seed;
}

const SHORT: Record<Language, string> = { python: 'py', javascript: 'js' };

/** `gen-py-train-000123`: the language, the split and the seed (six digits at least). */
export function taskId(language: Language, split: Split, seed: number): string {
  return `gen-${SHORT[language]}-${split}-${String(seed).padStart(6, '0')}`;
}

const ID = /^gen-(py|js)-(train|heldout)-(\d{6,})$/;

/** The split and seed a generated task's id names, or null for another id. */
export function parseTaskId(id: string): { split: Split; seed: number } | null {
  const m = ID.exec(id);
  return m ? { split: m[2] as Split, seed: Number(m[3]) } : null;
}
