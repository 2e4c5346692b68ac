/**
 * npm run bench:oracle-episodes — what an SWE episode costs on the sandbox side, without a
 * model: the edit oracle plays `--tasks` swe-gen tasks (default 48; the demo's distribution)
 * `--samples` times each (default 1; an RL step's group plays a task 4 or 8 times) at
 * `--concurrency` (default 8, as demo:swe's rollouts on 2 cores) in local sandboxes, and
 * each is graded in a fresh one. Prints episodes/s and the sandbox commands an episode takes
 * by kind (a command is a bwrap start and ~5 processes: the cost that grows with them), the
 * processes started and CPU seconds spent machine-wide an episode (/proc/stat: run it on an
 * idle machine), and writes bench/results/oracle-episodes.json. `--disk` picks what holds each
 * sandbox's files as root (the local backend's `disk`: 'image', the default, or 'tmpfs').
 *
 *   node dist/bench/oracle-episodes.js [--tasks N] [--samples N] [--concurrency N] [--disk image|tmpfs] [--out FILE]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { parseAgentLoopOptions } from '../lib/agent/agent-loop.js';
import { runRollouts } from '../lib/agent/rollout.js';
import { EditOraclePolicy } from '../lib/agent/scripted-policy.js';
import { createSandboxBackend } from '../lib/env/sandbox/backends.js';
import type { Sandbox } from '../lib/env/sandbox/sandbox.js';
import { SweEnv } from '../lib/env/swe-env.js';
import { writeSweGenSuite } from '../lib/env/swe-gen/index.js';
import { NativePolicy } from '../lib/model/native-policy.js';
import { packageRoot } from '../lib/native.js';
import { writeJsonAtomic } from '../lib/util/atomic.js';
import { count, flag } from './args.js';
import { machineCounters } from './stats.js';

const tasks = count('--tasks', 48);
const concurrency = count('--concurrency', 8);
/** Episodes of each task, as an RL step's group plays it (4 in the demo's 32 x 4 step). */
const samples = count('--samples', 1);
const episodeCount = tasks * samples;
const disk = flag('--disk') ?? 'image';
if (disk !== 'image' && disk !== 'tmpfs') throw new Error(`--disk must be image or tmpfs (got ${disk})`);
const out = flag('--out') ?? path.join(packageRoot(), 'bench', 'results', 'oracle-episodes.json');

/** A command's kind for the table: its first two words. */
const kindOf = (command: string) => command.trim().split(/\s+/).slice(0, 2).join(' ').slice(0, 28);

const dir = mkdtempSync(path.join(os.tmpdir(), 'swerl-bench-oracle-'));
try {
  // Train-split seeds far from the demo's, the demo's knobs (one or two functions of 4-20 lines).
  const suite = await writeSweGenSuite(dir, { split: 'train', firstSeed: 900_000, count: tasks, functions: { min: 1, max: 2 }, lines: { min: 4, max: 20 } });
  const reader = await NativePolicy.load(path.join(packageRoot(), 'models', 'swe-reader'), { device: 'cpu', threads: 1 });
  const tokenizer = reader.tokenizer;
  reader.dispose();

  const backend = await createSandboxBackend('local', { label: 'swerl-bench-oracle', disk });
  const commands = new Map<string, number>();
  let sandboxes = 0;
  const create = backend.create.bind(backend);
  backend.create = async (spec): Promise<Sandbox> => {
    const sandbox = await create(spec);
    sandboxes++;
    const exec = sandbox.exec.bind(sandbox);
    sandbox.exec = (command, options) => {
      commands.set(kindOf(command), (commands.get(kindOf(command)) ?? 0) + 1);
      return exec(command, options);
    };
    return sandbox;
  };

  const machineBefore = machineCounters();
  const started = performance.now();
  const episodes = await runRollouts(
    suite.tasks.flatMap((task, i) => Array.from({ length: samples }, (_, sample) => ({ taskId: task.id, task, group: i, sample, makeEnv: () => new SweEnv(task, backend, { prompt: 'compact', maxSteps: 6, rewardTimeoutMs: 60_000 }) }))),
    new EditOraclePolicy({ tokenizer, recovery: 0.3 }),
    {
      concurrency,
      generationConcurrency: 0,
      retries: 1,
      agent: parseAgentLoopOptions({ maxTurns: 6, promptBudget: 1024, responseBudget: 2048, maxTokensPerTurn: 256, trajectoryTimeoutMs: 300_000, stepTimeoutMs: 30_000, temperature: 0 }, 'agent'),
    },
  );
  const seconds = (performance.now() - started) / 1000;
  const machineAfter = machineCounters();
  // Machine-wide, so run it on an otherwise idle machine: every process an episode starts and
  // the CPU they use, which load does not stretch as it stretches episodes/s.
  const processesPerEpisode = machineAfter && machineBefore ? (machineAfter.processes - machineBefore.processes) / episodeCount : null;
  const cpuSecondsPerEpisode = machineAfter && machineBefore ? (machineAfter.cpuSeconds - machineBefore.cpuSeconds) / episodeCount : null;
  const resolved = episodes.filter((e) => e.reward === 1).length;
  const total = [...commands.values()].reduce((a, b) => a + b, 0);
  const byKind = [...commands].sort((a, b) => b[1] - a[1]).map(([kind, n]) => ({ kind, perEpisode: n / episodeCount }));

  console.log(`edit oracle, ${tasks} swe-gen tasks x ${samples} episodes, concurrency ${concurrency}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'cpu'})`);
  console.log(`${seconds.toFixed(1)} s, ${(episodeCount / seconds).toFixed(2)} episodes/s, ${resolved}/${episodeCount} resolved, ${(sandboxes / episodeCount).toFixed(1)} sandboxes and ${(total / episodeCount).toFixed(1)} sandbox commands an episode`);
  if (processesPerEpisode !== null && cpuSecondsPerEpisode !== null) {
    console.log(`machine-wide: ${processesPerEpisode.toFixed(1)} processes started and ${cpuSecondsPerEpisode.toFixed(2)} CPU seconds an episode`);
  }
  console.log('| command | per episode |\n|---|---|');
  for (const row of byKind) console.log(`| \`${row.kind}\` | ${row.perEpisode.toFixed(2)} |`);
  await writeJsonAtomic(out, {
    machine: { cpu: os.cpus()[0]?.model ?? 'unknown', cores: os.cpus().length },
    tasks,
    samples,
    concurrency,
    disk,
    seconds,
    episodesPerSecond: episodeCount / seconds,
    resolved,
    sandboxesPerEpisode: sandboxes / episodeCount,
    commandsPerEpisode: total / episodeCount,
    processesPerEpisode,
    cpuSecondsPerEpisode,
    byKind,
  });
  console.log(`wrote ${out}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
