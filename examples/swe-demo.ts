/**
 * `npm run demo:swe`: the SWE recipe end to end on CPU, measured as a paper would, in real bwrap
 * sandboxes with the four tools and the repositories' tests as reward, on generated tasks
 * (swe-gen), from the shipped checkpoint (models/swe-reader: a Qwen3-architecture model that
 * can read: it copies the file an issue names and the lines of a view, and knows nothing of
 * fixing bugs):
 *
 *   0. suites: a curriculum's tiers of train-split tasks (RL pools and dev slices), SFT tasks (of
 *      the default distribution, or each tier's kinds: SFT_TASKS) and a held-out suite of held-out
 *      seeds whose programs no train task has; each demo seed its own (taskSeedsOf)
 *   1. the edit oracle (view, str_replace, run the issue's call, finish) plays every SFT task with
 *      the model's tokenizer, a share of them first trying an edit that changes nothing and
 *      reading the editor's refusal (RECOVERY); SFT on those trajectories, the refused turns
 *      masked out of the loss (tasks of their own: RL never sees them)
 *   2. RFT, Nebius's rejection fine-tuning: the SFT policy plays every task of the RL pools
 *      (every tier) rftSamples times at RFT_TEMPERATURE, and again, rftSamples times a round for
 *      RFT_EXTRA_ROUNDS rounds, each task none of whose samples resolved yet; SFT from the SFT
 *      checkpoint on the episodes that resolved beside the oracle's
 *   3. from the RFT checkpoint, on new tasks every step (RL_POOL 'fresh'; or on the tier pools,
 *      in the tier placement picks from RL_START_TIER on), GRPO++ (rlTasks tasks a step,
 *      rlSamples samples each, one optimizer step on every group whose samples scored
 *      differently) and continued RFT, for as many episodes as GRPO++ played
 *
 * The held-out resolve rate (greedy, with a Wilson 95% interval) after every phase, GRPO++ against
 * continued RFT paired per task with McNemar's exact test (pooled over --seeds), and beside them
 * the memorization baseline (the fix seen most often in training for the buggy line, told which
 * line it is) and the held-out tasks whose fix never occurs in training. No held-out task enters
 * training or picks a checkpoint: each phase's last checkpoint is taken, and the curriculum
 * advances on train-seed dev slices. Everything goes to <dir>/demo.json and <dir>/demo.svg; each
 * phase is a train() run of its own config.json. A finished seed leaves <dir>/seed-N/result.json:
 * run again into the same --dir (after an interrupt, or with more --seeds) and it is read, not
 * rerun, when every setting matches; a seed left unfinished starts over. With --from DIR a seed
 * takes its suites' SFT and RFT phases from DIR/seed-N (a seed of a run whose settings before RL
 * are these, finished or stopped after its RFT phase: its before-rl.json) and runs only the RL
 * arms: one command to try an RL setting on the same RFT checkpoints, with every number the demo
 * reports. Where only GRPO++'s own settings differ
 * (--rl-lr, --rl-mini-batches, --rl-epochs, --rl-entropy-coef, --rl-partial-credit,
 * --rl-empty-patch-penalty, --rl-estimator, --rl-resample-rounds) and GRPO++ plays as many episodes as it did
 * there, the continued-RFT arm is DIR's too (the same checkpoint, tasks, episode count and
 * settings: training it again would differ only by sampling noise), so only GRPO++ runs.
 *
 *   npm run demo:swe [-- --quick | --size smoke|quick|small|full] [--seeds 1,2,3] [--model DIR] [--dir DIR] [--device cpu|cuda]
 *                    [--rl-steps N] [--rl-lr X]   (GRPO++'s steps, whose episodes continued RFT then plays, and its learning rate: 5e-5 by default)
 *                    [--rl-tasks N] [--rl-samples N]   (an RL step's tasks, and the samples of each: its groups and their size)
 *                    [--rl-pool fresh|all|unsolved]   (the RL arms' tasks: new ones every step (default), the tiers' pool tasks, or those RFT's samples did not resolve every time)
 *                    [--rl-temperature T]   (both RL arms' sampling temperature, 1 by default; GRPO++'s loss reads its logprobs at T)
 *                    [--rl-mini-batches N] [--rl-resample-rounds N]   (GRPO++'s optimizer steps a step, and its dynamic-sampling rounds: 0 plays one round)
 *                    [--rl-epochs N]   (GRPO++'s passes over a step's batch: PPO epochs, each pass clipped against the sampler's logprobs)
 *                    [--rl-entropy-coef=X]   (GRPO++'s entropy coefficient: the loss adds -X x the mixed groups' token entropy; 0 by default; a negative X needs the =)
 *                    [--rl-partial-credit X]   (GRPO++'s credit for an unresolved episode: X x its patch's similarity to the gold patch, SWE-RL's signal; 0, DeepSWE's binary reward, by default)
 *                    [--rl-empty-patch-penalty X]   (GRPO++'s reward for an unresolved episode that changed no file: -X; 0 by default)
 *                    [--rl-estimator rloo|maxrl]   (GRPO++'s advantages: DeepSWE's leave-one-out (default), or MaxRL's, which weighs a task by about 1 over its solve rate)
 *                    [--rft-extra-rounds N]   (RFT's sampling rounds after the first, each playing again the pool tasks none of whose samples resolved yet: 2 by default)
 *                    [--rft-continued-distinct]   (continued RFT learns each distinct resolved episode of a task once, not every copy a low-entropy policy samples)
 *                    [--rl-start-tier NAME]   (the curriculum tier both RL arms start at; placement from the first tier by default)
 *                    [--sft-tasks default|tiers]   (the oracle's SFT tasks: all from the default distribution, or each tier's own kinds)
 *                    [--sft-recover-elsewhere X]   (the share of recovering oracle episodes whose refused copy is of another line than the buggy one: 1 by default, 0 copies the buggy line)
 *                    [--sft-retry X]   (the share of one-bug SFT tasks whose oracle episode first makes a wrong fix, sees the issue's call print the wrong value, and fixes it: 0 by default)
 *                    [--from DIR]   (the SFT and RFT phases of DIR's seeds, run with the same settings before RL: only the RL arms run)
 */
import { existsSync, readFileSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { cpus } from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual, parseArgs } from 'node:util';

import { runRollouts } from '../lib/agent/rollout.js';
import { EditOraclePolicy } from '../lib/agent/scripted-policy.js';
import { maskTurns } from '../lib/agent/trajectory.js';
import { parseAgentLoopOptions } from '../lib/agent/agent-loop.js';
import { boundedNumberArg, integerArg, positiveNumberArg } from '../lib/cli/flags.js';
import { createSandboxBackend } from '../lib/env/sandbox/backends.js';
import type { SandboxBackend } from '../lib/env/sandbox/sandbox.js';
import { SweEnv } from '../lib/env/swe-env.js';
import { writeSweGenSuite } from '../lib/env/swe-gen/index.js';
import { SEEDS_PER_SPLIT } from '../lib/env/swe-gen/splits.js';
import type { Task } from '../lib/env/task.js';
import { formatRate, pairedComparison, rateOf, type Outcomes, type RateSummary } from '../lib/eval/compare.js';
import { evaluatePolicy } from '../lib/eval/evaluate.js';
import { memorizationBaseline } from '../lib/eval/memorization.js';
import { NativePolicy } from '../lib/model/native-policy.js';
import { MAX_COEF } from '../lib/math/policy-loss.js';
import { MAX_TEMPERATURE, MIN_TEMPERATURE } from '../lib/model/native-policy-options.js';
import { relativeWeightChange } from '../lib/model/weight-change.js';
import { native, pinBlasToOneThread } from '../lib/native.js';
import { PRESETS } from '../lib/train/algorithms.js';
import { tierOptions, tierSeeds, unsolvedPools, type CurriculumConfig } from '../lib/train/curriculum.js';
import { renderChartsSvg } from '../lib/train/plots.js';
import { sampleUntilResolved, type SamplingRound } from '../lib/train/rft/sample.js';
import { RunDirectory } from '../lib/train/run-dir.js';
import { train } from '../lib/train/trainer.js';
import { writeFileAtomic, writeJsonAtomic } from '../lib/util/atomic.js';
import { mixSeed } from '../lib/util/random.js';
import type { Tokenizer } from '../lib/types/tokenizer.js';
import { packageInfo } from '../lib/util/package-info.js';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    size: { type: 'string' },
    seed: { type: 'string' },
    seeds: { type: 'string' },
    model: { type: 'string' },
    device: { type: 'string' },
    dir: { type: 'string' },
    'rl-steps': { type: 'string' },
    'rl-lr': { type: 'string' },
    'rl-tasks': { type: 'string' },
    'rl-samples': { type: 'string' },
    'rl-pool': { type: 'string' },
    'rl-temperature': { type: 'string' },
    'rl-mini-batches': { type: 'string' },
    'rl-epochs': { type: 'string' },
    'rl-resample-rounds': { type: 'string' },
    'sft-tasks': { type: 'string' },
    'sft-retry': { type: 'string' },
    'sft-recover-elsewhere': { type: 'string' },
    'rl-start-tier': { type: 'string' },
    'rl-entropy-coef': { type: 'string' },
    'rl-partial-credit': { type: 'string' },
    'rl-empty-patch-penalty': { type: 'string' },
    'rl-estimator': { type: 'string' },
    'rft-continued-distinct': { type: 'boolean', default: false },
    'rft-extra-rounds': { type: 'string' },
    from: { type: 'string' },
  },
});
const quick = args.quick!;
const seeds = (args.seeds ?? args.seed ?? '1').split(',').map((s) => {
  const n = Number(s);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--seeds has ${JSON.stringify(s)}; give whole numbers, e.g. --seeds 1,2,3`);
  return n;
});
const model = path.resolve(args.model ?? path.join(packageInfo().root, 'models', 'swe-reader'));
const device = args.device ?? (native().buildInfo().cuda ? 'cuda' : 'cpu');
if (device !== 'cpu' && !/^cuda(:\d+)?$/.test(device)) throw new Error(`--device is ${device}; use cpu or cuda`);
const root = path.resolve(args.dir ?? path.join('runs', `swe-demo-${new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19)}`));
/** A finished demo run whose seeds' SFT and RFT phases this run reuses (--from), if any. */
const from = args.from === undefined ? undefined : path.resolve(args.from);
if (from !== undefined && !existsSync(from)) throw new Error(`--from is ${args.from}: no such directory; give the --dir of a finished demo:swe run`);
if (from === root) throw new Error(`--from and --dir are both ${root}; give the RL arms a --dir of their own`);

/**
 * Each phase's budget: --size full (the measurement: 300 held-out tasks), small (100 held-out
 * tasks, fewer of everything: under an hour a seed on 2 cores), quick (--quick: a few minutes,
 * too short to learn anything), or smoke (a task or two a phase: that every phase runs, for the
 * tests and for a first look at a new --model).
 */
const SIZES = {
  smoke: { pool: 1, dev: 1, heldout: 2, sftSteps: 2, sftBatch: 2, rftSamples: 2, rftSteps: 2, rlSteps: 1, rlTasks: 1, rlSamples: 2, checkEvery: 1 },
  quick: { pool: 6, dev: 4, heldout: 12, sftSteps: 12, sftBatch: 8, rftSamples: 2, rftSteps: 6, rlSteps: 1, rlTasks: 4, rlSamples: 2, checkEvery: 1 },
  small: { pool: 100, dev: 16, heldout: 100, sftSteps: 200, sftBatch: 16, rftSamples: 2, rftSteps: 100, rlSteps: 8, rlTasks: 32, rlSamples: 4, checkEvery: 2 },
  full: { pool: 200, dev: 32, heldout: 300, sftSteps: 300, sftBatch: 16, rftSamples: 2, rftSteps: 150, rlSteps: 8, rlTasks: 32, rlSamples: 4, checkEvery: 1 },
};
const sizeName = quick ? 'quick' : (args.size ?? 'full');
if (!(sizeName in SIZES)) throw new Error(`--size is ${JSON.stringify(sizeName)}; use one of ${Object.keys(SIZES).join(', ')}`);
const intFlag = (name: keyof typeof args, min = 1) => (args[name] === undefined ? undefined : integerArg(`--${name}`, min)(args[name] as string));
/** The RL arms' budget from the command line, over the size's (a group of one sample is never mixed: at least 2). */
const RL_BUDGET = { rlSteps: intFlag('rl-steps'), rlTasks: intFlag('rl-tasks'), rlSamples: intFlag('rl-samples', 2) };
const SIZE = { ...SIZES[sizeName as keyof typeof SIZES], ...Object.fromEntries(Object.entries(RL_BUDGET).filter(([, n]) => n !== undefined)) };
const SFT_TASK_SOURCES = ['default', 'tiers'] as const;
/**
 * Where the oracle's SFT tasks come from: 'default', all of them from the default distribution,
 * every kind alike, as the held-out tasks are; or 'tiers', each curriculum tier's pool-sized share
 * of its own kinds (so the kinds the first tiers share are shown most: operator and comparison 5x
 * as often as wrong-variable and missing-case). On 3 seeds 'default' took SFT from 30.7% to 38.3%
 * held out and RFT from 34.7% to 43.3% (docs/swe-recipe.md).
 */
const SFT_TASKS = (args['sft-tasks'] ?? 'default') as (typeof SFT_TASK_SOURCES)[number];
if (!SFT_TASK_SOURCES.includes(SFT_TASKS)) throw new Error(`--sft-tasks is ${JSON.stringify(args['sft-tasks'])}; use one of ${SFT_TASK_SOURCES.join(', ')}`);
const RL_POOLS = ['fresh', 'all', 'unsolved'] as const;
/**
 * The tasks the RL arms draw from (both arms the same): 'fresh', a pool of their own of new train
 * seeds of the default distribution (the held-out tasks'), as many as GRPO++'s rounds draw
 * (FRESH_POOL_SIZE), so no step plays a task an earlier step played; 'all', the curriculum
 * tiers' pool tasks, each arm placing itself in the tiers; or 'unsolved', those less the ones
 * RFT's sampling resolved in every one of its samples (unsolvedPools). On a 100-task tier pool
 * each task comes back every 3 steps and both arms' train reward climbs while their held-out rate
 * stays flat; on fresh pools GRPO++ went from 40.7% to 45.0% and continued RFT from 39.3% to
 * 43.3% held out, 3 seeds (docs/swe-recipe.md).
 */
const RL_POOL = (args['rl-pool'] ?? 'fresh') as (typeof RL_POOLS)[number];
if (!RL_POOLS.includes(RL_POOL)) throw new Error(`--rl-pool is ${JSON.stringify(args['rl-pool'])}; use one of ${RL_POOLS.join(', ')}`);

/** The default distribution (the held-out tasks and the last tier): one or two functions of 4-20 lines, every bug kind, both languages. */
const KNOBS = { functions: { min: 1, max: 2 }, lines: { min: 4, max: 20 } };
const CURRICULUM: CurriculumConfig = {
  tiers: [
    { name: 'operators', kinds: ['operator', 'comparison'], languages: ['python'], functions: { min: 1, max: 1 } },
    { name: 'bounds', kinds: ['operator', 'comparison', 'off-by-one'] },
    { name: 'all' },
  ],
  advanceAt: 0.5,
  devTasks: SIZE.dev,
  checkEvery: SIZE.checkEvery,
  // Each phase starts where its policy does not already pass a dev slice.
  placement: true,
};
const TIER_NAMES = CURRICULUM.tiers.map((tier) => tier.name);
/**
 * The tier both RL arms start at (placement then goes on from it), or undefined: from the first.
 * Placement alone leaves an RFT policy in 'bounds' (its dev slice of operator, comparison and
 * off-by-one bugs under advanceAt), so the arms would learn on the kinds it already fixes best
 * rather than on the held-out tasks' distribution, which is the last tier's.
 */
const RL_START_TIER = args['rl-start-tier'];
if (RL_START_TIER !== undefined && !TIER_NAMES.includes(RL_START_TIER)) throw new Error(`--rl-start-tier is ${JSON.stringify(RL_START_TIER)}; use one of ${TIER_NAMES.join(', ')}`);
if (RL_START_TIER !== undefined && RL_POOL === 'fresh') throw new Error(`--rl-start-tier names a curriculum tier, and --rl-pool fresh (the default) has none: its tasks are the default distribution's; drop --rl-start-tier, or give --rl-pool all`);
/** Held-out seeds a demo seed asks for: SIZE.heldout, and room for those a train task shares a program with (dropped). */
const HELDOUT_SEEDS = Math.ceil(SIZE.heldout * 1.15) + 4;
/**
 * Where a demo seed's tasks start in each split: every seed has tasks of its own (its curriculum
 * pools, dev slices and SFT tasks; its held-out tasks), so three seeds measure on three times
 * as many held-out tasks, not the same ones thrice.
 */
const TASK_SEEDS_PER_SEED = Math.max(CURRICULUM.tiers.length * (2 * SIZE.pool + SIZE.dev), HELDOUT_SEEDS);
const taskSeedsOf = (seed: number) => seed * TASK_SEEDS_PER_SEED;
const ENV = { prompt: 'compact', maxSteps: 6, rewardTimeoutMs: 60_000 };
const AGENT = { maxTurns: 6, promptBudget: 1024, responseBudget: 2048, maxTokensPerTurn: 256, trajectoryTimeoutMs: 300_000, stepTimeoutMs: 30_000 };
const CONCURRENCY = Math.max(8, 4 * cpus().length);
/**
 * The local sandboxes' options: each sandbox's files on a tmpfs (as root), not an image made and
 * loop-mounted for it: a generated task's repository is a few KB, and two sandboxes an episode
 * saved ~60 ms of CPU (bench:oracle-episodes --disk).
 */
const SANDBOX = { disk: 'tmpfs' } as const;
/**
 * GRPO++'s optimizer steps on each step's episodes (PPO's mini-batches, clipped): one, over every
 * mixed group of the step. The policy gradient's norm is 1/10-1/100 of SFT's and a fresh Adam
 * moves each weight by about lr whatever it is, so an update on 2 of a step's 8 groups (4
 * mini-batches of 8 x 8) stepped as far along a noisier direction. One update on the 2-16 mixed
 * groups of 32 tasks x 4 samples at lr 1e-4 took GRPO++ to or over its RFT start on each of 3 seeds
 * after SFT by tier; after SFT on the default distribution it falls 2.6 points. From the RFT
 * checkpoints of 16 x 8 at lr 1e-4, 8 updates a step (as many as continued RFT takes) moved the
 * weights five times as far and ended 54 and 50 on seeds 2 and 3 but 40 on seed 1 (from 51), and
 * 16 a step 37 on seed 3, entropy rising past 0.2; an entropy penalty held it under 0.15 and
 * seed 1 still fell to 40 (docs/swe-recipe.md).
 */
const RL_MINI_BATCHES = intFlag('rl-mini-batches') ?? 1;
/**
 * GRPO++'s entropy coefficient (the loss's eta: it adds -eta x the weighted token entropy of the
 * mixed groups). DeepSWE's GRPO++ has none; a negative one penalizes entropy, which the policy
 * gradient's pushes against failed samples otherwise raise as the policy moves.
 */
const RL_ENTROPY_COEF = args['rl-entropy-coef'] === undefined ? 0 : boundedNumberArg('--rl-entropy-coef', -MAX_COEF, MAX_COEF)(args['rl-entropy-coef']);
/**
 * GRPO++'s credit for an episode the tests did not resolve (algorithm.partialCredit): X x its
 * patch's similarity to the gold patch, so the groups whose samples all failed rank their
 * patches too. Continued RFT keeps resolved episodes only, so it has no use for it.
 */
const RL_PARTIAL_CREDIT = args['rl-partial-credit'] === undefined ? 0 : boundedNumberArg('--rl-partial-credit', 0, 0.99)(args['rl-partial-credit']);
/**
 * GRPO++'s reward for an unresolved episode that changed no file (algorithm.emptyPatchPenalty):
 * -X, so a group whose samples all failed pushes its lines copied over themselves, which the
 * editor refuses, below its attempts. Continued RFT keeps resolved episodes only: no use for it.
 */
const RL_EMPTY_PATCH_PENALTY = args['rl-empty-patch-penalty'] === undefined ? 0 : boundedNumberArg('--rl-empty-patch-penalty', 0, 1)(args['rl-empty-patch-penalty']);
/**
 * GRPO++'s advantage estimator: 'rloo' (DeepSWE's leave-one-out: R minus the others' mean) or
 * 'maxrl' (MaxRL's: (R - mean) / mean). With a 0/1 reward and one update a step, rloo's expected
 * gradient is continued RFT's (each task's grad p; docs/swe-recipe.md): the arms can differ only
 * by step size and noise. maxrl's is w(p) grad p, a task solved at rate p weighing from 1 (always
 * solved) to n - 1 (rarely): a direction of its own, toward the tasks the policy seldom solves.
 */
const RL_ESTIMATORS = ['rloo', 'maxrl'] as const;
const RL_ESTIMATOR = (args['rl-estimator'] ?? 'rloo') as (typeof RL_ESTIMATORS)[number];
if (!RL_ESTIMATORS.includes(RL_ESTIMATOR)) throw new Error(`--rl-estimator is ${JSON.stringify(args['rl-estimator'])}; use one of ${RL_ESTIMATORS.join(', ')}`);
if (RL_ESTIMATOR === 'maxrl' && RL_EMPTY_PATCH_PENALTY > 0) throw new Error(`--rl-estimator maxrl divides by a group's mean reward, and --rl-empty-patch-penalty makes rewards negative; drop one of them`);
/** GRPO++'s passes over each step's batch (PPO epochs): more updates from the same episodes. */
const RL_EPOCHS = intFlag('rl-epochs') ?? 1;
/**
 * GRPO++ learns only from groups whose rewards differ (a group whose samples all score the same
 * is dropped from the loss). With dynamic sampling (DAPO's) a step would set those aside and
 * play up to this many more rounds of rlTasks tasks until it had rlTasks mixed groups. With 32
 * tasks a round, 2 to 16 groups mixed (9 on average, over 3 seeds), more than the 8 that rounds
 * of 8 x 8 gathered, so by default a step plays one round. The episodes GRPO++ plays are
 * counted, and continued RFT plays as many.
 */
const RL_RESAMPLE_ROUNDS = intFlag('rl-resample-rounds', 0) ?? 0;
/** The fresh RL pool's tasks (--rl-pool fresh): every task every round of every GRPO++ step can draw. */
const FRESH_POOL_SIZE = SIZE.rlSteps * SIZE.rlTasks * (1 + RL_RESAMPLE_ROUNDS);
/**
 * Where the fresh RL pools' train seeds start: half-way up the split, past any tier pool, dev
 * slice or SFT task of any demo seed (taskSeedsOf), so they leave those where earlier runs drew
 * them (--from reuses their SFT and RFT phases). Demo seed s takes the s-th stretch of
 * freshSeedsAsked of them: FRESH_POOL_SIZE and room for the few a held-out task shares a program with.
 */
const FRESH_FIRST_SEED = 2 ** 30;
const freshSeedsAsked = Math.ceil(FRESH_POOL_SIZE * 1.05) + 4;
const freshSeedsOf = (seed: number) => ({ firstSeed: FRESH_FIRST_SEED + seed * freshSeedsAsked, count: freshSeedsAsked });
if (RL_POOL === 'fresh') {
  const last = Math.max(...seeds);
  if (freshSeedsOf(last).firstSeed + freshSeedsAsked > SEEDS_PER_SPLIT) throw new Error(`--seeds ${last} with --rl-pool fresh runs past the train split's seeds (${SEEDS_PER_SPLIT}); give smaller seeds or a smaller RL budget`);
  if (taskSeedsOf(last) + TASK_SEEDS_PER_SEED > FRESH_FIRST_SEED) throw new Error(`--seeds ${last}'s tier pools and SFT tasks reach the fresh RL pools' train seeds (from ${FRESH_FIRST_SEED}); give smaller seeds`);
}
/** Episodes one round of an RL step plays. */
const RL_ROUND = SIZE.rlTasks * SIZE.rlSamples;
/**
 * The share of oracle episodes that first replace the buggy line with itself and recover from
 * the refusal: the SFT model's most common failure (34 of 51 greedy failures of an RFT
 * checkpoint on 100 validation tasks were such edits), shown with what to do next.
 */
const RECOVERY = 0.3;
/**
 * The share of those recoveries whose refused copy is of another line of the file
 * (EditOraclePolicy's `recoverElsewhere`): most of the model's failed episodes copy a line that
 * is not buggy, and recovering from that means editing another line than the one copied. All
 * of them by default: over seeds 1-3 they lift SFT from 38.3% to 44.3% and RFT from 43.3% to
 * 49.0% (docs/swe-recipe.md).
 */
const RECOVER_ELSEWHERE = args['sft-recover-elsewhere'] === undefined ? 1 : boundedNumberArg('--sft-recover-elsewhere', 0, 1)(args['sft-recover-elsewhere']);
/**
 * The share of one-bug SFT tasks (of those that do not recover) whose oracle episode first
 * replaces the buggy line with a wrong fix, runs the issue's call, sees it print the wrong value,
 * and then makes the fix (EditOraclePolicy's `retry`; the wrong edit out of the loss): without
 * them the model finishes after the call whatever it printed, so an episode is one guess.
 */
const SFT_RETRY = args['sft-retry'] === undefined ? 0 : boundedNumberArg('--sft-retry', 0, 1)(args['sft-retry']);
/**
 * Both RL arms' sampling temperature (the rollout's; GRPO++'s loss takes the sampler's
 * logprobs at it). After RFT the policy's token entropy at T = 1 is ~0.05 nats, and a group's
 * samples mostly agree: a hotter sampler mixes more groups. Checked here against the bound the
 * config applies, so a typo is refused before the phases before RL run.
 */
const RL_TEMPERATURE = args['rl-temperature'] === undefined ? 1 : positiveNumberArg('--rl-temperature')(args['rl-temperature']);
if (RL_TEMPERATURE < MIN_TEMPERATURE || RL_TEMPERATURE > MAX_TEMPERATURE) throw new Error(`--rl-temperature is ${RL_TEMPERATURE}; give a temperature in [${MIN_TEMPERATURE}, ${MAX_TEMPERATURE}]`);
/**
 * Each phase's peak learning rate. GRPO++'s is half continued RFT's: from the RFT start the
 * recoveries elsewhere give (51 of 100 on seed 1), GRPO++ at 1e-4 fell to 46 and at 5e-5 kept 49.
 */
const LR = { sft: 1e-3, rft: 3e-4, rftContinued: 1e-4, rl: args['rl-lr'] === undefined ? 5e-5 : positiveNumberArg('--rl-lr')(args['rl-lr']) };
/**
 * RFT's sampling temperature: at T=0.6 the SFT policy resolves more of its samples than at T=1
 * and misquotes old_str half as often (docs/swe-recipe.md), and RFT learns from what it samples.
 */
const RFT_TEMPERATURE = 0.6;
/**
 * RFT's sampling rounds after the first (lib/train/rft/sample.ts): each plays rftSamples more
 * times every pool task none of whose samples has resolved yet, so the tasks the SFT policy seldom
 * solves reach RFT's data too (one round gives an easy task rftSamples resolved episodes and a
 * hard one none). Two rounds took 25-28 more of a seed's 300 pool tasks into RFT's data (3 seeds)
 * and RFT from 44.3% to 50.3% held out, against 49.0% for one round more or none
 * (docs/swe-recipe.md: within the noise of each other, p = 0.52).
 */
const RFT_EXTRA_ROUNDS = intFlag('rft-extra-rounds', 0) ?? 2;
/** The RFT phase: SFT again, from the SFT checkpoint, at a third of SFT's peak. */
const RFT_OPTIMIZER = { lr: LR.rft, weightDecay: 0, warmupSteps: Math.min(10, SIZE.rftSteps), schedule: 'cosine' };
/**
 * The continued-RFT arm's optimizer, whole: the rft preset would fill in Nebius's (10 warm-up
 * steps, cosine to 0 over the optimizer steps of a run in which every episode resolves), and an
 * arm of a few steps takes fewer optimizer steps than that warm-up: it would never train at its lr.
 */
const RFT_CONTINUED_OPTIMIZER = { lr: LR.rftContinued, weightDecay: 0, warmupSteps: 0, schedule: 'constant' };
/**
 * Whether continued RFT keeps one of a task's resolved episodes that are equal token for token.
 * Off by default (Nebius's filter keeps every copy); metrics.rejection.copies counts them: 4-7%
 * of what continued RFT learned with 8 samples a task (docs/swe-recipe.md).
 */
const RFT_CONTINUED_DISTINCT = args['rft-continued-distinct']!;

const started = performance.now();
const minutes = () => (performance.now() - started) / 60_000;
const log = (line: string) => console.log(`[${minutes().toFixed(1)} min] ${line}`);

interface Point {
  seed: number;
  phase: string;
  /** Training episodes sampled before this point (RFT and RL), SFT at 0. */
  episodes: number;
  heldout: RateSummary;
  /** Minutes from the seed's start. */
  minutes: number;
}

/** Greedy outcomes of a checkpoint on the held-out tasks, by task id. */
async function heldOutOutcomes(checkpoint: string, tasks: readonly Task[], seed: number): Promise<Outcomes> {
  const policy = await NativePolicy.load(checkpoint, { device, threads: 2 });
  const backend = await createSandboxBackend('local', { ...SANDBOX, label: 'swerl-swe-demo' });
  try {
    const agent = parseAgentLoopOptions({ ...AGENT, temperature: 0 }, 'agent');
    const evalTasks = tasks.map((task) => ({ id: task.id, task, makeEnv: () => new SweEnv(task, backend, ENV as object) }));
    const { byRun } = await evaluatePolicy(policy, evalTasks, { runs: 1, agent, concurrency: CONCURRENCY, retries: 1, modelName: checkpoint, seed });
    return new Map(byRun[0]!.map((t) => [t.taskId, t.reward > 0]));
  } finally {
    policy.dispose();
  }
}

/**
 * The edit oracle's episodes of the SFT tasks, with the model's tokenizer: a retry's wrong edit
 * masked out of the loss, and a task whose wrong fix the issue's call could not tell from the fix
 * (the call printed the same after both) played again without one.
 */
async function oracleEpisodes(tasks: readonly Task[], tokenizer: Tokenizer, backend: SandboxBackend) {
  const play = (policy: EditOraclePolicy, played: readonly Task[]) =>
    runRollouts(
      played.map((task, i) => ({ taskId: task.id, task, group: i, sample: 0, makeEnv: () => new SweEnv(task, backend, ENV as object) })),
      policy,
      { concurrency: CONCURRENCY, generationConcurrency: 0, retries: 1, agent: parseAgentLoopOptions({ ...AGENT, temperature: 0 }, 'agent') },
    );
  const oracle = new EditOraclePolicy({ tokenizer, recovery: RECOVERY, recoverElsewhere: RECOVER_ELSEWHERE, retry: SFT_RETRY });
  const trajectories = await play(oracle, tasks);
  const unclear = new Set(tasks.flatMap((task, i) => (oracle.demonstrates(task, trajectories[i]!) ? [] : [i])));
  const again = await play(new EditOraclePolicy({ tokenizer, recovery: RECOVERY, recoverElsewhere: RECOVER_ELSEWHERE }), [...unclear].map((i) => tasks[i]!));
  [...unclear].forEach((i, j) => (trajectories[i] = { ...again[j]!, group: i }));
  // The episodes that kept their wrong fix: its turn out of the loss.
  const retried = tasks.flatMap((task, i) => (unclear.has(i) || oracle.mistakeTurns(task).length === 0 ? [] : [i]));
  for (const i of retried) trajectories[i] = maskTurns(trajectories[i]!, oracle.mistakeTurns(tasks[i]!));
  return {
    trajectories,
    retries: retried.length,
    replayed: unclear.size,
  };
}

/**
 * The suites of one seed: per tier, the oracle's tasks for SFT, the pool RFT and RL draw from
 * (as the trainer writes it) and its dev slice, all of train-split seeds and none shared; and a
 * held-out suite of held-out seeds disjoint from them. RL learns on tasks SFT never showed it:
 * on the SFT tasks themselves the policy recalls fixes it was taught (67% resolved, against 37%
 * held out), which rewards memory rather than fixing.
 */
async function suites(tasksDir: string, firstSeed: number) {
  const sftTasks: Task[] = [];
  const tierPools: Task[][] = [];
  const tiers = tierOptions(CURRICULUM, KNOBS);
  // The SFT seeds come after every tier's pool and dev slice (tierSeeds' range).
  const sftFirstSeed = firstSeed + tiers.length * (SIZE.pool + SIZE.dev);
  for (const [i, options] of tiers.entries()) {
    const seedsOf = tierSeeds(i, SIZE.pool, SIZE.dev, firstSeed);
    tierPools.push((await writeSweGenSuite(tasksDir, { ...options, split: 'train', ...seedsOf.pool, force: true })).tasks);
    await writeSweGenSuite(tasksDir, { ...options, split: 'train', ...seedsOf.dev, force: true });
    const sftOptions = SFT_TASKS === 'tiers' ? options : tiers.at(-1)!;
    sftTasks.push(...(await writeSweGenSuite(tasksDir, { ...sftOptions, split: 'train', firstSeed: sftFirstSeed + i * SIZE.pool, count: SIZE.pool, force: true })).tasks);
  }
  // Held-out seeds, less any whose program a train task has: ask for more, keep the first SIZE.heldout.
  const heldout = await writeSweGenSuite(tasksDir, { ...KNOBS, split: 'heldout', firstSeed, count: HELDOUT_SEEDS, disjointFrom: tasksDir, dropShared: true, force: true });
  if (heldout.tasks.length < SIZE.heldout) throw new Error(`only ${heldout.tasks.length} held-out tasks are disjoint from the train programs; ask for fewer`);
  return { sftTasks, tierPools, heldout: heldout.tasks.slice(0, SIZE.heldout), dropped: heldout.dropped.length };
}

/**
 * Seed `seed`'s fresh RL pool (--rl-pool fresh): FRESH_POOL_SIZE new train tasks of the default
 * distribution, less any whose program a held-out task has (asked for with room, as the held-out
 * suite is). Written after the held-out suite, so it leaves the held-out tasks as they were.
 */
async function freshPool(tasksDir: string, seed: number): Promise<Task[]> {
  const pool = await writeSweGenSuite(tasksDir, { ...KNOBS, split: 'train', ...freshSeedsOf(seed), disjointFrom: tasksDir, dropShared: true, force: true });
  if (pool.tasks.length < FRESH_POOL_SIZE) throw new Error(`only ${pool.tasks.length} of ${freshSeedsAsked} fresh RL-pool seeds are disjoint from the held-out programs; ask for a smaller RL budget`);
  return pool.tasks.slice(0, FRESH_POOL_SIZE);
}

/** The config every phase shares: the tasks (curriculum tiers, held-out ids for the record), the env, the agent's budgets. */
function phaseConfig(runDir: string, seed: number, tasksDir: string, heldout: readonly Task[], modelPath: string, steps: number) {
  return {
    run: { dir: runDir, seed, steps, checkpointEvery: steps, progress: 'lines' },
    model: { path: modelPath, device, threads: 2 },
    tasks: { kind: 'swe', path: tasksDir, generate: { train: SIZE.pool, heldout: 0, firstSeed: taskSeedsOf(seed), ...KNOBS }, curriculum: CURRICULUM, evalIds: heldout.map((t) => t.id), sandbox: 'local', sandboxOptions: SANDBOX, env: ENV },
    rollout: { ...AGENT, concurrency: CONCURRENCY },
    eval: { every: 0 },
  };
}

/**
 * What a seed's result depends on besides the seed: a finished seed is reused by a later run
 * into the same --dir (a three-seed run interrupted in its third seed keeps the first two) only
 * when all of this is the same.
 */
const SETTINGS: Record<string, unknown> = { size: sizeName, budget: SIZE, taskSeedsPerSeed: TASK_SEEDS_PER_SEED, model, device, knobs: KNOBS, curriculum: CURRICULUM, env: ENV, agent: AGENT, lr: LR, rftTemperature: RFT_TEMPERATURE, rftExtraRounds: RFT_EXTRA_ROUNDS, rftOptimizer: RFT_OPTIMIZER, rftContinuedOptimizer: RFT_CONTINUED_OPTIMIZER, rftContinuedDistinct: RFT_CONTINUED_DISTINCT, rlMiniBatches: RL_MINI_BATCHES, rlEpochs: RL_EPOCHS, rlResampleRounds: RL_RESAMPLE_ROUNDS, rlPool: RL_POOL, rlTemperature: RL_TEMPERATURE, rlStartTier: RL_START_TIER ?? null, rlEntropyCoef: RL_ENTROPY_COEF, rlPartialCredit: RL_PARTIAL_CREDIT, rlEmptyPatchPenalty: RL_EMPTY_PATCH_PENALTY, rlEstimator: RL_ESTIMATOR, oracleRecovery: RECOVERY, oracleRecoverElsewhere: RECOVER_ELSEWHERE, oracleRetry: SFT_RETRY, sftTasks: SFT_TASKS };
/** The settings only the RL arms read (top-level keys of SETTINGS, and keys inside its budget and lr). */
const RL_SETTINGS = { top: ['rftContinuedDistinct', 'rlMiniBatches', 'rlEpochs', 'rlResampleRounds', 'rlPool', 'rlTemperature', 'rlStartTier', 'rlEntropyCoef', 'rlPartialCredit', 'rlEmptyPatchPenalty', 'rlEstimator'], budget: ['rlSteps', 'rlTasks', 'rlSamples'], lr: ['rl'] };
/** The settings only GRPO++ reads (of RL_SETTINGS): a continued-RFT arm run with other values of these is the one this run would train. */
const GRPO_SETTINGS = { top: ['rlMiniBatches', 'rlEpochs', 'rlResampleRounds', 'rlEntropyCoef', 'rlPartialCredit', 'rlEmptyPatchPenalty', 'rlEstimator'], lr: ['rl'] };
const omit = (o: unknown, keys: readonly string[]) => Object.fromEntries(Object.entries((o ?? {}) as object).filter(([k]) => !keys.includes(k)));
/** What a seed's suites, SFT and RFT phases depend on: SETTINGS less what only the RL arms read. */
const beforeRl = (settings: Record<string, unknown>) => ({ ...omit(settings, RL_SETTINGS.top), budget: omit(settings.budget, RL_SETTINGS.budget), lr: omit(settings.lr, RL_SETTINGS.lr) });
/** What the continued-RFT arm depends on: SETTINGS less what only GRPO++ reads (and the episodes GRPO++ played, checked apart). */
const beforeContinuedRft = (settings: Record<string, unknown>) => ({ ...omit(settings, GRPO_SETTINGS.top), lr: omit(settings.lr, GRPO_SETTINGS.lr) });
/** The keys of two settings objects whose values differ. */
const differingSettings = (a: Record<string, unknown>, b: Record<string, unknown>) => [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => !isDeepStrictEqual(a[k], b[k]));

interface ArmSummary {
  dir: string;
  last: unknown;
  endTier?: string;
  episodes: number;
  /** ||W - W_rft|| / ||W_rft||: how far the arm carried the weights from the RFT checkpoint (absent in runs before 2026-12-04). */
  moved?: number;
}

interface SeedResult {
  seed: number;
  points: Point[];
  outcomes: Record<string, Outcomes>;
  memorization: { all: RateSummary; neverSeenTasks: number; neverSeen: Record<string, RateSummary> };
  /** The oracle's SFT episodes: resolved of tasks; those that resolved after a wrong fix (retries) and those played again without one. */
  oracle: { resolved: number; tasks: number; retries?: number; replayed?: number };
  /** RFT's sampling rounds: the tasks each played, its samples, those resolved, the tasks it solved first (absent in runs before 2026-12-05). */
  rftRounds?: SamplingRound[];
  /** The pool tasks the RL arms drew from (--rl-pool), of all the tiers' pool tasks (of the fresh pool's, for a fresh one). */
  rlPool: { tasks: number; of: number };
  /** Each RL arm's run: its last metrics, the tiers it started and ended in, the episodes it played. */
  summaries: Record<string, ArmSummary>;
  /**
   * Minutes this seed took, from its suites to its memorization baseline; for a seed whose SFT
   * and RFT phases came --from an earlier run, those phases' minutes there and the rest here.
   */
  seedMinutes: number;
  /** The earlier run's seed directory whose SFT and RFT phases this seed took (--from). */
  reusedFrom?: string;
  /** The earlier run's seed directory whose continued-RFT arm this seed took (--from, where only GRPO++'s settings differ). */
  continuedRftFrom?: string;
}

/** The result file of a finished seed: written last, atomically, so it exists only for a seed that ran to the end. */
const resultFile = (seed: number, runDir = root) => path.join(runDir, `seed-${seed}`, 'result.json');

/** Settings added since runs were first recorded: a run that predates one ran with its default. */
const ADDED_SETTINGS: Record<string, unknown> = { rlEmptyPatchPenalty: 0, oracleRecoverElsewhere: 0, rftContinuedDistinct: false, rlEstimator: 'rloo', rftExtraRounds: 0 };

/** A finished seed's result file as written (settings it predates at their defaults), or undefined where the seed never finished. */
async function readResult(file: string, seed: number): Promise<{ settings: Record<string, unknown>; result: SeedResult } | undefined> {
  let saved: { settings: Record<string, unknown>; result: Omit<SeedResult, 'outcomes'> & { outcomes: Record<string, Record<string, boolean>> } };
  try {
    saved = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`${file} cannot be read (${(error as Error).message}); remove it to run seed ${seed} again`);
  }
  const outcomes = Object.fromEntries(Object.entries(saved.result.outcomes).map(([phase, o]) => [phase, new Map(Object.entries(o))]));
  return { settings: { ...ADDED_SETTINGS, ...saved.settings }, result: { ...saved.result, outcomes } };
}

async function finishedSeed(seed: number): Promise<SeedResult | undefined> {
  const file = resultFile(seed);
  const saved = await readResult(file, seed);
  if (!saved) return undefined;
  const differing = differingSettings(saved.settings, SETTINGS);
  if (differing.length > 0) {
    throw new Error(`${file} is seed ${seed} of a run with other settings (${differing.join(', ')} differ); give another --dir, or remove ${path.dirname(file)} to run it again`);
  }
  return saved.result;
}

/** What RL starts from: the held-out points and outcomes of SFT and RFT, the oracle's count, RFT's samples and checkpoint. */
interface BeforeRl {
  points: Point[];
  outcomes: Record<string, Outcomes>;
  /** The oracle's SFT episodes: resolved of tasks; those that resolved after a wrong fix (retries) and those played again without one. */
  oracle: { resolved: number; tasks: number; retries?: number; replayed?: number };
  rftRounds?: SamplingRound[];
  samples: readonly { taskId: string; reward: number }[];
  rftCheckpoint: string;
  /** Minutes the SFT and RFT phases took, from the seed's start. */
  minutes: number;
}

/** A continued-RFT arm as an earlier run left it: its held-out point and outcomes, its summary. */
interface ContinuedRftArm {
  point: Point;
  outcomes: Outcomes;
  summary: ArmSummary;
}

/** A seed's record once its SFT and RFT phases are done (written before its RL arms start): what --from needs of a seed whose arms never finished. */
const beforeRlFile = (seed: number, runDir = root) => path.join(runDir, `seed-${seed}`, 'before-rl.json');
/** A phase's held-out outcomes, task by task, written as the phase is measured. */
const heldoutFile = (seed: number, phase: string, runDir = root) => path.join(runDir, `seed-${seed}`, `heldout-${phase}.json`);

/** A seed's SFT and RFT phases as a run recorded them: from its result.json, or where the seed stopped during RL, its before-rl.json and held-out files. */
async function recordedBeforeRl(seed: number): Promise<{ settings: Record<string, unknown>; points: Point[]; outcomes: Record<'sft' | 'rft', Outcomes>; oracle: BeforeRl['oracle']; rftRounds?: SamplingRound[]; finished?: SeedResult } | undefined> {
  const saved = await readResult(resultFile(seed, from), seed);
  if (saved) {
    const { result } = saved;
    const points = result.points.filter((p) => p.phase === 'sft' || p.phase === 'rft');
    return { settings: saved.settings, points, outcomes: { sft: result.outcomes.sft!, rft: result.outcomes.rft! }, oracle: result.oracle, ...(result.rftRounds ? { rftRounds: result.rftRounds } : {}), finished: result };
  }
  let record: { settings: Record<string, unknown>; oracle: BeforeRl['oracle']; rftRounds: SamplingRound[] };
  try {
    record = JSON.parse(await readFile(beforeRlFile(seed, from), 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`${beforeRlFile(seed, from)} cannot be read (${(error as Error).message}); run seed ${seed} there again, or drop --from`);
  }
  const measured = await Promise.all((['sft', 'rft'] as const).map(async (phase) => JSON.parse(await readFile(heldoutFile(seed, phase, from), 'utf8')) as { point: Point; outcomes: Record<string, boolean> }));
  return { settings: { ...ADDED_SETTINGS, ...record.settings }, points: measured.map((m) => m.point), outcomes: { sft: new Map(Object.entries(measured[0]!.outcomes)), rft: new Map(Object.entries(measured[1]!.outcomes)) }, oracle: record.oracle, rftRounds: record.rftRounds };
}

/**
 * Seed `seed`'s SFT and RFT phases as --from's run left them (a finished seed, or one stopped
 * during its RL arms), and its continued-RFT arm where that run finished the seed with settings
 * that differ from these in GRPO++'s alone. Its settings before RL must be these, and its held-out
 * tasks the ones this run's suites drew (the suites are a pure function of the seed and those
 * settings: a mismatch means the task generator changed since).
 */
async function reusedBeforeRl(seed: number, heldout: readonly Task[]): Promise<BeforeRl & { seedDir: string; continued?: ContinuedRftArm }> {
  const saved = await recordedBeforeRl(seed);
  if (!saved) throw new Error(`--from ${from} has no seed ${seed} whose SFT and RFT phases finished (no ${resultFile(seed, from)}, no ${beforeRlFile(seed, from)}); run it there first, or drop --from`);
  const differing = differingSettings(beforeRl(saved.settings), beforeRl(SETTINGS));
  if (differing.length > 0) throw new Error(`--from ${from}: seed ${seed} ran with other settings before RL (${differing.join(', ')} differ); give the same ones, or drop --from`);
  const ids = heldout.map((t) => t.id);
  const savedIds = [...saved.outcomes.sft.keys()];
  if (!isDeepStrictEqual(savedIds, ids)) throw new Error(`--from ${from}: seed ${seed}'s held-out tasks are not the ones this run draws (the task generator changed since?); drop --from`);
  const seedDir = path.join(from!, `seed-${seed}`);
  // The RFT phase's last checkpoint, complete (its trainer state written), as train() reported it.
  const rftRun = new RunDirectory(path.join(seedDir, '3-rft'));
  const rftCheckpoint = rftRun.checkpointDir(SIZE.rftSteps);
  if (!(await rftRun.checkpointSteps()).includes(SIZE.rftSteps)) throw new Error(`--from ${from}: seed ${seed} has no RFT checkpoint at ${rftCheckpoint}; run the seed there again, or drop --from`);
  const samples = await new RunDirectory(path.join(seedDir, '3-rft-samples')).readTrajectories(1);
  const { points, outcomes, finished } = saved;
  const continued =
    finished && isDeepStrictEqual(beforeContinuedRft(saved.settings), beforeContinuedRft(SETTINGS))
      ? { point: finished.points.find((p) => p.phase === 'rft-continued')!, outcomes: finished.outcomes['rft-continued']!, summary: finished.summaries['rft-continued']! }
      : undefined;
  return { seedDir, points, outcomes, oracle: saved.oracle, ...(saved.rftRounds ? { rftRounds: saved.rftRounds } : {}), samples, rftCheckpoint, minutes: points.at(-1)!.minutes, continued };
}

async function runSeed(seed: number): Promise<SeedResult> {
  const finished = await finishedSeed(seed);
  if (finished) {
    log(`seed ${seed}: finished in an earlier run (${finished.seedMinutes.toFixed(1)} min), read from ${resultFile(seed)}`);
    return finished;
  }
  let seedStarted = minutes();
  const dir = path.join(root, `seed-${seed}`);
  if (existsSync(dir)) {
    // A seed is a unit of work: one an earlier run stopped inside starts over.
    log(`seed ${seed}: an earlier run stopped inside it (no ${path.basename(resultFile(seed))}); starting it over`);
    await rm(dir, { recursive: true, force: true });
  }
  const tasksDir = path.join(dir, 'tasks');
  const { sftTasks, tierPools, heldout, dropped } = await suites(tasksDir, taskSeedsOf(seed));
  const pools = tierPools.flat();
  log(`seed ${seed}: ${sftTasks.length} SFT tasks and ${pools.length} RL tasks in ${CURRICULUM.tiers.length} tiers (+${SIZE.dev} dev each), ${heldout.length} held out (${dropped} held-out seeds left out: a train task has their program)`);
  const points: Point[] = [];
  const outcomes: Record<string, Outcomes> = {};
  const measure = async (phase: string, episodes: number, checkpoint: string) => {
    outcomes[phase] = await heldOutOutcomes(checkpoint, heldout, seed);
    const point = { seed, phase, episodes, heldout: rateOf(outcomes[phase]!.values()), minutes: minutes() - seedStarted };
    points.push(point);
    // Each phase's per-task outcomes as it is measured: what a seed stopped before its result.json still tells.
    await writeJsonAtomic(heldoutFile(seed, phase), { point, outcomes: Object.fromEntries(outcomes[phase]!) });
    log(`seed ${seed} ${phase}: held-out resolved ${formatRate(point.heldout)}`);
    return point;
  };

  const backend = await createSandboxBackend('local', { ...SANDBOX, label: 'swerl-swe-demo' });
  const sftAndRft = async (): Promise<Omit<BeforeRl, 'points' | 'outcomes'>> => {
    // 1. The edit oracle plays every SFT task, with the model's own tokenizer; SFT on its trajectories.
    const start = await NativePolicy.load(model, { device, threads: 2 });
    const tokenizer = start.tokenizer;
    start.dispose();
    const oracleDir = new RunDirectory(path.join(dir, '1-oracle'));
    await oracleDir.create({ demo: 'swe', phase: 'oracle', model }, false);
    const oracle = await oracleEpisodes(sftTasks, tokenizer, backend);
    await oracleDir.writeTrajectories(1, oracle.trajectories, () => ({}));
    log(`seed ${seed} oracle: ${oracle.trajectories.filter((t) => t.reward === 1).length} of ${oracle.trajectories.length} train tasks resolved (${oracle.retries} after a wrong fix; ${oracle.replayed} wrong fixes the issue's call could not tell from the fix played again without one)`);

    const sft = await train({
      ...phaseConfig(path.join(dir, '2-sft'), seed, tasksDir, heldout, model, SIZE.sftSteps),
      optimizer: { lr: LR.sft, weightDecay: 0, warmupSteps: Math.min(20, SIZE.sftSteps), schedule: 'cosine' },
      sft: { data: [oracleDir.dir], minReward: 1, sequencesPerStep: SIZE.sftBatch },
    });
    await measure('sft', 0, sft.checkpoint!);

    // 2. RFT: the SFT policy plays every RL-pool task; SFT again on what resolved, beside the oracle's trajectories.
    const samplesDir = new RunDirectory(path.join(dir, '3-rft-samples'));
    await samplesDir.create({ demo: 'swe', phase: 'rft-samples', model: sft.checkpoint, temperature: RFT_TEMPERATURE }, false);
    const sampler = await NativePolicy.load(sft.checkpoint!, { device, threads: 2 });
    let samples, rounds;
    try {
      const rolloutOptions = { concurrency: CONCURRENCY, generationConcurrency: 0, retries: 1, agent: parseAgentLoopOptions({ ...AGENT, temperature: RFT_TEMPERATURE }, 'agent') };
      ({ trajectories: samples, rounds } = await sampleUntilResolved(pools, { samples: SIZE.rftSamples, extraRounds: RFT_EXTRA_ROUNDS }, (draws) =>
        runRollouts(
          draws.map(({ task, group, sample }) => ({ taskId: task.id, task, group, sample, seed: mixSeed(seed, group, sample) * 1024, makeEnv: () => new SweEnv(task, backend, ENV as object) })),
          sampler,
          rolloutOptions,
        ),
      ));
    } finally {
      sampler.dispose();
    }
    await samplesDir.writeTrajectories(1, samples, () => ({}));
    const kept = samples.filter((t) => t.reward === 1);
    const byRound = rounds.map((r, i) => `round ${i}: ${r.resolved} of ${r.sampled} on ${r.tasks} tasks, ${r.newlySolved} newly solved`).join('; ');
    log(`seed ${seed} RFT samples: ${kept.length} of ${samples.length} resolved (${new Set(kept.map((t) => t.taskId)).size} of ${pools.length} RL-pool tasks at least once; ${byRound})`);
    const rft = await train({
      ...phaseConfig(path.join(dir, '3-rft'), seed, tasksDir, heldout, sft.checkpoint!, SIZE.rftSteps),
      optimizer: RFT_OPTIMIZER,
      sft: { data: [samplesDir.dir, oracleDir.dir], minReward: 1, sequencesPerStep: SIZE.sftBatch },
    });
    await measure('rft', samples.length, rft.checkpoint!);
    const oracleCounts = { resolved: oracle.trajectories.filter((t) => t.reward === 1).length, tasks: oracle.trajectories.length, retries: oracle.retries, replayed: oracle.replayed };
    // What --from takes from this seed should its RL arms never finish (the held-out files hold SFT's and RFT's outcomes).
    await writeJsonAtomic(beforeRlFile(seed), { settings: SETTINGS, oracle: oracleCounts, rftRounds: rounds });
    return { oracle: oracleCounts, rftRounds: rounds, samples, rftCheckpoint: rft.checkpoint!, minutes: minutes() - seedStarted };
  };
  let before: Omit<BeforeRl, 'points' | 'outcomes'> & { seedDir?: string; continued?: ContinuedRftArm };
  if (from === undefined) before = await sftAndRft();
  else {
    const reused = await reusedBeforeRl(seed, heldout);
    points.push(...reused.points);
    Object.assign(outcomes, reused.outcomes);
    before = reused;
    log(`seed ${seed}: SFT and RFT as ${reused.seedDir} ran them (${reused.minutes.toFixed(1)} min there): ${reused.points.map((p) => `${p.phase} ${formatRate(p.heldout)}`).join(', ')}`);
    // The seed's clock reads on from where its SFT and RFT phases ended in --from's run.
    seedStarted = minutes() - reused.minutes;
  }
  const { samples, rftCheckpoint } = before;

  // 3. From the RFT checkpoint, on the RL pool: GRPO++, then continued RFT for as many episodes as GRPO++ played.
  const fresh = RL_POOL === 'fresh' ? await freshPool(tasksDir, seed) : [];
  // The tasks the RL pool is drawn from: the fresh pool whole, or the tier pools ('all', or narrowed to 'unsolved').
  const drawnFrom = RL_POOL === 'fresh' ? fresh : pools;
  const rlPool = RL_POOL === 'unsolved' ? unsolvedPools(tierPools.map((pool) => pool.map((task) => task.id)), samples) : drawnFrom.map((task) => task.id);
  if (RL_POOL === 'unsolved') log(`seed ${seed} RL pool: the ${rlPool.length} of ${pools.length} pool tasks RFT's samples did not resolve every time`);
  if (RL_POOL === 'fresh') log(`seed ${seed} RL pool: ${rlPool.length} fresh train tasks of the default distribution, one per task an RL step draws`);
  const summaries: Record<string, ArmSummary> = {};
  const arm = async (phase: string, steps: number, settings: { algorithm: object; optimizer: object }) => {
    const config = phaseConfig(path.join(dir, `4-${phase}`), seed, tasksDir, heldout, rftCheckpoint, steps);
    const run = await train({
      ...config,
      // A fresh pool is a suite of its own, with no tiers: the tasks named, the held-out ids for the record.
      tasks:
        RL_POOL === 'fresh'
          ? { ...omit(config.tasks, ['generate', 'curriculum']), only: rlPool }
          : {
              ...config.tasks,
              ...(RL_START_TIER === undefined ? {} : { curriculum: { ...CURRICULUM, startTier: RL_START_TIER } }),
              ...(RL_POOL === 'all' ? {} : { only: rlPool }),
            },
      rollout: { ...AGENT, temperature: RL_TEMPERATURE, concurrency: CONCURRENCY, tasksPerStep: SIZE.rlTasks, samplesPerTask: SIZE.rlSamples },
      ...settings,
    });
    const episodes = run.episodes!;
    const moved = await relativeWeightChange(rftCheckpoint, run.checkpoint!);
    log(`seed ${seed} ${phase}: the weights moved ${(100 * moved).toFixed(2)}% from the RFT checkpoint (||dW|| / ||W||)`);
    summaries[phase] = { dir: run.dir, last: run.last, ...(run.curriculumTier ? { endTier: run.curriculumTier } : {}), episodes, moved };
    await measure(phase, samples.length + episodes, run.checkpoint!);
    return episodes;
  };
  const grpoEpisodes = await arm('grpo++', SIZE.rlSteps, {
    algorithm: { preset: 'grpo++', miniBatches: RL_MINI_BATCHES, epochs: RL_EPOCHS, entropyCoef: RL_ENTROPY_COEF, partialCredit: RL_PARTIAL_CREDIT, emptyPatchPenalty: RL_EMPTY_PATCH_PENALTY, estimator: RL_ESTIMATOR, groupFilter: 'informative', resampleRounds: RL_RESAMPLE_ROUNDS },
    optimizer: { lr: LR.rl, weightDecay: 0 },
  });
  const continued = before.continued;
  /** The earlier run's seed whose continued-RFT arm this seed took, if it took one. */
  let continuedRftFrom: string | undefined;
  if (continued !== undefined && continued.summary.episodes === grpoEpisodes) {
    // The same start, tasks, settings and episode count: training it again would be --from's arm over.
    outcomes['rft-continued'] = continued.outcomes;
    summaries['rft-continued'] = continued.summary;
    points.push({ ...continued.point, minutes: minutes() - seedStarted });
    continuedRftFrom = before.seedDir;
    log(`seed ${seed} rft-continued: as ${before.seedDir} ran it (only GRPO++'s settings differ; ${grpoEpisodes} episodes each): held-out resolved ${formatRate(continued.point.heldout)}`);
  } else {
    // Every round plays RL_ROUND episodes, so GRPO++'s count is a whole number of continued RFT's steps.
    await arm('rft-continued', grpoEpisodes / RL_ROUND, { algorithm: { preset: 'rft', rejection: { ...PRESETS.rft.rejection!, distinct: RFT_CONTINUED_DISTINCT } }, optimizer: RFT_CONTINUED_OPTIMIZER });
  }

  // The memorization baseline on the same held-out tasks, and the tasks whose fix training never showed.
  const memo = await memorizationBaseline(heldout, [...sftTasks, ...pools, ...fresh], backend, {
    timeoutMs: 60_000,
    concurrency: CONCURRENCY,
    readSource: (task, file) => readFile(path.join(task.repoDir!, file), 'utf8'),
  });
  const neverSeen = new Set(memo.filter((m) => m.neverSeen).map((m) => m.taskId));
  const subset = (o: Outcomes) => [...o].filter(([id]) => neverSeen.has(id)).map(([, solved]) => solved);
  const memorization = {
    all: rateOf(memo.map((m) => m.resolved)),
    neverSeenTasks: neverSeen.size,
    neverSeen: {
      memorization: rateOf(memo.filter((m) => m.neverSeen).map((m) => m.resolved)),
      ...Object.fromEntries(Object.entries(outcomes).map(([phase, o]) => [phase, rateOf(subset(o))])),
    },
  };
  log(`seed ${seed} memorization baseline: ${formatRate(memorization.all)}; on the ${neverSeen.size} tasks whose fix training never showed: baseline ${formatRate(memorization.neverSeen.memorization)}, GRPO++ ${formatRate(memorization.neverSeen['grpo++' as keyof typeof memorization.neverSeen] as RateSummary)}`);
  const result = { seed, points, outcomes, memorization, oracle: before.oracle, ...(before.rftRounds ? { rftRounds: before.rftRounds } : {}), rlPool: { tasks: rlPool.length, of: drawnFrom.length }, summaries, seedMinutes: minutes() - seedStarted, ...(before.seedDir === undefined ? {} : { reusedFrom: before.seedDir }), ...(continuedRftFrom === undefined ? {} : { continuedRftFrom }) };
  await writeJsonAtomic(resultFile(seed), { settings: SETTINGS, result: { ...result, outcomes: outcomesJson(outcomes) } });
  return result;
}

const outcomesJson = (outcomes: Record<string, Outcomes>) => Object.fromEntries(Object.entries(outcomes).map(([phase, o]) => [phase, Object.fromEntries(o)]));

pinBlasToOneThread();
log(`swe demo (${sizeName}, seeds ${seeds.join(', ')}, model ${model}, ${device}) into ${root}`);
const results: SeedResult[] = [];
for (const seed of seeds) results.push(await runSeed(seed));

const comparison = pairedComparison(results.map((r) => [r.outcomes['grpo++']!, r.outcomes['rft-continued']!] as const));
const rftOverSft = pairedComparison(results.map((r) => [r.outcomes.rft!, r.outcomes.sft!] as const));
const phases = ['sft', 'rft', 'grpo++', 'rft-continued'];
const pooled = Object.fromEntries(phases.map((phase) => [phase, rateOf(results.flatMap((r) => [...r.outcomes[phase]!.values()]))]));
console.log('\nphase           held-out resolved (Wilson 95%)      seeds pooled');
for (const phase of phases) console.log(`${phase.padEnd(15)} ${formatRate(pooled[phase]!)}`);
console.log(
  `\nGRPO++ vs continued RFT (same start, the same episodes each: ${results.map((r) => r.summaries['grpo++']!.episodes).join(', ')} over the seeds; ${comparison.pairs} task pairs over ${seeds.length} seed(s)): ` +
    `${comparison.difference >= 0 ? '+' : ''}${comparison.difference.toFixed(1)} points; only GRPO++ solved ${comparison.onlyA}, only RFT ${comparison.onlyB}; McNemar p = ${comparison.p.toPrecision(3)}`,
);
console.log(
  `RFT vs SFT (paired, ${rftOverSft.pairs} tasks): ${rftOverSft.difference >= 0 ? '+' : ''}${rftOverSft.difference.toFixed(1)} points; ` +
    `only RFT solved ${rftOverSft.onlyA}, only SFT ${rftOverSft.onlyB}; McNemar p = ${rftOverSft.p.toPrecision(3)}`,
);
/** The held-out tasks' bug kinds (swe-gen's record in each task folder), pooled over the seeds: where each phase resolves, kind by kind. */
const kindOf = (seed: number, id: string): string => JSON.parse(readFileSync(path.join(root, `seed-${seed}`, 'tasks', id, 'task.json'), 'utf8')).swe_gen.kind;
const heldoutKinds = results.flatMap((r) => [...r.outcomes.sft!.keys()].map((id) => ({ r, id, kind: kindOf(r.seed, id) })));
const byKind = Object.fromEntries(
  [...new Set(heldoutKinds.map((k) => k.kind))].sort().map((kind) => {
    const tasks = heldoutKinds.filter((k) => k.kind === kind);
    return [kind, Object.fromEntries(phases.map((phase) => [phase, rateOf(tasks.map(({ r, id }) => r.outcomes[phase]!.get(id)!))]))];
  }),
);
console.log(`\nheld-out resolved by bug kind, seeds pooled: ${phases.join(', ')}`);
for (const [kind, rates] of Object.entries(byKind)) console.log(`${kind.padEnd(15)} ${phases.map((phase) => `${rates[phase]!.resolved}/${rates[phase]!.tasks}`).join('  ')}`);
for (const r of results) console.log(`seed ${r.seed}: memorization baseline ${formatRate(r.memorization.all)}; never-seen-fix subset (${r.memorization.neverSeenTasks} tasks): baseline ${formatRate(r.memorization.neverSeen.memorization)}`);

const points = results.flatMap((r) => r.points);
const chart = renderChartsSvg([
  {
    title: 'Held-out resolve rate (greedy)',
    xLabel: 'training episodes sampled (SFT at 0)',
    yLabel: 'resolved',
    yMin: 0,
    series: results.flatMap((r) => [
      { label: `seed ${r.seed}: SFT, RFT, GRPO++`, points: r.points.filter((p) => p.phase !== 'rft-continued').map((p) => ({ x: p.episodes, y: p.heldout.rate })) },
      { label: `seed ${r.seed}: SFT, RFT, RFT`, points: r.points.filter((p) => p.phase !== 'grpo++').map((p) => ({ x: p.episodes, y: p.heldout.rate })) },
    ]),
  },
]);
await writeFileAtomic(path.join(root, 'demo.svg'), chart);
await writeJsonAtomic(path.join(root, 'demo.json'), {
  // Every setting a seed's result.json records, under the names it records them.
  ...SETTINGS,
  seeds,
  ...(from === undefined ? {} : { from }),
  points,
  pooled,
  byKind,
  comparison,
  rftOverSft,
  perSeed: results.map((r) => ({ seed: r.seed, minutes: r.seedMinutes, ...(r.reusedFrom === undefined ? {} : { reusedFrom: r.reusedFrom }), ...(r.continuedRftFrom === undefined ? {} : { continuedRftFrom: r.continuedRftFrom }), oracle: r.oracle, ...(r.rftRounds ? { rftRounds: r.rftRounds } : {}), memorization: r.memorization, rlPool: r.rlPool, outcomes: outcomesJson(r.outcomes), summaries: r.summaries })),
  minutes: minutes(),
  machine: { cpus: cpus().length, model: cpus()[0]?.model },
});
log(`wrote ${path.join(root, 'demo.json')} and demo.svg`);
