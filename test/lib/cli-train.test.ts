/**
 * `swerl train` as a child process: the swe-mini example end to end in local sandboxes, resume
 * after kill -9 (FrozenLake and SWE), Ctrl-C, and a bad config. Every SWE run gets its own
 * sandbox root, so "no sandbox left behind" is an empty folder and no process carrying the
 * run's sandbox ids (SWERL_SANDBOX=swerl-train-<pid>-...) in its environment.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import t, { type Test } from 'tap';

import { ByteTokenizer } from '../../lib/model/byte-tokenizer.js';
import { train } from '../../lib/train/trainer.js';
import { mixSeed, tasksForStep } from '../../lib/util/random.js';
import { typescriptExecArgv } from '../support/child-process.js';
import { RunDirectory, type SavedTrajectory } from '../../lib/train/run-dir.js';
import { sandboxProcesses } from '../../lib/env/sandbox/local.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = path.join(ROOT, 'lib/cli.ts');
const SWE_EXAMPLE = path.join(ROOT, 'examples/swe-mini.json');
const FROZENLAKE_EXAMPLE = path.join(ROOT, 'examples/frozenlake.json');
const FILTERED = ['max_context', 'max_steps', 'timeout'];

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

interface Running {
  child: ChildProcess;
  readonly stdout: string;
  readonly stderr: string;
  exited: boolean;
  exit: Promise<Exit>;
}

/** Children still running when the test file ends (a failed or timed-out test) are killed. */
const children = new Set<ChildProcess>();
t.teardown(() => {
  for (const child of children) child.kill('SIGKILL');
});

function swerl(args: string[], env: Record<string, string> = {}): Running {
  const { NODE_OPTIONS: _ignored, ...inherited } = process.env;
  const child = spawn(process.execPath, [...typescriptExecArgv(), CLI, ...args], { env: { ...inherited, ...env }, cwd: ROOT });
  let stdout = '';
  let stderr = '';
  children.add(child);
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const running: Running = {
    child,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    exited: false,
    exit: new Promise((resolve) =>
      child.on('close', (code, signal) => {
        running.exited = true;
        children.delete(child);
        resolve({ code, signal, stdout, stderr });
      }),
    ),
  };
  return running;
}

/** Polls until `ready()`; fails if the child exits first or the time runs out. */
async function waitFor(running: Running, ready: () => boolean, what: string, timeoutMs = 240_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ready()) {
    if (running.exited) throw new Error(`swerl exited before ${what}; stderr:\n${running.stderr}`);
    if (Date.now() > deadline) throw new Error(`no ${what} after ${timeoutMs} ms; stderr:\n${running.stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function readJson(file: string): any {
  return JSON.parse(readFileSync(file, 'utf8'));
}

function metricsRows(dir: string): Record<string, any>[] {
  return readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, any>);
}

/** The steps of the training rows (those with trajectories; eval-only rows are step 0). */
function trainingSteps(dir: string): number[] {
  return metricsRows(dir)
    .filter((r) => r.trajectories !== undefined)
    .map((r) => r.step as number);
}


function trajectories(dir: string, step: number): Promise<SavedTrajectory[]> {
  return new RunDirectory(dir).readTrajectories(step);
}

function completeCheckpoint(dir: string, step: number): boolean {
  return existsSync(path.join(dir, 'checkpoints', `step-${step}`, 'swerl_state.json'));
}

/** Sandbox folders under a local backend's root (optionally only those of one run), meta.json written. */
function sandboxDirs(root: string, prefix = ''): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root).filter((name) => !name.startsWith('.') && name.startsWith(prefix));
}

function readySandboxes(root: string, prefix: string): string[] {
  return sandboxDirs(root, prefix).filter((name) => existsSync(path.join(root, name, 'meta.json')));
}


async function noSandboxProcesses(t: Test, prefix: string, what: string): Promise<void> {
  // A killed bwrap goes down with its parent (--die-with-parent): give the kernel a moment.
  const deadline = Date.now() + 5_000;
  let left = sandboxProcesses((id) => id.startsWith(prefix));
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    left = sandboxProcesses((id) => id.startsWith(prefix));
  }
  t.same(left, [], `${what}: no process of the run's sandboxes remains`);
}

function labelOf(running: Running): string {
  return `swerl-train-${running.child.pid}-`;
}

function sweConfig(dir: string, sandboxRoot: string, steps: number): object {
  const example = readJson(SWE_EXAMPLE);
  return {
    ...example,
    run: { ...example.run, dir, steps, checkpointEvery: 1, progress: 'lines' },
    tasks: { ...example.tasks, path: path.join(ROOT, 'tasks/swe-mini'), sandboxOptions: { root: sandboxRoot } },
    rollout: { ...example.rollout, tasksPerStep: 1, samplesPerTask: 2, concurrency: 2, maxTurns: 1, maxTokensPerTurn: 16 },
    eval: { every: 0 },
  };
}

t.test('swerl train examples/swe-mini.json: every stage of the pipeline in local sandboxes', async (t) => {
  const tmp = t.testdir();
  const dir = path.join(tmp, 'run');
  const sandboxRoot = path.join(tmp, 'sandboxes');
  const example = readJson(SWE_EXAMPLE);
  const run = swerl(['train', SWE_EXAMPLE, '--dir', dir, '--steps', '2'], { SWERL_SANDBOX_ROOT: sandboxRoot });
  const r = await run.exit;
  t.equal(r.code, 0, 'exit 0', { stderr: r.stderr });
  t.match(r.stdout, /^done: 2 step\(s\) in [\d.]+ s, run dir /m);
  t.match(r.stderr, /^step 2\/2 /m, 'a progress line per step');

  // config.json: the resolved config, every default filled in.
  const config = readJson(path.join(dir, 'config.json'));
  t.match(config, {
    run: { dir, steps: 2, seed: example.run.seed, resume: false },
    model: { preset: 'qwen3-tiny', device: 'cpu' },
    tasks: { kind: 'swe', path: path.join(ROOT, 'tasks/swe-mini'), sandbox: 'local' },
    algorithm: { preset: 'grpo++', estimator: 'rloo', truncation: 'mask', aggregation: 'seq-mean-token-sum-norm', normLength: example.rollout.responseBudget },
    rollout: { ...example.rollout, temperature: 1 },
  });

  // metrics.jsonl: the step-0 eval row (eval.every 2), steps 1 and 2 once each.
  const rows = metricsRows(dir);
  t.same(rows.map((x) => x.step), [0, 1, 2]);
  t.same(trainingSteps(dir), [1, 2]);
  t.ok(rows[0]!.eval && rows[2]!.eval, 'evals before the first step and after the last');
  const perStep = example.rollout.tasksPerStep * example.rollout.samplesPerTask;

  const tokenizer = new ByteTokenizer();
  for (const step of [1, 2]) {
    const row = rows[step]!;
    t.equal(row.trajectories, perStep);
    const saved = await trajectories(dir, step);
    t.equal(saved.length, perStep, `step ${step}: tasksPerStep x samplesPerTask trajectories`);
    const ids = readdirSync(path.join(ROOT, 'tasks/swe-mini')).sort();
    const expectedTasks = tasksForStep(ids.length - example.tasks.evalIds.length, example.rollout.tasksPerStep, mixSeed(example.run.seed, 0), step - 1);
    const trainIds = ids.filter((id) => !example.tasks.evalIds.includes(id));
    t.same([...new Set(saved.map((x) => x.taskId))], expectedTasks.map((i) => trainIds[i]), `step ${step}: the tasks of tasksForStep`);
    for (const x of saved) {
      const where = `step ${step} ${x.taskId}/${x.sample}`;
      t.equal(x.tokens.length, x.mask.length);
      t.equal(x.tokens.length, x.logprobs.length);
      t.equal(x.promptTokens + x.responseTokens, x.tokens.length);
      t.ok(x.promptTokens <= example.rollout.promptBudget, `${where}: the prompt (${x.promptTokens} tokens) fits promptBudget`);
      t.ok(x.turns.length >= 1, `${where}: the policy took a turn`);
      // The prompt: the system prompt and this task's issue, none of it trained on.
      const prompt = tokenizer.decode(x.tokens.slice(0, x.promptTokens));
      const issue = readFileSync(path.join(ROOT, 'tasks/swe-mini', x.taskId, 'issue.md'), 'utf8').trim();
      t.ok(prompt.includes(`<issue>\n${issue}\n</issue>`), `${where}: the prompt holds the task's issue`);
      t.ok(x.mask.slice(0, x.promptTokens).every((m) => m === 0), `${where}: no prompt token is masked in`);
      // The mask: 1 exactly on the tokens the policy sampled, which decode to its turns.
      const expected = new Array(x.tokens.length).fill(0);
      for (const turn of x.turns) {
        expected.fill(1, turn.contextTokens, turn.contextTokens + turn.responseTokens);
        t.equal(tokenizer.decode(x.tokens.slice(turn.contextTokens, turn.contextTokens + turn.responseTokens), { skipSpecialTokens: true }), turn.response);
      }
      t.same(x.mask, expected, `${where}: the mask is 1 exactly on assistant-sampled tokens`);
      t.ok(x.logprobs.every((lp, i) => (x.mask[i] === 1 ? lp <= 0 : lp === 0)), `${where}: logprobs only where sampled`);
      // grpo++'s compact filter: max_context / max_steps / timeout -> reward 0, every token out of the loss.
      t.equal(x.filtered, FILTERED.includes(x.termination), `${where}: filtered follows termination ${x.termination}`);
      if (x.filtered) t.equal(x.shapedReward, 0, `${where}: a filtered trajectory scores 0`);
      else t.equal(x.shapedReward, x.reward);
      t.equal(x.kept, true, 'grpo++ has no group filter');
    }
    t.equal(row.filtered, saved.filter((x) => x.filtered).length);
    if (saved.every((x) => x.filtered || x.advantage === 0)) t.equal(row.loss.lossTokens, 0, `step ${step}: nothing to train on (every trajectory filtered or at advantage 0)`);
  }

  t.ok(completeCheckpoint(dir, 2), 'checkpoints/step-2');
  t.ok(existsSync(path.join(dir, 'checkpoints', 'step-2', 'model.safetensors')));
  t.match(readJson(path.join(dir, 'checkpoints', 'step-2', 'swerl_state.json')), { extra: { trainer: { step: 2 } } });
  t.match(readJson(path.join(dir, 'summary.json')), { dir, steps: 2, stopped: false, checkpoint: path.join(dir, 'checkpoints', 'step-2') });
  t.ok(readFileSync(path.join(dir, 'curves.svg'), 'utf8').startsWith('<svg'), 'curves.svg');

  t.same(sandboxDirs(sandboxRoot), [], 'no sandbox folder left');
  t.same(existsSync(path.join(sandboxRoot, '.uids')) ? readdirSync(path.join(sandboxRoot, '.uids')) : [], [], 'no sandbox uid claim left');
  await noSandboxProcesses(t, labelOf(run), 'after the run');
});

t.test('FrozenLake: kill -9 during step 2, then --resume: every step once, the same tasks as a straight run', async (t) => {
  const tmp = t.testdir();
  const dir = path.join(tmp, 'run');
  const example = readJson(FROZENLAKE_EXAMPLE);
  const steps = 3;
  const config = {
    ...example,
    run: { ...example.run, dir, steps, checkpointEvery: 1, keepCheckpoints: 2, progress: 'lines' },
    model: { ...example.model, threads: 1 },
    tasks: { ...example.tasks, trainSeeds: [0, 1, 2, 3, 4, 5], maxSteps: 4, formatWarmupSteps: 0 },
    rollout: { ...example.rollout, tasksPerStep: 2, samplesPerTask: 4, concurrency: 8, maxTurns: 4 },
    eval: { every: 2 },
  };
  const file = path.join(tmp, 'frozenlake.json');
  writeFileSync(file, JSON.stringify(config));

  const killed = swerl(['train', file]);
  await waitFor(killed, () => completeCheckpoint(dir, 1), 'checkpoint step-1');
  killed.child.kill('SIGKILL');
  const k = await killed.exit;
  t.equal(k.signal, 'SIGKILL');
  t.notOk(completeCheckpoint(dir, 2), 'killed before step 2 was checkpointed');

  const resumed = await swerl(['train', file, '--resume']).exit;
  t.equal(resumed.code, 0, 'the resumed run exits 0', { stderr: resumed.stderr });
  t.match(resumed.stderr, /resuming at step 2 /, 'resumed from the step-1 checkpoint');
  t.same(trainingSteps(dir), [1, 2, 3], 'each step exactly once');
  t.same(metricsRows(dir).map((r) => r.step), [0, 1, 2, 3], 'the step-0 eval row, then steps 1..3');
  t.same(metricsRows(dir).filter((r) => r.eval).map((r) => r.step), [0, 2, 3], 'evals before the first step, every 2 steps and after the last');
  t.same(readdirSync(path.join(dir, 'trajectories')).sort(), [1, 2, 3].map((s) => `step-${s}.jsonl.gz`));
  t.match(readJson(path.join(dir, 'summary.json')), { steps, stopped: false });

  // The tasks of each step: tasksForStep over the training maps, as in a run straight through.
  const straightDir = path.join(tmp, 'straight');
  await train({ ...config, run: { ...config.run, dir: straightDir, progress: 'none' } });
  for (let step = 1; step <= steps; step++) {
    const [a, b] = [await trajectories(dir, step), await trajectories(straightDir, step)];
    const groups = tasksForStep(6, 2, mixSeed(config.run.seed, 0), step - 1);
    t.same(a.map((x) => x.taskId), groups.flatMap((seed) => new Array(4).fill(`frozenlake-${seed}`)), `step ${step}: tasksForStep's maps`);
    t.same(a.map((x) => x.taskId), b.map((x) => x.taskId), `step ${step}: the tasks of the straight run`);
    t.same(a.map((x) => x.tokens), b.map((x) => x.tokens), `step ${step}: the very trajectories of the straight run`);
  }
});

t.test('SWE: Ctrl-C during step 2, kill -9 of the resumed run, then --resume: no sandbox outlives its run', async (t) => {
  const tmp = t.testdir();
  const dir = path.join(tmp, 'run');
  const sandboxRoot = path.join(tmp, 'sandboxes');
  const file = path.join(tmp, 'swe.json');
  writeFileSync(file, JSON.stringify(sweConfig(dir, sandboxRoot, 2)));

  // 1. Ctrl-C while step 2's episodes hold sandboxes: exit 130 soon, step 1 kept, nothing left.
  const first = swerl(['train', file]);
  await waitFor(first, () => completeCheckpoint(dir, 1) && readySandboxes(sandboxRoot, labelOf(first)).length > 0, "step 2's sandboxes");
  const interrupted = Date.now();
  first.child.kill('SIGINT');
  const a = await first.exit;
  const seconds = (Date.now() - interrupted) / 1000;
  t.equal(a.code, 130, 'Ctrl-C: exit 130', { stderr: a.stderr });
  // Soon, not all of step 2's episodes first: summary.json below says 1 step. Seconds are shown,
  // not bounded (load moves them).
  t.comment(`exited ${seconds.toFixed(1)} s after SIGINT`);
  t.match(a.stderr, /stopping: closing the running episodes/);
  t.match(a.stdout, /^stopped: 1 step\(s\)/m);
  t.match(readJson(path.join(dir, 'summary.json')), { steps: 1, stopped: true });
  t.same(trainingSteps(dir), [1], 'metrics of the completed step only');
  t.same(readdirSync(path.join(dir, 'trajectories')), ['step-1.jsonl.gz']);
  t.same(sandboxDirs(sandboxRoot), [], 'Ctrl-C: no sandbox folder left');
  await noSandboxProcesses(t, labelOf(first), 'Ctrl-C');

  // 2. Resume, and kill -9 while step 2's episodes hold sandboxes: nothing can clean up.
  const second = swerl(['train', file, '--resume']);
  await waitFor(second, () => readySandboxes(sandboxRoot, labelOf(second)).length > 0, "the resumed step 2's sandboxes");
  second.child.kill('SIGKILL');
  await second.exit;
  const orphans = sandboxDirs(sandboxRoot, labelOf(second));
  t.ok(orphans.length > 0, `kill -9 left ${orphans.length} sandbox folder(s)`);
  await noSandboxProcesses(t, labelOf(second), 'kill -9 (bwrap dies with its parent)');

  // 3. Resume again: the reaper at the first sandbox removes the dead run's folders.
  const third = swerl(['train', file, '--resume']);
  const c = await third.exit;
  t.equal(c.code, 0, 'the resumed run exits 0', { stderr: c.stderr });
  t.match(c.stderr, /resuming at step 2 /);
  t.same(trainingSteps(dir), [1, 2], 'each step exactly once');
  t.match(readJson(path.join(dir, 'summary.json')), { steps: 2, stopped: false });
  for (const orphan of orphans) t.notOk(existsSync(path.join(sandboxRoot, orphan)), `${orphan} was reaped`);
  t.same(sandboxDirs(sandboxRoot), [], 'no sandbox folder left');
  t.same(readdirSync(path.join(sandboxRoot, '.uids')), [], 'no sandbox uid claim left');
  await noSandboxProcesses(t, labelOf(third), 'after the last run');
});

t.test('a bad config exits 2 naming the field', async (t) => {
  const tmp = t.testdir();
  const example = readJson(SWE_EXAMPLE);
  const file = path.join(tmp, 'bad.json');
  writeFileSync(file, JSON.stringify({ ...example, run: { ...example.run, dir: path.join(tmp, 'run') }, rollout: { ...example.rollout, bogus: 1 } }));
  const r = await swerl(['train', file]).exit;
  t.equal(r.code, 2, 'exit 2', { stderr: r.stderr });
  t.match(r.stderr, /^swerl: config\.rollout\.bogus is not a known option/m);
  t.notOk(existsSync(path.join(tmp, 'run')), 'no run directory was made');
});
