/**
 * Ids are trained only into a model of the tokenizer that made them. Trajectories played by the
 * real agent loop (the edit oracle on a generated task, in the local sandbox) carry their
 * tokenizer's id; SFT of a model with another tokenizer refuses them by file and line before
 * loading the model; with the same tokenizer they train. A preset reads a trained tokenizer
 * (model.tokenizer) and sizes its vocabulary to it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

import t from 'tap';

import { parseAgentLoopOptions } from '../../../../lib/agent/agent-loop.js';
import { runRollouts } from '../../../../lib/agent/rollout.js';
import { EditOraclePolicy } from '../../../../lib/agent/scripted-policy.js';
import { LocalSandboxBackend } from '../../../../lib/env/sandbox/local.js';
import { SweEnv } from '../../../../lib/env/swe-env.js';
import { writeSweGenSuite } from '../../../../lib/env/swe-gen/suite.js';
import { trainBpe } from '../../../../lib/model/bpe-train.js';
import { ByteTokenizer } from '../../../../lib/model/byte-tokenizer.js';
import { tokenizerFromFiles } from '../../../../lib/model/hf-tokenizer.js';
import { tokenizerId } from '../../../../lib/model/tokenizer-id.js';
import type { Tokenizer } from '../../../../lib/types/tokenizer.js';
import { RunDirectory } from '../../../../lib/train/run-dir.js';
import { sft } from '../../../../lib/train/sft/sft.js';
import { loadTrajectoryFile } from '../../../../lib/train/sft/trajectories.js';
import { DEFAULT_DRILLS, drillText } from '../../../../lib/train/pretrain/drills.js';
import { trajectory } from './fixtures.js';

const root = t.testdir({ sandboxes: {}, tasks: {}, tokenizer: {} });
const tokenizerDir = path.join(root, 'tokenizer');
const bpe = trainBpe(Array.from({ length: 150 }, (_, i) => drillText(5, i, DEFAULT_DRILLS)), { vocabSize: 700 });
for (const [name, text] of Object.entries(bpe.files)) writeFileSync(path.join(tokenizerDir, name), text);
const domain = tokenizerFromFiles(bpe.files);

/** The edit oracle's episodes on three generated tasks, with `tokenizer`, saved as a run's step 1. */
async function oracleRun(dir: string, tokenizer: Tokenizer = new ByteTokenizer()) {
  const suite = await writeSweGenSuite(path.join(root, 'tasks', path.basename(dir)), { count: 3, functions: { min: 1, max: 1 }, lines: { min: 4, max: 12 } });
  const backend = new LocalSandboxBackend({ root: path.join(root, 'sandboxes') });
  const env = { prompt: 'compact', maxSteps: 6 } as const;
  const trajectories = await runRollouts(
    suite.tasks.map((task, i) => ({ taskId: task.id, task, group: i, sample: 0, makeEnv: () => new SweEnv(task, backend, env) })),
    new EditOraclePolicy({ tokenizer }),
    { concurrency: 3, generationConcurrency: 0, retries: 0, agent: parseAgentLoopOptions({ maxTurns: 6, temperature: 0, maxTokensPerTurn: 512 }, 'agent') },
  );
  const run = new RunDirectory(dir);
  await run.create({}, false);
  await run.writeTrajectories(1, trajectories, () => ({}));
  return { trajectories, file: path.join(run.trajectories, 'step-1.jsonl.gz') };
}

const sftConfig = (dir: string, data: string, model: object) => ({
  run: { dir, steps: 2, seed: 1, progress: 'none' },
  model: { threads: 1, ...model },
  optimizer: { lr: 1e-3, warmupSteps: 1 },
  sft: { data: [data], sequencesPerStep: 2, minReward: 1 },
});

t.test('trajectories carry the id of the tokenizer that made them', async (t) => {
  const bytes = await oracleRun(path.join(root, 'bytes'));
  t.same(bytes.trajectories.map((x) => x.reward), [1, 1, 1], 'the oracle resolves the tasks');
  t.match(bytes.trajectories[0]!.tokenizer, /^byte-265:[0-9a-f]{12}$/);
  const words = await oracleRun(path.join(root, 'words'), domain);
  t.same(words.trajectories.map((x) => x.reward), [1, 1, 1], 'and does with the domain tokenizer');
  t.equal(words.trajectories[0]!.tokenizer, tokenizerId(domain));
  t.match(tokenizerId(domain), /^bpe-700:/);
  t.ok(words.trajectories[0]!.tokens.length < bytes.trajectories[0]!.tokens.length / 2, `${words.trajectories[0]!.tokens.length} tokens an episode with the domain tokenizer, ${bytes.trajectories[0]!.tokens.length} with bytes`);

  const refused = await loadTrajectoryFile(bytes.file, {}, tokenizerId(domain)).then(() => null, (e: Error) => e);
  t.match(refused, { code: 'ERR_SWERL_INVALID_ARG', message: new RegExp(`step-1.jsonl.gz:1 tokenizer is byte-265:\\w+, and the model's tokenizer is bpe-700:\\w+: the ids were made by another tokenizer`) });
  t.equal((await loadTrajectoryFile(words.file, {}, tokenizerId(domain))).examples.length, 3, 'the same tokenizer loads');
  t.equal(tokenizerId(tokenizerFromFiles(bpe.files)), tokenizerId(domain), 'the id is of the contents: loaded twice, the same');
});

t.test('SFT refuses another tokenizer\'s trajectories before a model is loaded, and trains on its own', async (t) => {
  const words = path.join(root, 'words');
  const bytes = path.join(root, 'bytes');
  const domainModel = { preset: 'qwen3-tiny', tokenizer: tokenizerDir };
  await t.rejects(sft(sftConfig(path.join(root, 'run-a'), bytes, domainModel)), { message: /tokenizer is byte-265:\w+, and the model's tokenizer is bpe-700/ });
  await t.rejects(sft(sftConfig(path.join(root, 'run-b'), words, { preset: 'qwen3-tiny' })), { message: /tokenizer is bpe-700:\w+, and the model's tokenizer is byte-265/ });
  const summary = await sft(sftConfig(path.join(root, 'run-c'), words, domainModel));
  t.equal(summary.steps, 2, 'the domain model trains on its own tokenizer\'s trajectories');
  t.ok(summary.checkpoint);
  const { NativePolicy } = await import('../../../../lib/model/native-policy.js');
  const policy = await NativePolicy.load(summary.checkpoint!, { threads: 1 });
  t.equal(policy.config.native.vocabSize, 700, 'a preset\'s vocabulary is its tokenizer\'s');
  t.equal(tokenizerId(policy.tokenizer), tokenizerId(domain), 'the checkpoint holds the tokenizer');
  policy.dispose();
});

t.test('records saved before the id existed load, counted as unlabeled', async (t) => {
  const dir = path.join(root, 'old', 'trajectories');
  mkdirSync(dir, { recursive: true });
  const { tokenizer: _, ...old } = { ...trajectory('<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n', [104, 105, 2 + 262], 1, 'submitted'), tokenizer: undefined };
  const record = { ...old, tokens: Array.from(old.tokens), mask: Array.from(old.mask), logprobs: Array.from(old.logprobs) };
  writeFileSync(path.join(dir, 'step-1.jsonl.gz'), gzipSync(`${JSON.stringify(record)}\n`));
  const loaded = await loadTrajectoryFile(path.join(dir, 'step-1.jsonl.gz'), {}, tokenizerId(domain));
  t.equal(loaded.examples.length, 1);
  t.equal(loaded.unlabeled, 1);
  await t.rejects(loadTrajectoryFile(path.join(dir, 'step-1.jsonl.gz').replace('step-1', 'nope')), /ENOENT/);
  const badDir = path.join(root, 'bad', 'trajectories');
  mkdirSync(badDir, { recursive: true });
  writeFileSync(path.join(badDir, 'step-1.jsonl.gz'), gzipSync(`${JSON.stringify({ ...record, tokenizer: 7 })}\n`));
  await t.rejects(loadTrajectoryFile(path.join(badDir, 'step-1.jsonl.gz')), { message: /step-1.jsonl.gz:1 tokenizer is 7; expected a tokenizer id string/ });
});
