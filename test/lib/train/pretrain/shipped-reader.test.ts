/**
 * The shipped reader, models/swe-reader, as a user gets it: it loads with its own BPE tokenizer
 * (a byte-exact round trip), its config is the qwen3-swe preset, and it still copies: the copy
 * probes on held-out drills of seeds its README's figures were not measured on.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import t from 'tap';

import { MODEL_PRESETS } from '../../../../lib/model/model-config.js';
import { NativePolicy } from '../../../../lib/model/native-policy.js';
import { tokenizerId } from '../../../../lib/model/tokenizer-id.js';
import { runCopyProbes } from '../../../../lib/train/pretrain/probes.js';

const READER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../models/swe-reader');

t.test('models/swe-reader loads with its tokenizer and copies on held-out drills', async (t) => {
  const policy = await NativePolicy.load(READER, { threads: 1 });
  t.teardown(() => policy.dispose());
  t.match(tokenizerId(policy.tokenizer), /^bpe-2048:/, 'its own 2048-id BPE tokenizer, not the byte one');
  const text = readFileSync(path.join(READER, 'README.md'), 'utf8');
  t.same(Array.from(new TextEncoder().encode(policy.tokenizer.decode(policy.tokenizer.encode(text)))), Array.from(new TextEncoder().encode(text)), 'a byte-exact round trip');
  const config = JSON.parse(readFileSync(path.join(READER, 'config.json'), 'utf8'));
  for (const [key, value] of Object.entries(MODEL_PRESETS['qwen3-swe'])) t.equal(config[key], value, `config.${key} is the preset's`);

  // 16 of each kind, greedy and deterministic; the README's figures (200 each, seed 12345) are path 100%, line 95%, quote 99.5%.
  const probes = await runCopyProbes(policy, { count: 16, seed: 777, drills: { programs: { split: 'heldout', firstSeed: 0, count: 100_000, functions: { min: 1, max: 2 }, lines: { min: 4, max: 20 } } } });
  t.comment(`probes: ${JSON.stringify(probes.rates)}`);
  t.ok(probes.rates.path >= 0.9, `path ${probes.rates.path} >= 0.9`);
  t.ok(probes.rates.pathMadeUp >= 0.9, `pathMadeUp ${probes.rates.pathMadeUp} >= 0.9`);
  t.ok(probes.rates.line >= 0.8, `line ${probes.rates.line} >= 0.8`);
  t.ok(probes.rates.quote >= 0.8, `quote ${probes.rates.quote} >= 0.8`);
});
