/**
 * `npm run pretrain:swe`: makes the shipped checkpoint, models/swe-reader, from its seed.
 *
 *   1. a domain tokenizer (byte-level BPE, words, digit runs, space runs and punctuation runs
 *      kept apart) trained on reading drills of train-split programs
 *   2. `swerl pretrain` of the qwen3-swe preset on reading drills (examples/pretrain-swe.json),
 *      every token trained, with copy probes on held-out programs along the way
 *   3. the last checkpoint's weights, config and tokenizer (no optimizer state) into the output
 *      folder, with a README of the run: its minutes, probe figures and machine
 *
 *   npm run pretrain:swe [-- --out models/swe-reader] [--dir runs/pretrain-swe] [--steps N] [--probes N] [--resume]
 *
 * --resume continues a run stopped part way (Ctrl-C, a lost machine) from its last checkpoint in --dir.
 */
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { trainBpe } from '../lib/model/bpe-train.js';
import { NativePolicy } from '../lib/model/native-policy.js';
import { drillText } from '../lib/train/pretrain/drills.js';
import { PROBE_KINDS, runCopyProbes } from '../lib/train/pretrain/probes.js';
import { resolvePretrainConfig } from '../lib/train/pretrain/options.js';
import { pretrain } from '../lib/train/pretrain/pretrain.js';
import { writeFileAtomic } from '../lib/util/atomic.js';
import { packageInfo } from '../lib/util/package-info.js';

const { values: args } = parseArgs({
  options: {
    out: { type: 'string' },
    dir: { type: 'string', default: path.join('runs', 'pretrain-swe') },
    steps: { type: 'string' },
    probes: { type: 'string', default: '200' },
    resume: { type: 'boolean', default: false },
  },
});
/** The tokenizer's corpus (drills of train-split programs, a seed of their own) and size. */
const TOKENIZER = { corpus: 3000, vocabSize: 2048 };
const out = path.resolve(args.out ?? path.join(packageInfo().root, 'models', 'swe-reader'));
const runDir = path.resolve(args.dir!);
const started = performance.now();
const minutes = () => (performance.now() - started) / 60_000;

const configFile = path.join(packageInfo().root, 'examples', 'pretrain-swe.json');
const raw = JSON.parse(await readFile(configFile, 'utf8')) as Record<string, any>;
const { corpus, vocabSize } = TOKENIZER;

// 1. The tokenizer, from drills of train-split programs (their own seed, never a training drill's).
const tokenizerDir = path.join(runDir, 'tokenizer');
await mkdir(tokenizerDir, { recursive: true });
// (The config's tokenizer is the one trained here: read the drill options without it.)
const { tokenizer: _trainedBelow, ...modelWithoutTokenizer } = raw.model;
const resolved = resolvePretrainConfig({ ...raw, run: { ...raw.run, dir: runDir }, model: modelWithoutTokenizer }).pretrain;
const { drills } = resolved;
const trained = trainBpe(Array.from({ length: corpus }, (_, i) => drillText(raw.run.seed + 1_000_003, i, drills)), { vocabSize });
for (const [name, text] of Object.entries(trained.files)) await writeFileAtomic(path.join(tokenizerDir, name), text);
console.log(`tokenizer: ${trained.vocabSize} ids (${trained.merges} merges) from ${corpus} drills (${minutes().toFixed(1)} min)`);

// 2. Pretraining.
const config = {
  ...raw,
  run: { ...raw.run, dir: runDir, resume: args.resume, ...(args.steps ? { steps: Number(args.steps) } : {}) },
  model: { ...raw.model, tokenizer: tokenizerDir },
};
const summary = await pretrain(config as Record<string, unknown>, { baseDir: path.dirname(configFile) });
if (summary.stopped || !summary.checkpoint) throw new Error(`pretraining stopped before its last step; the same command with --resume continues it from its last checkpoint in ${runDir}`);
// Training minutes from the run's own clock, which a resumed run carries on (this process's clock starts at the resume).
const pretrainMinutes = ((summary.last?.time as { elapsedSeconds?: number } | undefined)?.elapsedSeconds ?? minutes() * 60) / 60;

// 3. Probes on more held-out programs, then the checkpoint without its optimizer state.
const policy = await NativePolicy.load(summary.checkpoint, { threads: 2 });
const probes = await runCopyProbes(policy, { count: Number(args.probes), seed: 12345, drills: { ...drills, programs: { ...drills.programs, split: 'heldout' } } });
await rm(out, { recursive: true, force: true });
await policy.save(out, { optimizer: false });
const params = policy.config.native;
policy.dispose();
for (const f of ['swerl_state.json']) await rm(path.join(out, f), { force: true });
await copyFile(path.join(runDir, 'curves.svg'), path.join(out, 'curves.svg'));

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const machine = `${cpus().length} x ${cpus()[0]?.model ?? 'CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB`;
const readme = `# swe-reader

A Qwen3-architecture model (${params.numLayers} layers, hidden ${params.hiddenSize}, ${params.numHeads} heads of ${params.headDim}, rope_theta ${params.ropeTheta}, vocabulary ${params.vocabSize})
that can read the text of swerl's SWE episodes: it copies the file an issue names into a tool call, line K of a file
view into an observation, a line into old_str. It knows nothing of fixing bugs: its drills edit random lines at random
and never write a task's fix. It is where \`npm run demo:swe\` and the shipped SWE examples start.

Made by \`npm run pretrain:swe\` (examples/pretrain-swe.ts, config examples/pretrain-swe.json), seed ${raw.run.seed}:
a domain tokenizer trained on ${corpus} reading drills of train-split programs, then ${summary.steps} steps, every
token trained: ${Math.min(resolved.repeats.warmupSteps, summary.steps)} of ${resolved.repeats.warmupSequences} repeated-span sequences (the copying warm-up), then each step
${resolved.sequencesPerStep} drills, ${resolved.repeats.sequencesPerStep} repeated spans and ${resolved.lookups.sequencesPerStep} lookup sheets (a file view, then lines asked for by
number); ${pretrainMinutes.toFixed(1)} minutes on ${machine}.

Copy probes, greedy, on ${args.probes} drills of held-out programs each (lib/train/pretrain/probes.ts), exact match:

| probe | what is copied | rate |
|---|---|---|
| path | the file the issue names, into the first view's path | ${pct(probes.rates.path)} |
| pathMadeUp | the same, the file renamed to a made-up word | ${pct(probes.rates.pathMadeUp)} |
| line | line K of the view, after a view_range [K, ...] call | ${pct(probes.rates.line)} |
| quote | a whole line into old_str, given its opening up to where it is unique | ${pct(probes.rates.quote)} |

curves.svg: the drills' NLL and the probes during pretraining.
`;
await writeFile(path.join(out, 'README.md'), readme);
console.log(`\n${PROBE_KINDS.map((k) => `${k} ${pct(probes.rates[k])}`).join(', ')}\nwrote ${out} (${minutes().toFixed(1)} min)`);
