/**
 * `swerl view` over real run directories: train() makes a FrozenLake run (2 steps) and a
 * swe-mini run (1 step) from scratch, and the oracle policy solves a swe-mini task through the
 * real agent loop and sandbox, its eval report written by `swerl eval`'s writer and its
 * trajectory saved as the trainer saves one (a model from scratch never writes a patch, and
 * the viewer's diff needs one). Then the JSON API is checked against those files, its refusals
 * (traversal, bad steps, other hosts), and the page in headless Chromium: no console error or
 * failed request, curves drawn (and seen in a screenshot), a trajectory's turns, loss mask,
 * patch and tests, the eval report, and a live run's new step appearing.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import t from 'tap';

import { parseAgentLoopOptions } from '../../../lib/agent/agent-loop.js';
import { OraclePolicy } from '../../../lib/agent/scripted-policy.js';
import { evaluatePolicy, writeEvalOutputs } from '../../../lib/eval/evaluate.js';
import { LocalSandboxBackend } from '../../../lib/env/sandbox/local.js';
import { SweEnv } from '../../../lib/env/swe-env.js';
import { loadSwerlTaskFolder } from '../../../lib/env/tasks/swerl-folder.js';
import { ByteTokenizer } from '../../../lib/model/byte-tokenizer.js';
import { RunDirectory, type SavedTrajectory } from '../../../lib/train/run-dir.js';
import { train } from '../../../lib/train/trainer.js';
import { openingMessages } from '../../../lib/view/prompt-messages.js';
import { startViewer, type Viewer } from '../../../lib/view/server.js';
import type { TokenPiece } from '../../../lib/view/token-pieces.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const SWE_MINI = path.join(ROOT, 'tasks/swe-mini');
const ORACLE_TASK = 'js-csv-writer';

// A folder of our own, readable by the sandboxes' own uids (as root, swerl runs them as others).
const tmp = mkdtempSync(path.join(os.tmpdir(), 'swerl-view-'));
chmodSync(tmp, 0o755);
t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
const sandboxRoot = path.join(tmp, 'sandboxes');
const dirs = { frozenlake: path.join(tmp, 'frozenlake'), swe: path.join(tmp, 'swe-mini'), oracle: path.join(tmp, 'swe-oracle') };

async function makeRuns(): Promise<void> {
  await train({
    run: { dir: dirs.frozenlake, steps: 2, seed: 3, checkpointEvery: 1, progress: 'none' },
    model: { preset: 'qwen3-tiny', threads: 1 },
    optimizer: { lr: 0.002, weightDecay: 0, maxGradNorm: 1 },
    tasks: { kind: 'frozenlake', size: 2, holeDensity: 0.2, maxSteps: 3, prompt: 'short', trainSeeds: [0, 1, 2, 3], formatWarmupSteps: 0 },
    // DAPO's overlong penalty gives trajectories shaped rewards of their own: nonzero advantages.
    algorithm: { preset: 'grpo++', overlong: { maxLength: 384, bufferLength: 320 } },
    rollout: { tasksPerStep: 2, samplesPerTask: 2, concurrency: 4, maxTurns: 3, promptBudget: 256, responseBudget: 384, maxTokensPerTurn: 32 },
    eval: { every: 1 },
  });
  const example = JSON.parse(readFileSync(path.join(ROOT, 'examples/swe-mini.json'), 'utf8'));
  // One turn of two tokens: the ~6k-token prompt's prefill is what a step costs on CPU.
  await train({
    ...example,
    run: { ...example.run, dir: dirs.swe, steps: 1, checkpointEvery: 1, progress: 'none' },
    model: { ...example.model, threads: 1 },
    tasks: { ...example.tasks, path: SWE_MINI, sandboxOptions: { root: sandboxRoot } },
    rollout: { ...example.rollout, tasksPerStep: 1, samplesPerTask: 2, concurrency: 2, maxTurns: 1, maxTokensPerTurn: 2 },
    eval: { every: 0 },
  });

  const task = await loadSwerlTaskFolder(path.join(SWE_MINI, ORACLE_TASK));
  const backend = new LocalSandboxBackend({ root: sandboxRoot });
  const { report, byRun } = await evaluatePolicy(new OraclePolicy(), [{ id: task.id, task, makeEnv: () => new SweEnv(task, backend, { maxSteps: 5 }) }], {
    runs: 1,
    // A byte per token: the oracle's first turn carries the whole patch.
    agent: parseAgentLoopOptions({ maxTurns: 5, promptBudget: 1 << 16, responseBudget: 1 << 20, maxTokensPerTurn: 1 << 18, temperature: 0 }, 'agent'),
    concurrency: 1,
    retries: 0,
    modelName: 'swerl-oracle',
    seed: 0,
  });
  await writeEvalOutputs(path.join(dirs.swe, 'eval-oracle'), report, byRun);
  const oracleRun = new RunDirectory(dirs.oracle);
  await oracleRun.create(JSON.parse(readFileSync(path.join(dirs.swe, 'config.json'), 'utf8')), false);
  await oracleRun.writeTrajectories(1, byRun[0]!, (x) => ({ shapedReward: x.reward, advantage: 0, filtered: false, kept: true }));
}

const started = performance.now();
await makeRuns();
t.comment(`run directories made in ${((performance.now() - started) / 1000).toFixed(1)} s`);

const viewer: Viewer = await startViewer({ dirs: [dirs.frozenlake, dirs.swe, dirs.oracle] });
t.teardown(() => viewer.close());
const RUN = { frozenlake: 0, swe: 1, oracle: 2 };

/** A GET with the path sent as written (no client-side normalizing of ../), and a Host header. */
function get(pathname: string, options: { host?: string; method?: string } = {}): Promise<{ status: number; body: any; headers: http.IncomingHttpHeaders }> {
  const url = new URL(viewer.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path: pathname, method: options.method ?? 'GET', headers: { host: options.host ?? url.host } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // The page's files are not JSON.
        }
        resolve({ status: res.statusCode!, body, headers: res.headers });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

function savedTrajectories(dir: string, step: number): Promise<SavedTrajectory[]> {
  return new RunDirectory(dir).readTrajectories(step);
}

t.test('the API serves what the run directories hold', async (t) => {
  t.same(viewer.runs.map((r) => r.name), ['frozenlake', 'swe-mini', 'swe-oracle']);
  const { body: list } = await get('/api/runs');
  t.same(list.runs.map((r: any) => [r.id, r.name, r.config?.tasks?.kind, r.lastStep]), [[0, 'frozenlake', 'frozenlake', 2], [1, 'swe-mini', 'swe', 1], [2, 'swe-oracle', 'swe', null]]);
  t.ok(list.runs[0].summary, 'a finished run has its summary.json');

  const { body: metrics } = await get('/api/runs/0/metrics');
  t.same(metrics.rows, await new RunDirectory(dirs.frozenlake).readMetrics(), 'metrics.jsonl row for row');
  t.same(metrics.rows.map((r: any) => r.step), [0, 1, 2], 'the step-0 eval row first');
  t.same((await get('/api/runs/0/steps')).body, { steps: [1, 2] });
  t.same((await get('/api/runs/1/steps')).body, { steps: [1] });

  const saved = await savedTrajectories(dirs.frozenlake, 1);
  const { body: step } = await get('/api/runs/0/steps/1');
  t.equal(step.trajectories.length, saved.length);
  t.same(step.trajectories.map((x: any) => [x.taskId, x.group, x.sample, x.advantage, x.filtered, x.kept, x.turns]), saved.map((x) => [x.taskId, x.group, x.sample, x.advantage, x.filtered, x.kept, x.turns.length]));

  // One trajectory whole: its pieces decode the tokens, each piece wholly in or out of the mask.
  const tokenizer = new ByteTokenizer();
  for (const [run, dir] of [[RUN.frozenlake, dirs.frozenlake], [RUN.swe, dirs.swe]] as const) {
    const x = (await savedTrajectories(dir, 1))[1]!;
    const { status, body } = await get(`/api/runs/${run}/steps/1/trajectories/1`);
    t.equal(status, 200);
    t.notOk('tokens' in body || 'mask' in body, 'the ids come as pieces, not as arrays');
    const pieces: TokenPiece[] = body.pieces;
    t.equal(pieces.map((p) => p.text).join(''), tokenizer.decode(x.tokens), `run ${run}: the pieces put together are the decoded conversation`);
    t.same(pieces.flatMap((p) => p.ids), x.tokens, 'every token in one piece, in order');
    t.ok(pieces.every((p) => p.ids.every((_, i) => x.mask[p.start + i] === (p.sampled ? 1 : 0))), 'a piece is sampled exactly when its tokens are in the mask');
    t.ok(pieces.some((p) => p.sampled) && pieces.some((p) => !p.sampled));
    t.ok(pieces.some((p) => p.special && p.text === '<|im_start|>'), 'ChatML tokens are marked special');
    t.equal(body.messagesSource, 'saved', 'the agent loop records the opening messages');
    t.same(body.messages.map((m: any) => m.role), ['system', 'user']);
    t.same(body.messages, x.messages);
    // Runs saved before the messages were recorded: read back from the prompt's tokens.
    const { messages: _, ...older } = x;
    t.same(openingMessages(older, tokenizer), { messages: x.messages, source: 'decoded' }, 'the prompt tokens decode to the same messages');
    t.same(body.turns, x.turns);
  }
  const swe = (await get('/api/runs/1/steps/1/trajectories/0')).body;
  t.match(swe.messages[1].content, /<issue>/, 'the swe prompt holds the issue');
  const oracle = (await get('/api/runs/2/steps/1/trajectories/0')).body;
  t.equal(oracle.reward, 1, 'the oracle solves its task');
  const [oracleSaved] = await savedTrajectories(dirs.oracle, 1);
  t.ok(oracleSaved!.goldSimilarity! > 0.5, `the oracle's patch is close to the gold patch (${oracleSaved!.goldSimilarity})`);
  t.equal((await get('/api/runs/2/steps/1')).body.trajectories[0].goldSimilarity, oracleSaved!.goldSimilarity, 'its similarity to the gold patch in the step\'s list');
  t.notOk('goldSimilarity' in step.trajectories[0], 'and none for FrozenLake, which has no gold patch');
  t.ok(Object.keys(oracle.tests).length > 0, 'SWE grading: the per-test statuses');
  t.match(oracle.patch, /^diff --git/m);

  const { body: evals } = await get('/api/runs/1/evals');
  t.same(evals.reports.map((r: any) => [r.path, r.model, r.passAt1]), [['eval-oracle/report.json', 'swerl-oracle', 1]]);
  const { body: report } = await get('/api/runs/1/eval?path=eval-oracle%2Freport.json');
  t.equal(report.report.perTask[0].id, ORACLE_TASK);
  t.same(Object.keys(report.predictions), ['predictions-run-0.jsonl'], 'predictions.jsonl, a copy of run 0, is left out');
  t.match(report.predictions['predictions-run-0.jsonl'][0], { instance_id: ORACLE_TASK, model_patch: /^diff --git/ });
});

t.test('the API refuses paths outside the runs, bad numbers, other hosts and writes', async (t) => {
  const outside = path.relative(dirs.swe, path.join(ROOT, 'package.json'));
  symlinkSync(ROOT, path.join(dirs.swe, 'escape'));
  const refusals: [string, number][] = [
    ['/api/runs/1/eval?path=escape%2Fpackage.json', 400], // a link out of the run
    [`/api/runs/1/eval?path=${encodeURIComponent(outside)}`, 400],
    ['/api/runs/1/eval?path=..%2Fswe-oracle%2Fconfig.json', 400],
    ['/api/runs/1/eval?path=%2Fetc%2Fpasswd', 400],
    ['/api/runs/1/eval?path=config.json', 404], // inside, but no eval report
    ['/api/runs/1/eval', 400],
    ['/static/../../../package.json', 404],
    ['/static/..%2F..%2F..%2Fpackage.json', 404],
    ['/static/%2e%2e/view-run.ts', 404],
    ['/api/runs/0/steps/abc', 400],
    ['/api/runs/0/steps/-1', 400],
    ['/api/runs/0/steps/01', 400],
    ['/api/runs/0/steps/1e3', 400],
    ['/api/runs/0/steps/99', 404],
    ['/api/runs/0/steps/1/trajectories/99', 404],
    ['/api/runs/0/steps/1/trajectories/x', 400],
    ['/api/runs/3/metrics', 404],
    ['/api/runs/..%2F..%2Fetc/metrics', 400],
    ['/api/nothing', 404],
  ];
  for (const [pathname, status] of refusals) {
    const r = await get(pathname);
    t.equal(r.status, status, `${pathname}: ${status} (${JSON.stringify(r.body).slice(0, 120)})`);
    t.notMatch(JSON.stringify(r.body), /"name": "swerl"/, `${pathname}: package.json is not served`);
  }
  t.equal((await get('/api/runs', { host: 'attacker.example:80' })).status, 403, 'another Host (DNS rebinding) is refused');
  t.equal((await get('/api/runs', { method: 'POST' })).status, 405);
  const page = await get('/');
  t.equal(page.status, 200);
  t.match(page.headers['content-security-policy'], /script-src 'self'/);
});

t.test('startViewer refuses what is not a run', async (t) => {
  await t.rejects(startViewer({ dirs: [] }), { code: 'ERR_SWERL_INVALID_ARG', message: /dirs is empty/ });
  await t.rejects(startViewer({ dirs: [path.join(tmp, 'missing')] }), { code: 'ERR_SWERL_INVALID_ARG', message: /not a directory/ });
  await t.rejects(startViewer({ dirs: [sandboxRoot] }), { code: 'ERR_SWERL_INVALID_ARG', message: /no run directory/ });
  await t.rejects(startViewer({ dirs: [tmp], port: 70000 }), { code: 'ERR_SWERL_INVALID_ARG', message: /port/ });
  // A folder of runs is its runs.
  const all = await startViewer({ dirs: [tmp] });
  t.same(all.runs.map((r) => r.name), ['frozenlake', 'swe-mini', 'swe-oracle']);
  await all.close();
});

function findChromium(): string | undefined {
  for (const name of ['chromium', 'chromium-browser']) {
    try {
      return execFileSync('which', [name], { encoding: 'utf8' }).trim();
    } catch {
      // Not on PATH under this name.
    }
  }
  return undefined;
}

const chromium = findChromium();
t.test('the page in headless Chromium', { skip: chromium ? false : 'no chromium binary on PATH (scripts/setup-debian.sh installs Debian\'s chromium)' }, async (t) => {
  const { default: puppeteer } = await import('puppeteer-core');
  const browser = await puppeteer.launch({
    executablePath: chromium!,
    args: ['--headless=new', ...(process.getuid?.() === 0 ? ['--no-sandbox'] : [])],
  });
  t.teardown(() => browser.close());
  const page = await browser.newPage();
  await page.setViewport({ width: 1400, height: 1000 });
  const problems: string[] = [];
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  page.on('pageerror', (e) => problems.push(`page error: ${(e as Error).message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
  page.on('response', (r) => r.status() >= 400 && problems.push(`HTTP ${r.status()}: ${r.url()}`));
  const shots = process.env.SWERL_VIEW_SCREENSHOTS ?? path.join(tmp, 'screenshots');
  mkdirSync(shots, { recursive: true });
  /** Goes to #/route and waits until the page has shown it (app.js sets body[data-route] then). */
  const show = async (route: string) => {
    await page.evaluate((hash) => {
      document.body.removeAttribute('data-route');
      location.hash = hash;
    }, `#/${route}`);
    await page.waitForSelector(`body[data-route="${route}"]`);
  };

  // Curves: a panel per metric, every run's series drawn.
  await page.goto(`${viewer.url}#/curves`, { waitUntil: 'networkidle0' });
  await page.waitForSelector('body[data-route="curves"] #charts .chart');
  const charts = await page.$$eval('#charts .chart', (els) => els.map((el) => ({
    title: el.querySelector('.chart-title')!.textContent,
    series: [...el.querySelectorAll('g.series')].map((g) => ({
      label: g.getAttribute('data-series'),
      d: g.querySelector('path.line')!.getAttribute('d'),
      dash: g.querySelector('path.line')!.getAttribute('stroke-dasharray'),
      marker: g.querySelector('.marker')?.tagName,
      markers: g.querySelectorAll('.marker').length,
    })),
  })));
  const byTitle = new Map(charts.map((c) => [c.title, c]));
  for (const key of ['reward/mean', 'reward/shapedMean', 'loss/entropy', 'loss/approxKl', 'loss/clipFracLow', 'loss/gradNorm', 'loss/lr', 'length/responseMean', 'turns/mean', 'eval/success', 'time/stepSeconds']) {
    t.ok(byTitle.has(key), `a panel for ${key}`);
  }
  const reward = byTitle.get('reward/mean')!;
  t.same(reward.series.map((s) => s.label), ['frozenlake', 'swe-mini'], 'both training runs overlaid');
  t.match(reward.series[0]!.d, /^M[\d.]+,[\d.]+L[\d.]+,[\d.]+$/, 'frozenlake: a line through its 2 steps');
  t.same(reward.series.map((s) => s.markers), [2, 1], 'a marker per point');
  // Both runs' rewards are 0 at step 1: they differ in dash and marker, so neither hides the other.
  t.not(reward.series[0]!.dash, reward.series[1]!.dash);
  t.not(reward.series[0]!.marker, reward.series[1]!.marker);
  t.same(byTitle.get('eval/success')!.series.map((s) => s.markers), [3], 'eval/success from the step-0 eval row on');

  // Hover values.
  const overlay = (await page.$('#charts .chart .overlay'))!;
  const box = (await overlay.boundingBox())!;
  await page.mouse.move(box.x + box.width - 2, box.y + box.height / 2);
  t.match(await page.$eval('#charts .chart .tooltip', (el) => ((el as HTMLElement).hidden ? '' : el.textContent)), /step 2.*frozenlake: /, 'the tooltip names the step and the values');
  const shot = await page.screenshot({ path: path.join(shots, 'curves.png') });
  // The screenshot decoded in the page: the runs' colours are there, and more than a few colours.
  const colours = await page.evaluate(async (png: string) => {
    const image = new Image();
    image.src = `data:image/png;base64,${png}`;
    await image.decode();
    const canvas = document.createElement('canvas');
    canvas.width = image.width;
    canvas.height = image.height;
    const context = canvas.getContext('2d')!;
    context.drawImage(image, 0, 0);
    const data = context.getImageData(0, 0, image.width, image.height).data;
    const seen = new Set<number>();
    let blue = 0;
    let red = 0;
    for (let i = 0; i < data.length; i += 4) {
      const [r, g, b] = [data[i]!, data[i + 1]!, data[i + 2]!];
      seen.add((r << 16) | (g << 8) | b);
      if (Math.abs(r - 0x1f) < 24 && Math.abs(g - 0x77) < 24 && Math.abs(b - 0xb4) < 24) blue++;
      if (Math.abs(r - 0xd6) < 24 && Math.abs(g - 0x27) < 24 && Math.abs(b - 0x28) < 24) red++;
    }
    return { distinct: seen.size, blue, red };
  }, Buffer.from(shot).toString('base64'));
  t.ok(colours.distinct > 50, `the screenshot is no flat image (${colours.distinct} colours)`);
  t.ok(colours.blue > 200 && colours.red > 50, `the runs' series colours are drawn (${colours.blue} blue, ${colours.red} red pixels)`);

  // Smoothing: the smoothed line in front, the raw one faint behind it.
  await page.$eval('#smoothing', (el) => {
    (el as HTMLInputElement).value = '0.8';
    el.dispatchEvent(new Event('input'));
  });
  t.ok(await page.$$eval('#charts g.series path[stroke-opacity="0.25"]', (els) => els.length) > 0, 'raw series drawn faintly once smoothing is on');

  // A FrozenLake trajectory: the opening messages, every turn, the loss mask on the tokens.
  const flSaved = (await savedTrajectories(dirs.frozenlake, 1))[0]!;
  await show(`trajectories/${RUN.frozenlake}/1/0`);
  const roles = await page.$$eval('.conversation .message .role', (els) => els.map((el) => el.textContent));
  t.same(roles.slice(0, 2), ['system', 'user']);
  t.equal(roles.filter((r) => r === 'assistant').length, flSaved.turns.length, 'an assistant block per turn');
  t.match(await page.$eval('.detail-header', (el) => el.textContent), new RegExp(`termination\\s*${flSaved.termination}`));
  await page.click('.subtabs button[data-section=tokens]');
  await page.waitForSelector('pre.tokens .tok');
  const sampledTokens = await page.$$eval('pre.tokens .tok.sampled', (els) => els.length);
  t.ok(sampledTokens > 0 && (await page.$$eval('pre.tokens .tok.context', (els) => els.length)) > 0, 'sampled tokens highlighted apart from the context');
  const highlight = await page.$eval('pre.tokens .tok.sampled', (el) => getComputedStyle(el).backgroundColor);
  t.not(highlight, 'rgba(0, 0, 0, 0)', 'sampled tokens have a background');
  t.equal(await page.$eval('pre.tokens', (el) => el.textContent), new ByteTokenizer().decode(flSaved.tokens), 'the token view is the whole conversation');
  await page.screenshot({ path: path.join(shots, 'tokens.png') });

  // The oracle's swe-mini trajectory: its tool calls, its patch as a diff, its tests.
  await show(`trajectories/${RUN.oracle}/1/0`);
  const oracleSaved = (await savedTrajectories(dirs.oracle, 1))[0]!;
  t.match(await page.$eval('.detail-header', (el) => el.textContent), new RegExp(`gold similarity\\s*${String(Number(oracleSaved.goldSimilarity!.toPrecision(4))).replace('.', '\\.')}`), 'the header shows the similarity to the gold patch');
  t.ok((await page.$$eval('.conversation .call-name', (els) => els.map((el) => el.textContent))).includes('call execute_bash'), 'tool calls shown as calls');
  await page.screenshot({ path: path.join(shots, 'oracle-conversation.png') });
  await page.click('.subtabs button[data-section=patch]');
  await page.waitForSelector('pre.diff');
  t.ok(await page.$$eval('pre.diff .diff-add', (els) => els.length) > 0, 'added lines');
  t.ok(await page.$$eval('pre.diff .diff-hunk', (els) => els.length) > 0, 'hunk headers');
  t.not(await page.$eval('pre.diff .diff-add', (el) => getComputedStyle(el).backgroundColor), await page.$eval('pre.diff .diff-hunk', (el) => getComputedStyle(el).backgroundColor), 'coloured by kind');
  await page.screenshot({ path: path.join(shots, 'patch.png') });
  await page.click('.subtabs button[data-section=tests]');
  const statuses = await page.$$eval('table.tests td.status', (els) => els.map((el) => el.textContent));
  t.ok(statuses.length > 0 && statuses.every((s) => s === 'PASSED'), 'the oracle passes every test');

  // The swe-mini training trajectory: the issue in the prompt, the failing tests.
  await show(`trajectories/${RUN.swe}/1/0`);
  t.match(await page.$eval('.conversation .role-user pre', (el) => el.textContent), /<issue>/, 'markup-like prompt text shown as text');
  await page.screenshot({ path: path.join(shots, 'swe-trajectory.png') });

  // The eval report with its predicted patch.
  await show('evals/1/eval-oracle/report.json');
  t.match(await page.$eval('.eval-report', (el) => el.textContent), /swerl-oracle[\s\S]*100\.0%/);
  t.ok(await page.$$eval('.eval-report details.prediction[open] pre.diff .diff-add', (els) => els.length) > 0, 'the prediction shown as a diff');
  await page.screenshot({ path: path.join(shots, 'evals.png') });

  // Model output is hostile: markup in it stays text.
  const hostile = await page.evaluate(async () => {
    const url = '/static/conversation.js';
    const { renderConversation } = await import(url);
    const evil = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>';
    const el = renderConversation({
      messages: [{ role: 'user', content: evil }], messagesSource: 'saved', termination: 'submitted', reward: 0, rewardReason: evil,
      turns: [{ response: `<think>${evil}</think><function=execute_bash><parameter=cmd>${evil}</parameter></function>`, observation: evil, contextTokens: 0, responseTokens: 1, finishReason: 'stop', observationTokens: 1, generateMs: 1, stepMs: 1 }],
    });
    document.body.append(el);
    return { images: el.querySelectorAll('img, script').length, shown: el.textContent.split(evil).length - 1, pwned: (window as any).pwned ?? null };
  });
  t.same(hostile, { images: 0, shown: 5, pwned: null }, 'markup from the model is never parsed');

  // The page's own arithmetic and parsing.
  const pure = await page.evaluate(async () => {
    const load = (name: string) => import(`/static/${name}.js`);
    const [metrics, conversation, diff] = await Promise.all([load('metrics'), load('conversation'), load('diff')]);
    return {
      flat: [...metrics.flattenRow({ step: 3, reward: { mean: 0.5, by: { a: 1 } }, loss: { entropy: null }, note: 'x', done: true })],
      ema: metrics.ema([{ x: 1, y: 1 }, { x: 2, y: 1 }, { x: 3, y: 4 }], 0.5).map((p: { y: number }) => Number(p.y.toFixed(6))),
      ticks: metrics.niceTicks(-0.1, 1.05),
      // Far from 0 a float k + 1 equals k: the tick loop must end anyway (it once hung the page).
      tinyRangeTicks: metrics.niceTicks(1e6 - 1e-9, 1e6 + 1e-9).length,
      segments: conversation.responseSegments('<think>plan</think>I will look.<function=execute_bash>\n<parameter=cmd>\nls -la\n</parameter>\n</function>')
        .map((x: { kind: string; text: string; name?: string; params?: unknown }) => (x.kind === 'call' ? { kind: x.kind, name: x.name, params: x.params } : x)),
      kinds: ['diff --git a/x b/x', '+++ b/x', '@@ -1 +1 @@', '+a', '-b', ' c'].map(diff.diffLineKind),
    };
  });
  t.same(pure, {
    flat: [['reward/mean', 0.5], ['reward/by/a', 1]],
    ema: [1, 1, 2.714286],
    ticks: [0, 0.25, 0.5, 0.75, 1],
    tinyRangeTicks: pure.tinyRangeTicks <= 11 ? pure.tinyRangeTicks : 'unbounded',
    segments: [{ kind: 'think', text: 'plan' }, { kind: 'text', text: 'I will look.' }, { kind: 'call', name: 'execute_bash', params: [{ name: 'cmd', value: 'ls -la' }] }],
    kinds: ['meta', 'meta', 'hunk', 'add', 'del', 'context'],
  }, 'metrics flattening, EMA, ticks, response segments, diff lines');

  // A live run: a new step appears without a reload.
  await show('curves');
  const rows = await new RunDirectory(dirs.frozenlake).readMetrics();
  await new RunDirectory(dirs.frozenlake).writeMetrics([...rows, { step: 3, reward: { mean: 0.5 } }]);
  await page.waitForFunction(() => document.querySelector('#charts .chart g.series[data-series="frozenlake"]')?.querySelectorAll('.marker').length === 3, { timeout: 10_000 });
  t.pass('the polled metrics drew step 3');

  t.same(problems, [], 'no console error, page error or failed request');
});
