/**
 * npm run bench:sandbox-scale — many sandboxes alive at once (512: DeepSWE's per-step count):
 * create them all at once (each copying a 2-file repository in), run `echo ok && ls` in each
 * while all are alive, destroy them all. Per backend: wall time, creates/s, create and exec
 * latency percentiles, failures (count and the first messages), and memory (this process's
 * peak RSS, the machine's peak use over its use before). Prints a table and writes
 * bench/results/sandbox-scale.json (-quick.json with --quick: 64 sandboxes).
 *
 *   node dist/bench/sandbox-scale.js [--quick] [--count N] [--backends local,docker] [--hosts N] [--out FILE]
 *
 * The docker backend runs over --hosts (default 2) podman services the bench starts, each
 * with its own container store (independent hosts on this machine), placing each sandbox on
 * the least-loaded one.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { packageRoot } from '../lib/native.js';
import { createSandboxBackend } from '../lib/env/sandbox/backends.js';
import type { DockerSandboxBackend } from '../lib/env/sandbox/docker.js';
import { startPodmanService, type PodmanService } from '../lib/env/sandbox/podman-service.js';
import type { Sandbox, SandboxBackend } from '../lib/env/sandbox/sandbox.js';
import { writeJsonAtomic } from '../lib/util/atomic.js';
import { count, flag } from './args.js';

const quick = process.argv.includes('--quick');
const sandboxes = count('--count', quick ? 64 : 512);
const backends = (flag('--backends') ?? 'local,docker').split(',');
const hostCount = count('--hosts', 2);
const out = flag('--out') ?? path.join(packageRoot(), 'bench', 'results', quick ? 'sandbox-scale-quick.json' : 'sandbox-scale.json');
/** One operation that takes longer than this counts as a failure (and the run goes on). */
const OPERATION_TIMEOUT_MS = 600_000;
const MEMORY_SAMPLE_MS = 250;
const FAILURES_KEPT = 5;

const percentile = (sorted: number[], p: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!);

interface Latency {
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
}

interface Row {
  backend: string;
  hosts?: string[];
  requested: number;
  created: number;
  /** Sandboxes alive at once: those created (none is destroyed before every create has ended). */
  peakAlive: number;
  /** Per docker host, sandboxes on it when all were alive. */
  perHost?: number[];
  wallSeconds: number;
  createSeconds: number;
  execSeconds: number;
  destroySeconds: number;
  createsPerSecond: number;
  create: Latency;
  exec: Latency;
  failures: { create: number; exec: number; destroy: number; first: string[] };
  peakRssBytes: number;
  hostMemoryPeakBytes: number;
}

function latency(times: number[]): Latency {
  const sorted = [...times].sort((a, b) => a - b);
  return { p50Ms: percentile(sorted, 0.5), p95Ms: percentile(sorted, 0.95), p99Ms: percentile(sorted, 0.99), maxMs: sorted.at(-1) ?? NaN };
}

/** The machine's memory in use (total less available), from /proc/meminfo. */
function memoryInUse(): number {
  const info = readFileSync('/proc/meminfo', 'utf8');
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(info)?.[1] ?? 0) * 1024;
  return kib('MemTotal') - kib('MemAvailable');
}

/** Samples the machine's memory in use until stopped; returns the peak rise over the first sample. */
function memoryPeak(): () => number {
  const base = memoryInUse();
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, memoryInUse())), MEMORY_SAMPLE_MS);
  return () => {
    clearInterval(timer);
    return Math.max(peak, memoryInUse()) - base;
  };
}

function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer in ${OPERATION_TIMEOUT_MS / 1000} s`)), OPERATION_TIMEOUT_MS)));
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

/** Runs `op` on every item at once; the times of those that succeeded, and the errors of the others. */
async function allAtOnce<T, R>(items: readonly T[], op: (item: T) => Promise<R>, what: string): Promise<{ results: (R | undefined)[]; times: number[]; errors: string[]; seconds: number }> {
  const started = performance.now();
  const times: number[] = [];
  const errors: string[] = [];
  const results = await Promise.all(
    items.map(async (item) => {
      const t0 = performance.now();
      try {
        const result = await within(op(item), what);
        times.push(performance.now() - t0);
        return result;
      } catch (error) {
        errors.push(`${what}: ${(error as Error).message}`);
        return undefined;
      }
    }),
  );
  return { results, times, errors, seconds: (performance.now() - started) / 1000 };
}

async function scale(name: string, backend: SandboxBackend, repoDir: string, hosts?: string[]): Promise<Row> {
  // Warm-up, not timed: the first create on each host loads its base image and reaps.
  const warm = await Promise.all(Array.from({ length: hosts?.length ?? 1 }, () => backend.create({ repoDir })));
  await Promise.all(warm.map((s) => s.destroy()));

  const stopMemory = memoryPeak();
  const started = performance.now();
  const created = await allAtOnce(Array.from({ length: sandboxes }, (_, i) => i), () => backend.create({ repoDir }), 'create');
  const alive = created.results.filter((s): s is Sandbox => s !== undefined);
  const perHost = hosts ? (backend as DockerSandboxBackend).hosts.map((h) => h.live) : undefined;
  console.error(`${name}: ${alive.length}/${sandboxes} created in ${created.seconds.toFixed(1)} s${perHost ? ` (per host: ${perHost.join(', ')})` : ''}`);
  const execs = await allAtOnce(alive, async (sandbox) => {
    const r = await sandbox.exec('echo ok && ls');
    if (r.exitCode !== 0 || !r.stdout.toString().startsWith('ok\n')) throw new Error(`exit ${r.exitCode}: ${r.output.slice(0, 200)}`);
  }, 'exec');
  console.error(`${name}: ${execs.times.length}/${alive.length} commands in ${execs.seconds.toFixed(1)} s`);
  const destroyed = await allAtOnce(alive, (sandbox) => sandbox.destroy(), 'destroy');
  const wallSeconds = (performance.now() - started) / 1000;
  const hostMemoryPeakBytes = stopMemory();
  console.error(`${name}: destroyed in ${destroyed.seconds.toFixed(1)} s; ${wallSeconds.toFixed(1)} s in all`);

  const errors = [...created.errors, ...execs.errors, ...destroyed.errors];
  return {
    backend: name,
    ...(hosts ? { hosts } : {}),
    requested: sandboxes,
    created: alive.length,
    peakAlive: alive.length,
    ...(perHost ? { perHost } : {}),
    wallSeconds,
    createSeconds: created.seconds,
    execSeconds: execs.seconds,
    destroySeconds: destroyed.seconds,
    createsPerSecond: alive.length / created.seconds,
    create: latency(created.times),
    exec: latency(execs.times),
    failures: { create: created.errors.length, exec: execs.errors.length, destroy: destroyed.errors.length, first: [...new Set(errors)].slice(0, FAILURES_KEPT) },
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
    hostMemoryPeakBytes,
  };
}

const version = (command: string, args: string[]) => {
  const r = spawnSync(command, args, { encoding: 'utf8' });
  return r.error ? undefined : (r.stdout || r.stderr).trim().split('\n')[0];
};

async function main() {
  const repoDir = mkdtempSync(path.join(os.tmpdir(), 'swerl-bench-repo-'));
  writeFileSync(path.join(repoDir, 'module.py'), Array.from({ length: 200 }, (_, i) => `def f${i}(x):\n    return x + ${i}\n`).join('\n'));
  writeFileSync(path.join(repoDir, 'README.md'), '# bench repo\n');
  const rows: Row[] = [];
  const skipped: Record<string, string> = {};
  const services: PodmanService[] = [];
  try {
    for (const name of backends) {
      if (name === 'local') {
        rows.push(await scale('local', await createSandboxBackend('local', { label: 'bench-scale' }), repoDir));
      } else if (name === 'docker') {
        try {
          for (let i = 0; i < hostCount; i++) services.push(await startPodmanService({ privateStore: true }));
        } catch (error) {
          skipped.docker = `podman's services did not start: ${(error as Error).message}`;
          continue;
        }
        const hosts = services.map((s) => s.url);
        const backend = await createSandboxBackend('docker', { hosts, label: 'bench-scale' });
        rows.push(await scale(`docker x${hostCount}`, backend, repoDir, hosts));
      } else {
        throw new Error(`--backends: unknown backend ${name} (local, docker)`);
      }
    }
  } finally {
    for (const service of services) await service.stop();
    rmSync(repoDir, { recursive: true, force: true });
  }

  const ms = (x: number) => (Number.isNaN(x) ? '-' : x.toFixed(0)).padStart(7);
  console.log(`\n${sandboxes} sandboxes alive at once: create all, exec \`echo ok && ls\` in each, destroy all`);
  console.log('backend     created  wall s  creates/s  create p50/p95/p99 ms      exec p50/p95/p99 ms   failures  host mem MiB');
  for (const r of rows) {
    const failures = r.failures.create + r.failures.exec + r.failures.destroy;
    console.log(
      `${r.backend.padEnd(11)} ${`${r.created}/${r.requested}`.padStart(7)} ${r.wallSeconds.toFixed(1).padStart(7)} ${r.createsPerSecond.toFixed(1).padStart(10)}  ` +
        `${ms(r.create.p50Ms)}${ms(r.create.p95Ms)}${ms(r.create.p99Ms)}  ${ms(r.exec.p50Ms)}${ms(r.exec.p95Ms)}${ms(r.exec.p99Ms)} ${String(failures).padStart(9)} ${(r.hostMemoryPeakBytes / 2 ** 20).toFixed(0).padStart(13)}`,
    );
    if (r.perHost) console.log(`            per host at the peak: ${r.perHost.join(', ')}`);
    for (const message of r.failures.first) console.log(`            failed: ${message}`);
  }
  for (const [name, why] of Object.entries(skipped)) console.log(`\n${name}: skipped (${why})`);

  await writeJsonAtomic(out, {
    benchmark: 'sandboxes alive at once: create all, exec in each, destroy all',
    date: new Date().toISOString(),
    machine: {
      cpu: os.cpus()[0]?.model,
      cores: os.cpus().length,
      memoryBytes: os.totalmem(),
      kernel: os.release(),
      podman: version('podman', ['--version']),
      bwrap: version('bwrap', ['--version']),
    },
    method:
      `${sandboxes} creates issued at once (each copies a 2-file repository in), then \`echo ok && ls\` in every sandbox at once, then every destroy at once; ` +
      'latencies from each call to its answer; one warm-up create per host first, not timed; host memory: peak of MemTotal - MemAvailable over its value before, sampled every 250 ms',
    results: rows,
    skipped,
  });
  console.log(`\nwrote ${out}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
