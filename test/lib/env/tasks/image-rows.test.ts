/**
 * A real SWE-bench row run from its image on the docker backend, the way SWE-bench's harness
 * runs it: the image named as the dataset names it (sweb.eval.x86_64.*), the repository at
 * /testbed, the conda env's bin first on PATH. No registry answers here, so the image is built
 * locally with that layout (test/support/row-images.ts says what it holds and what it borrows
 * from the host); a user with registry access runs the same rows from the published images
 * with `swerl tasks validate ROWS --sandbox docker` and no --repos.
 */
import fs from 'node:fs/promises';

import Docker from 'dockerode';
import t from 'tap';

import { DockerSandboxBackend } from '../../../../lib/env/sandbox/docker.js';
import { sweBenchTask } from '../../../../lib/env/tasks/swe-bench.js';
import { validateTasks } from '../../../../lib/env/validate.js';
import { dockerSkipped, startPodmanService } from '../../../support/podman.js';
import { buildSweBenchLayoutImage } from '../../../support/row-images.js';

t.test('marshmallow-code__marshmallow-1359 from an image laid out like sweb.eval: gold 1, base 0', { skip: dockerSkipped ? 'SWERL_SKIP_DOCKER=1' : false, timeout: 600_000 }, async (t) => {
  const socketPath = await startPodmanService(t);
  const docker = new Docker({ socketPath });
  const row = JSON.parse((await fs.readFile('test/fixtures/swe-real/rows.jsonl', 'utf8')).split('\n')[0]!) as { instance_id: string; image: string };
  t.equal(row.image, 'swebench/sweb.eval.x86_64.marshmallow-code_1776_marshmallow-1359:latest');
  await buildSweBenchLayoutImage(docker, row.image, 'test/fixtures/swe-real/repos/marshmallow-code__marshmallow', row.instance_id, 'src');
  t.teardown(() => docker.getImage(row.image).remove({ force: true }).catch(() => undefined));

  const task = sweBenchTask(row);
  t.equal(task.image, row.image, 'no --repos: the row runs from its image');
  t.equal(task.workdir, '/testbed');
  const backend = new DockerSandboxBackend({ socketPath, label: `swerl-image-rows-${process.pid}`, readOnlyBinds: ['/usr', '/etc'] });
  const [result] = await validateTasks([task], backend, { runs: 1 });
  t.same(result!.gold.map((g) => g.reward), [1], `gold scores 1 (${result!.gold[0]!.reason})`);
  t.same(result!.base.map((b) => b.reward), [0], 'the untouched repository scores 0');
  t.same(result!.base[0]!.brokenPassToPass, [], 'PASS_TO_PASS all pass at the base');
  t.ok(result!.ok, result!.problem ?? 'valid');
});
