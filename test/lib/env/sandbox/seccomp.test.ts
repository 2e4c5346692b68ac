/**
 * How docker sandboxes get their seccomp profile on each engine (that it refuses nested user
 * namespaces is the containment suite's, on a real engine).
 */
import { readFileSync } from 'node:fs';

import t from 'tap';

import { DockerSandboxBackend } from '../../../../lib/env/sandbox/docker.js';
import { PROFILE_JSON, SANDBOX_SECCOMP_PROFILE, localSeccompProfilePath, seccompSecurityOpt } from '../../../../lib/env/sandbox/seccomp.js';
import { cliInProcess } from '../../../support/cli-in-process.js';

t.test('the profile refuses CLONE_NEWUSER to unshare and clone, and clone3 as ENOSYS', async (t) => {
  const rules = SANDBOX_SECCOMP_PROFILE.syscalls;
  t.equal(SANDBOX_SECCOMP_PROFILE.defaultAction, 'SCMP_ACT_ALLOW');
  t.match(rules.find((r) => r.names.includes('unshare' as never)), { names: ['unshare', 'clone'], action: 'SCMP_ACT_ERRNO', args: [{ index: 0, value: 0x10000000, valueTwo: 0x10000000, op: 'SCMP_CMP_MASKED_EQ' }] });
  t.match(rules.find((r) => r.names.includes('clone3' as never)), { action: 'SCMP_ACT_ERRNO', errnoRet: 38 });
});

t.test('each engine takes it its own way', async (t) => {
  t.equal(seccompSecurityOpt('docker', { name: 'tcp://gpu2:2376', local: false }, 'sandbox.hosts.1'), `seccomp=${PROFILE_JSON}`, "Docker: the profile's JSON");
  const local = seccompSecurityOpt('podman', { name: '/run/podman/podman.sock', local: true }, 'sandbox');
  t.equal(local, `seccomp=${localSeccompProfilePath()}`, 'a Podman on this machine: a file here');
  t.equal(readFileSync(localSeccompProfilePath(), 'utf8'), PROFILE_JSON, 'holding the profile');
  t.match(localSeccompProfilePath(), /swerl-seccomp-[0-9a-f]{16}\.json$/, 'named by its content (processes sharing the machine write the same file)');
  t.equal(seccompSecurityOpt('podman', { name: 'tcp://gpu2:8888', local: false, seccompProfile: '/etc/swerl/seccomp.json' }, 'sandbox.hosts.1'), 'seccomp=/etc/swerl/seccomp.json', 'a remote Podman: the file on its host');
  t.throws(() => seccompSecurityOpt('podman', { name: 'tcp://gpu2:8888', local: false }, 'sandbox.hosts.1'), {
    code: 'ERR_SWERL_SANDBOX',
    message: /tcp:\/\/gpu2:8888 is a Podman service on another machine.*swerl sandbox seccomp-profile.*sandbox\.hosts\.1\.seccompProfile/,
  }, 'a remote Podman without it: refused, saying how');
});

t.test('hosts.N.seccompProfile is an absolute path', async (t) => {
  t.throws(() => new DockerSandboxBackend({ hosts: [{ url: 'tcp://gpu2:8888', seccompProfile: 'relative.json' }] }), { code: 'ERR_SWERL_INVALID_ARG', message: /sandbox\.hosts\.0\.seccompProfile/ });
  t.doesNotThrow(() => new DockerSandboxBackend({ hosts: [{ url: 'tcp://gpu2:8888', seccompProfile: '/etc/swerl/seccomp.json' }] }));
});

t.test('swerl sandbox seccomp-profile prints it', async (t) => {
  const r = await cliInProcess('sandbox', 'seccomp-profile');
  t.equal(r.code, 0, r.stderr);
  t.same(JSON.parse(r.stdout), SANDBOX_SECCOMP_PROFILE);
});
