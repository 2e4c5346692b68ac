/** `swerl tokenizer train <out> [inputs...]`: a byte-level BPE tokenizer for a domain, as a Hugging Face tokenizer.json. */
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

import type { Command } from 'commander';

import { SwerlError, invalidArg } from '../errors.js';
import { DOMAIN_PRE_SPLIT, trainBpe } from '../model/bpe-train.js';
import { tokenizerFromFiles } from '../model/hf-tokenizer.js';
import { DEFAULT_DRILLS, drillText } from '../train/pretrain/drills.js';
import { writeFileAtomic } from '../util/atomic.js';
import { integerArg, type Register } from './flags.js';

interface TrainFlags {
  vocabSize: number;
  minFrequency: number;
  drills: number;
  drillSeed: number;
  preSplit: string;
  force: boolean;
}

/** Every file under `target` (itself when a file), hidden folders skipped, in name order. */
async function filesUnder(target: string): Promise<string[]> {
  const stat = await fs.stat(target).catch(() => null);
  if (!stat) throw invalidArg('swerl tokenizer train', `names ${target}, which does not exist`);
  if (!stat.isDirectory()) return [target];
  const out: string[] = [];
  for (const entry of (await fs.readdir(target, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (entry.name.startsWith('.')) continue;
    const full = path.join(target, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(full)));
    else if (entry.isFile()) out.push(full);
  }
  return out;
}

/** The corpus: each text file a document (files with NUL bytes are skipped as binary), then the drills. */
async function* corpus(inputs: readonly string[], flags: TrainFlags, skipped: string[]): AsyncGenerator<string> {
  for (const input of inputs) {
    for (const file of await filesUnder(input)) {
      const bytes = await fs.readFile(file);
      if (bytes.includes(0)) {
        skipped.push(file);
        continue;
      }
      yield bytes.toString('utf8');
    }
  }
  for (let i = 0; i < flags.drills; i++) yield drillText(flags.drillSeed, i, DEFAULT_DRILLS);
}

async function trainAction(out: string, inputs: string[], flags: TrainFlags): Promise<number> {
  if (inputs.length === 0 && flags.drills === 0)
    throw invalidArg('swerl tokenizer train', 'has nothing to learn from', 'name text files or folders, or ask for reading drills (--drills 3000)');
  const target = path.resolve(out);
  if (existsSync(path.join(target, 'tokenizer.json')) && !flags.force)
    throw invalidArg('swerl tokenizer train', `would replace ${path.join(target, 'tokenizer.json')}`, 'pass --force, or name another folder');
  const started = performance.now();
  const skipped: string[] = [];
  const texts: string[] = [];
  for await (const text of corpus(inputs, flags, skipped)) texts.push(text);
  const result = trainBpe(texts, { vocabSize: flags.vocabSize, minFrequency: flags.minFrequency, preSplit: flags.preSplit });
  // Loaded back before anything is written: a file swerl cannot read is never left behind.
  const tokenizer = tokenizerFromFiles(result.files);
  let bytes = 0;
  let tokens = 0;
  for (const text of texts.slice(0, 200)) {
    bytes += Buffer.byteLength(text);
    tokens += tokenizer.encode(text).length;
  }
  await fs.mkdir(target, { recursive: true });
  for (const [name, contents] of Object.entries(result.files)) await writeFileAtomic(path.join(target, name), contents);
  for (const file of skipped) console.error(`skipped ${file}: binary (it holds NUL bytes)`);
  console.log(
    `wrote ${path.join(target, 'tokenizer.json')}: ${result.vocabSize} ids (256 bytes, ${result.merges} merges, ${result.vocabSize - 256 - result.merges} added tokens) ` +
      `from ${texts.length} documents, ${result.pieces.total} pieces (${result.pieces.distinct} distinct), ${(bytes / Math.max(1, tokens)).toFixed(2)} bytes a token, ` +
      `${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  if (result.vocabSize < flags.vocabSize) console.log(`(fewer than --vocab-size ${flags.vocabSize}: no pair is left that occurs --min-frequency ${flags.minFrequency} times within a piece)`);
  return 0;
}

export function addTokenizerCommand(program: Command, register: Register): void {
  const tokenizer = program.command('tokenizer').summary('train a domain tokenizer').description('Tokenizers for models trained from scratch.');
  tokenizer
    .command('train')
    .summary('train a byte-level BPE tokenizer, written as a Hugging Face tokenizer.json')
    .description(
      'Learns byte-level BPE merges from text files (each file a document; folders are read recursively) and/or reading drills ' +
        '(synthetic SWE episodes of train-split generated programs), and writes tokenizer.json and tokenizer_config.json into <out>. ' +
        'Pieces never cross words, digit runs, space runs or punctuation runs, so a line copied out of a file view tokenizes as it did ' +
        'there. ChatML\'s tokens are added, as Qwen3 has them.',
    )
    .argument('<out>', 'the folder to write into (a model directory, say)')
    .argument('[inputs...]', 'text files or folders')
    .option('--vocab-size <n>', 'ids in all (256 bytes, merges, 9 ChatML tokens)', integerArg('--vocab-size'), 2048)
    .option('--min-frequency <n>', 'a merge needs its pair this often', integerArg('--min-frequency'), 2)
    .option('--drills <n>', 'reading drills added to the corpus (train-split programs)', integerArg('--drills', 0), 0)
    .option('--drill-seed <n>', 'the drills\' seed', integerArg('--drill-seed', 0), 0)
    .option('--pre-split <regex>', 'the pre-split pattern (default: the domain split)', DOMAIN_PRE_SPLIT)
    .option('--force', 'replace a tokenizer.json already there', false)
    .addHelpText('after', `
Examples:
  swerl tokenizer train models/mine --drills 3000 --vocab-size 2048
  swerl tokenizer train models/mine src/ docs/ --vocab-size 4096`)
    .action(register(async (out: string, inputs: string[], flags: TrainFlags) => {
      try {
        return await trainAction(out, inputs, flags);
      } catch (error) {
        if (error instanceof SwerlError && error.code === 'ERR_SWERL_TOKENIZER') throw invalidArg('swerl tokenizer train', `made a tokenizer swerl cannot load back: ${error.message}`);
        throw error;
      }
    }));
}
