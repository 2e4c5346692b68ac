/**
 * npm run bench:oracle-episodes — what an SWE episode costs on the sandbox side, without a
 * model: the edit oracle plays `--tasks` swe-gen tasks (default 48; the demo's distribution)
 * at `--concurrency` (default 8, as demo:swe's rollouts on 2 cores) in local sandboxes, and
 * each is graded in a fresh one. Prints episodes/s and the sandbox commands an episode takes
 * by kind (a command is a bwrap start and ~5 processes: the cost that grows with them), and
 * writes bench/results/oracle-episodes.json.
 *
 *   node dist/bench/oracle-episodes.js [--tasks N] [--concurrency N] [--out FILE]
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

const tasks = count('--tasks', 48);
const concurrency = count('--concurrency', 8);
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

  const backend = await createSandboxBackend('local', { label: 'swerl-bench-oracle' });
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

  const started = performance.now();
  const episodes = await runRollouts(
    suite.tasks.map((task, i) => ({ taskId: task.id, task, group: i, sample: 0, makeEnv: () => new SweEnv(task, backend, { prompt: 'compact', maxSteps: 6, rewardTimeoutMs: 60_000 }) })),
    new EditOraclePolicy({ tokenizer, recovery: 0.3 }),
    {
      concurrency,
      generationConcurrency: 0,
      retries: 1,
      agent: parseAgentLoopOptions({ maxTurns: 6, promptBudget: 1024, responseBudget: 2048, maxTokensPerTurn: 256, trajectoryTimeoutMs: 300_000, stepTimeoutMs: 30_000, temperature: 0 }, 'agent'),
    },
  );
  const seconds = (performance.now() - started) / 1000;
  const resolved = episodes.filter((e) => e.reward === 1).length;
  const total = [...commands.values()].reduce((a, b) => a + b, 0);
  const byKind = [...commands].sort((a, b) => b[1] - a[1]).map(([kind, n]) => ({ kind, perEpisode: n / tasks }));

  console.log(`edit oracle, ${tasks} swe-gen tasks, concurrency ${concurrency}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'cpu'})`);
  console.log(`${seconds.toFixed(1)} s, ${(tasks / seconds).toFixed(2)} episodes/s, ${resolved}/${tasks} resolved, ${(sandboxes / tasks).toFixed(1)} sandboxes and ${(total / tasks).toFixed(1)} sandbox commands an episode`);
  console.log('| command | per episode |\n|---|---|');
  for (const row of byKind) console.log(`| \`${row.kind}\` | ${row.perEpisode.toFixed(2)} |`);
  await writeJsonAtomic(out, {
    machine: { cpu: os.cpus()[0]?.model ?? 'unknown', cores: os.cpus().length },
    tasks,
    concurrency,
    seconds,
    episodesPerSecond: tasks / seconds,
    resolved,
    sandboxesPerEpisode: sandboxes / tasks,
    commandsPerEpisode: total / tasks,
    byKind,
  });
  console.log(`wrote ${out}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
