/**
 * The seccomp profile of docker sandboxes: everything the engine allows, but no new user
 * namespace (unshare or clone with CLONE_NEWUSER; clone3, whose flags seccomp cannot read,
 * answers ENOSYS so that libc falls back to clone). An unprivileged user in a sandbox could
 * otherwise make a namespace where it holds every capability: Podman's default profile allows
 * it (plain `unshare -U` succeeds there). A few syscalls with no place in a test run and a
 * history of kernel bugs are refused too.
 *
 * Each engine takes a profile its own way: Docker's API takes the profile's JSON in
 * `SecurityOpt` (`seccomp=<json>`); Podman's Docker-compatible API takes a path on the engine's
 * host. For a Podman on this machine (a unix socket) the profile is written to a file here; a
 * remote Podman needs the file on its own host, named by the host's `seccompProfile` option.
 */
import { createHash } from 'node:crypto';
import { existsSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { SwerlError } from '../../errors.js';

const CLONE_NEWUSER = 0x10000000;
const EPERM = 1;
const ENOSYS = 38;

export const SANDBOX_SECCOMP_PROFILE = {
  defaultAction: 'SCMP_ACT_ALLOW',
  syscalls: [
    { names: ['unshare', 'clone'], action: 'SCMP_ACT_ERRNO', errnoRet: EPERM, args: [{ index: 0, value: CLONE_NEWUSER, valueTwo: CLONE_NEWUSER, op: 'SCMP_CMP_MASKED_EQ' }] },
    { names: ['clone3'], action: 'SCMP_ACT_ERRNO', errnoRet: ENOSYS },
    { names: ['keyctl', 'add_key', 'request_key', 'bpf', 'userfaultfd', 'perf_event_open', 'kexec_load', 'kexec_file_load'], action: 'SCMP_ACT_ERRNO', errnoRet: EPERM },
  ],
} as const;

export const PROFILE_JSON = JSON.stringify(SANDBOX_SECCOMP_PROFILE);

/**
 * The profile as a file on this machine, named by its content (so that processes sharing the
 * machine write the same file, whole, and never one another's).
 */
export function localSeccompProfilePath(): string {
  const digest = createHash('sha256').update(PROFILE_JSON).digest('hex').slice(0, 16);
  const file = path.join(os.tmpdir(), `swerl-seccomp-${digest}.json`);
  if (!existsSync(file)) {
    const draft = `${file}.${process.pid}.tmp`;
    writeFileSync(draft, PROFILE_JSON, { mode: 0o644 });
    renameSync(draft, file);
  }
  return file;
}

/** The `SecurityOpt` entry that gives a sandbox the profile on an engine of this kind. */
export function seccompSecurityOpt(engine: 'docker' | 'podman', host: { name: string; local: boolean; seccompProfile?: string }, field: string): string {
  if (engine === 'docker') return `seccomp=${PROFILE_JSON}`;
  if (host.seccompProfile !== undefined) return `seccomp=${host.seccompProfile}`;
  if (host.local) return `seccomp=${localSeccompProfilePath()}`;
  throw new SwerlError(
    'ERR_SWERL_SANDBOX',
    `${host.name} is a Podman service on another machine: its Docker-compatible API takes a seccomp profile only as a file on its own host. ` +
      `Write the profile there (\`swerl sandbox seccomp-profile > /etc/swerl/seccomp.json\` on that host) and name it in ${field}.seccompProfile`,
  );
}
