/**
 * Real SWE-bench rows of five repositories (test/fixtures/swe-breadth: sympy, astroid, pydicom,
 * requests, marshmallow; official rows and shallow clones of their base commits) through
 * `swerl tasks validate`, as a user runs it: each repository's own test command and log parser
 * (sympy's bin/test, pytest with and without its options), gold scoring 1, the untouched
 * repository 0, PASS_TO_PASS passing at the base. CI takes one row of each repository on the
 * local backend and two on docker; `npm run validate:real` runs every row on both.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

import t, { type Test } from 'tap';

import { sweBenchTask } from '../../../../lib/env/tasks/swe-bench.js';
import { runSwerl } from '../../../support/child-process.js';
import { dockerSkipped, startPodmanService } from '../../../support/podman.js';

const ROWS = 'test/fixtures/swe-breadth/rows.jsonl';
const REPOS = 'test/fixtures/swe-breadth/repos';
const ONE_PER_REPOSITORY = ['sympy__sympy-24443', 'pylint-dev__astroid-1866', 'pydicom__pydicom-1562', 'psf__requests-6028', 'marshmallow-code__marshmallow-1524'];

interface ValidationJson {
  results: { id: string; ok: boolean; problem?: string; gold: { reward: number }[]; base: { reward: number; brokenPassToPass: string[] }[] }[];
}

async function validate(t: Test, ids: string[], sandbox: string, env: Record<string, string>) {
  const json = path.join(t.testdir({}), 'validate.json');
  const run = await runSwerl(['tasks', 'validate', ROWS, '--repos', REPOS, '--sandbox', sandbox, '--runs', '1', '--only', ids.join(','), '--json', json], env);
  t.equal(run.code, 0, run.stderr + run.stdout);
  t.match(run.stdout, new RegExp(`${ids.length} valid, 0 invalid`));
  const report = JSON.parse(await fs.readFile(json, 'utf8')) as ValidationJson;
  t.same(report.results.map((r) => r.id).sort(), [...ids].sort());
  for (const r of report.results) {
    t.same(r.gold.map((g) => g.reward), [1], `${r.id}: gold scores 1`);
    t.same(r.base.map((b) => b.reward), [0], `${r.id}: the untouched repository scores 0`);
    t.same(r.base[0]!.brokenPassToPass, [], `${r.id}: PASS_TO_PASS all pass at the base`);
  }
}

t.test('every row of the fixture names a repository the specs cover, and a clone holds its base commit', async (t) => {
  const rows = (await fs.readFile(ROWS, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { instance_id: string; repo: string });
  const repositories = new Set(rows.map((r) => r.repo));
  t.equal(rows.length, 23, 'with swe-real\'s 4, 27 rows');
  t.same([...repositories].sort(), ['marshmallow-code/marshmallow', 'psf/requests', 'pydicom/pydicom', 'pylint-dev/astroid', 'sympy/sympy']);
  t.equal(new Set(rows.map((r) => r.instance_id)).size, rows.length, 'no row twice');
  for (const repo of repositories) await fs.access(path.join(REPOS, repo.replace('/', '__'), 'HEAD'));
});

t.test("the image a row without an image field maps to is the one the datasets name (SWE-bench's sweb.eval naming)", async (t) => {
  const files = ['test/fixtures/swe-real/rows.jsonl', ROWS];
  for (const file of files) {
    for (const line of (await fs.readFile(file, 'utf8')).trim().split('\n')) {
      const row = JSON.parse(line) as Record<string, unknown>;
      const { image, ...withoutImage } = row;
      t.equal(typeof image, 'string', `${String(row.instance_id)} carries its image`);
      t.equal(sweBenchTask(withoutImage).image, image, `${String(row.instance_id)}: ${String(image)}`);
    }
  }
});

t.test('local backend: one row of each repository', { timeout: 900_000 }, async (t) => {
  await validate(t, ONE_PER_REPOSITORY, 'local', { SWERL_CHECKOUT_CACHE: path.join(t.testdir({}), 'checkouts') });
});

t.test('docker backend (podman): sympy and requests', { timeout: 900_000, skip: dockerSkipped ? 'SWERL_SKIP_DOCKER=1' : false }, async (t) => {
  const socket = await startPodmanService(t);
  await validate(t, ['sympy__sympy-24443', 'psf__requests-6028'], 'docker', { DOCKER_HOST: `unix://${socket}`, SWERL_CHECKOUT_CACHE: path.join(t.testdir({}), 'checkouts') });
});
