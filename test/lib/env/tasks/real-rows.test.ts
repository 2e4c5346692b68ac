/**
 * Real SWE-bench rows (test/fixtures/swe-real: official rows and a shallow clone of their
 * repository) through the commands a user runs: `swerl tasks validate` and `swerl eval
 * --policy oracle`, in the local and the docker backend. Gold scores 1, the untouched
 * repository 0, and every PASS_TO_PASS test passes at the base.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

import t, { type Test } from 'tap';

import { ROOT, runSwerl } from '../../../support/child-process.js';
import { dockerSkipped, startPodmanService } from '../../../support/podman.js';

const ROWS = 'test/fixtures/swe-real/rows.jsonl';
const REPOS = 'test/fixtures/swe-real/repos';
const IDS = ['marshmallow-code__marshmallow-1359', 'marshmallow-code__marshmallow-1229', 'marshmallow-code__marshmallow-1810', 'marshmallow-code__marshmallow-2123'];

interface ValidationJson {
  results: { id: string; ok: boolean; gold: { reward: number }[]; base: { reward: number; brokenPassToPass: string[] }[] }[];
  problems: unknown[];
}

async function validateAndEval(t: Test, sandbox: string, env: Record<string, string>) {
  const dir = t.testdir({});
  const json = path.join(dir, 'validate.json');
  const validate = await runSwerl(['tasks', 'validate', ROWS, '--repos', REPOS, '--sandbox', sandbox, '--runs', '1', '--json', json], env);
  t.equal(validate.code, 0, validate.stderr + validate.stdout);
  t.match(validate.stdout, /4 valid, 0 invalid/);
  const report = JSON.parse(await fs.readFile(json, 'utf8')) as ValidationJson;
  t.same(report.results.map((r) => r.id), IDS);
  for (const r of report.results) {
    t.same(r.gold.map((g) => g.reward), [1], `${r.id}: gold scores 1`);
    t.same(r.base.map((b) => b.reward), [0], `${r.id}: the untouched repository scores 0`);
    t.same(r.base[0]!.brokenPassToPass, [], `${r.id}: PASS_TO_PASS all pass at the base`);
  }

  const out = path.join(dir, 'eval');
  const evaluation = await runSwerl(['eval', '--tasks', ROWS, '--repos', REPOS, '--policy', 'oracle', '--sandbox', sandbox, '--out', out], env);
  t.equal(evaluation.code, 0, evaluation.stderr + evaluation.stdout);
  const evalReport = JSON.parse(await fs.readFile(path.join(out, 'report.json'), 'utf8')) as { passAt1: { mean: number } };
  t.equal(evalReport.passAt1.mean, 1, 'the oracle resolves every row: Pass@1 = 1');
}

t.test('local backend', async (t) => {
  await validateAndEval(t, 'local', { SWERL_CHECKOUT_CACHE: path.join(t.testdir({}), 'checkouts') });
});

t.test('docker backend (podman)', { skip: dockerSkipped ? 'SWERL_SKIP_DOCKER=1' : false }, async (t) => {
  const socket = await startPodmanService(t);
  await validateAndEval(t, 'docker', { DOCKER_HOST: `unix://${socket}`, SWERL_CHECKOUT_CACHE: path.join(t.testdir({}), 'checkouts') });
});

t.test('rows a user gets wrong: errors name the row, the field and the fix', async (t) => {
  const rows = (await fs.readFile(path.join(ROOT, ROWS), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  const dir = t.testdir({
    'dup.jsonl': [rows[0], rows[1], rows[0]].map((r) => JSON.stringify(r)).join('\n') + '\n',
    'unknown.jsonl': JSON.stringify({ ...rows[0], repo: 'someone/else', log_parser: undefined }) + '\n',
    'no-commit.jsonl': JSON.stringify({ ...rows[0], base_commit: '0123456789abcdef0123456789abcdef01234567' }) + '\n',
    empty: {},
  });
  const validate = (...args: string[]) => runSwerl(['tasks', 'validate', ...args, '--runs', '1']);

  const dup = await validate(path.join(dir, 'dup.jsonl'), '--repos', REPOS);
  t.equal(dup.code, 1, 'a duplicate is reported and fails the run');
  t.match(dup.stderr, /dup\.jsonl:3: instance_id marshmallow-code__marshmallow-1359 is a duplicate of line 1/);
  t.match(dup.stdout, /2 valid, 1 invalid \(1 could not be loaded\)/);

  const noRepos = await validate(ROWS);
  t.equal(noRepos.code, 2);
  t.match(noRepos.stderr, /sandbox is local, which runs no container image, but marshmallow-code__marshmallow-1359, .* come only as an image; give a folder of clones .*--repos DIR/);

  const missingClone = await validate(ROWS, '--repos', path.join(dir, 'empty'));
  t.match(missingClone.stderr, /rows\.jsonl:1: marshmallow-code__marshmallow-1359: no clone of marshmallow-code\/marshmallow in .*empty \(looked for .*marshmallow-code__marshmallow and .*marshmallow-code\/marshmallow\); clone it: git clone/);
  const missingFolder = await validate(ROWS, '--repos', path.join(dir, 'nope'));
  t.match(missingFolder.stderr, /the repos folder .*nope does not exist/);

  const noCommit = await validate(path.join(dir, 'no-commit.jsonl'), '--repos', REPOS);
  t.match(noCommit.stderr, /does not hold base_commit 0123456789abcdef0123456789abcdef01234567; fetch it: git -C .* fetch origin 0123456789abcdef/);

  const unknown = await validate(path.join(dir, 'unknown.jsonl'), '--repos', REPOS);
  t.match(unknown.stderr, /unknown\.jsonl:1: row\.repo is "someone\/else", a repository with no built-in SWE-bench test command.*--test-command/);
});

t.test('training on the rows: examples/swe-bench-rows.yaml as the README runs it', async (t) => {
  const dir = path.join(t.testdir({}), 'run');
  const run = await runSwerl(['train', 'examples/swe-bench-rows.yaml', '--dir', dir], { SWERL_CHECKOUT_CACHE: path.join(t.testdir({}), 'checkouts') });
  t.equal(run.code, 0, 'swerl train exits 0', { stderr: run.stderr.slice(-2000) });
  t.match(run.stdout, /done: 1 step\(s\)/);
  const metrics = (await fs.readFile(path.join(dir, 'metrics.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { step?: number; trajectories?: number; rewardHackAttempts?: number });
  const step = metrics.find((m) => m.step === 1 && m.trajectories !== undefined)!;
  t.equal(step.trajectories, 4, 'tasksPerStep x samplesPerTask episodes on real rows');
  t.equal(step.rewardHackAttempts, 0);
});
