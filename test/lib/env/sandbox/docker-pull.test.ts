/**
 * A task image missing from the Docker host is pulled through the Docker API, with a progress
 * line, from a real registry on loopback (test/support/oci-registry.ts) that a private podman
 * service is told is plain HTTP; a missing image's error says how to get it. Needs its own
 * podman service (the registry setting is read when it starts), so it skips under
 * SWERL_DOCKER_SOCKET.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import { DockerSandboxBackend } from '../../../../lib/env/sandbox/docker.js';
import type { TarEntry } from '../../../../lib/env/sandbox/tar.js';
import type { Sandbox } from '../../../../lib/env/sandbox/sandbox.js';
import { startPodmanService } from '../../../../lib/env/sandbox/podman-service.js';
import { startRegistry } from '../../../support/oci-registry.js';
import { dockerSkipped } from '../../../support/podman.js';

/** sh (dash), sleep and the loader and libc they need: an image a sandbox can start in. */
function minimalRootfs(): TarEntry[] {
  const binaries = { 'bin/sh': '/bin/dash', 'bin/sleep': '/bin/sleep', 'bin/cat': '/bin/cat' };
  const libs = new Set<string>();
  for (const file of Object.values(binaries)) {
    const ldd = spawnSync('ldd', [file], { encoding: 'utf8' }).stdout;
    for (const m of ldd.matchAll(/(\/\S+\.so[.\d]*)/g)) libs.add(m[1]!);
  }
  const entries: TarEntry[] = [];
  const dirs = new Set<string>();
  const add = (name: string, source: string) => {
    for (let d = path.dirname(name); d !== '.'; d = path.dirname(d)) dirs.add(d);
    entries.push({ name, data: readFileSync(source), mode: 0o755 });
  };
  for (const [name, source] of Object.entries(binaries)) add(name, source);
  for (const lib of libs) add(lib.slice(1), lib);
  return [...[...dirs].sort().map((d) => ({ name: `${d}/`, type: 'dir' as const })), ...entries];
}

t.test('pulling a missing task image', { skip: dockerSkipped || process.env.SWERL_DOCKER_SOCKET ? 'needs a private podman service' : false }, async (t) => {
  const registry = await startRegistry('swerl/task', '1', minimalRootfs());
  t.teardown(registry.close);
  const conf = path.join(t.testdir({}), 'registries.conf');
  writeFileSync(conf, `[[registry]]\nlocation = "${registry.host}"\ninsecure = true\n`);
  const saved = process.env.CONTAINERS_REGISTRIES_CONF;
  process.env.CONTAINERS_REGISTRIES_CONF = conf;
  const service = await startPodmanService().finally(() => {
    if (saved === undefined) delete process.env.CONTAINERS_REGISTRIES_CONF;
    else process.env.CONTAINERS_REGISTRIES_CONF = saved;
  });
  t.teardown(service.stop);
  const backend = new DockerSandboxBackend({ socketPath: service.socketPath, label: 'swerl-pull-test' });

  const image = `${registry.host}/swerl/task:1`;
  const written: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    written.push(chunk.toString());
    return write(chunk, ...rest);
  }) as typeof process.stderr.write;
  let sandbox: Sandbox;
  try {
    sandbox = await backend.create({ image, workdir: '/testbed' });
  } finally {
    process.stderr.write = write;
  }
  t.teardown(() => sandbox.destroy());
  t.match(written.join(''), new RegExp(`swerl: pulled ${registry.host.replace(/\./g, '\\.')}/swerl/task:1`), 'a progress line names the image');
  t.ok(registry.requests.some((r) => r.startsWith('GET /v2/swerl/task/blobs/')), 'the layers came from the registry');
  const echo = await sandbox.exec('echo pulled');
  t.equal(echo.output, 'pulled\n', 'a sandbox runs in the pulled image');

  const served = registry.requests.length;
  const again = await backend.create({ image, workdir: '/testbed' });
  await again.destroy();
  t.equal(registry.requests.length, served, 'an image on the host is not pulled again');

  await t.rejects(backend.create({ image: `${registry.host}/swerl/missing:1` }), {
    code: 'ERR_SWERL_SANDBOX',
    message: /image 127\.0\.0\.1:\d+\/swerl\/missing:1 is not on the Docker host and pulling it failed \(.*\); pull it where the registry is reachable and load it here \(docker save IMAGE \| docker load\).*--repos DIR/s,
  });
});
