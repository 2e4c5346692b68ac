/**
 * npm run bench:sandbox — sandbox latency and throughput: create + exec(`true`) + destroy at
 * concurrency 1, 8 and 32, per backend; a command's cost in a bwrap of its own and in the
 * sandbox's persistent shell (local); and the tools' overhead over a bare exec. Prints a
 * table and writes bench/results/sandbox.json.
 *
 *   node dist/bench/sandbox.js [--quick] [--backends local,docker] [--docker-socket PATH] [--out FILE]
 *
 * The docker backend needs a Docker Engine API: --docker-socket, $DOCKER_HOST, or podman
 * (its service is started on a private socket for the run and stopped after).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { packageRoot } from '../lib/native.js';
import { createSandboxBackend } from '../lib/env/sandbox/backends.js';
import { startPodmanService, type PodmanService } from '../lib/env/sandbox/podman-service.js';
import type { SandboxBackend } from '../lib/env/sandbox/sandbox.js';
import { SweTools } from '../lib/env/tools/index.js';
import { writeJsonAtomic } from '../lib/util/atomic.js';
import { flag } from './args.js';
import { machineCounters, median } from './stats.js';

const quick = process.argv.includes('--quick');
const backends = (flag('--backends') ?? 'local,docker').split(',');
const out = flag('--out') ?? path.join(packageRoot(), 'bench', 'results', quick ? 'sandbox-quick.json' : 'sandbox.json');
const CONCURRENCY = [1, 8, 32];
/** Create+exec+destroy cycles per concurrency level (spread over the workers). */
const CYCLES = quick ? 32 : 128;
const TOOL_CALLS = quick ? 20 : 100;
/** Blocks of commands a way for the command cost, alternating between the two ways. */
const COMMAND_BLOCKS = quick ? 4 : 10;
const COMMAND_BLOCK = 20;
const LOCAL_P50_TARGET_MS = 30;

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

interface LatencyRow {
  backend: string;
  concurrency: number;
  cycles: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  /** Cycles completed per second, all workers together. */
  throughput: number;
}

async function cycleLatency(backend: SandboxBackend, repoDir: string, concurrency: number): Promise<LatencyRow> {
  const times: number[] = [];
  let remaining = CYCLES;
  const started = performance.now();
  const worker = async () => {
    while (remaining > 0) {
      remaining--;
      const t0 = performance.now();
      const sandbox = await backend.create({ repoDir });
      const r = await sandbox.exec('true');
      await sandbox.destroy();
      if (r.exitCode !== 0) throw new Error(`exec(true) exited ${r.exitCode}: ${r.output}`);
      times.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = performance.now() - started;
  times.sort((a, b) => a - b);
  return {
    backend: backend.name,
    concurrency,
    cycles: times.length,
    p50Ms: percentile(times, 0.5),
    p95Ms: percentile(times, 0.95),
    maxMs: times[times.length - 1]!,
    throughput: (times.length / elapsed) * 1000,
  };
}

interface OverheadRow {
  backend: string;
  operation: string;
  medianMs: number;
  /** Over the bare exec of the same work. */
  overheadMs: number;
}

/** Medians of a bare operation and its tool call, measured alternately so that drift hits both. */
async function pairedMedians(n: number, bare: () => Promise<unknown>, tool: () => Promise<unknown>): Promise<[number, number]> {
  const times: [number[], number[]] = [[], []];
  for (let i = 0; i < n; i++) {
    for (const [k, run] of [bare, tool].entries()) {
      const t0 = performance.now();
      await run();
      times[k]!.push(performance.now() - t0);
    }
  }
  return [median(times[0]), median(times[1])];
}

async function toolOverhead(backend: SandboxBackend, repoDir: string): Promise<OverheadRow[]> {
  const sandbox = await backend.create({ repoDir });
  try {
    const tools = new SweTools(sandbox);
    const [bare, bash] = await pairedMedians(TOOL_CALLS, () => sandbox.exec('true'), () => tools.call({ name: 'execute_bash', args: { cmd: 'true' } }));
    const [cat, view] = await pairedMedians(TOOL_CALLS, () => sandbox.exec('cat /testbed/module.py'), () =>
      tools.call({ name: 'file_editor', args: { command: 'view', path: '/testbed/module.py' } }),
    );
    const [grep, search] = await pairedMedians(TOOL_CALLS, () => sandbox.exec('grep -rc needle /testbed'), () =>
      tools.call({ name: 'search', args: { search_term: 'needle', path: '/testbed' } }),
    );
    return [
      { backend: backend.name, operation: 'execute_bash true (vs exec)', medianMs: bash, overheadMs: bash - bare },
      { backend: backend.name, operation: 'file_editor view (vs cat)', medianMs: view, overheadMs: view - cat },
      { backend: backend.name, operation: 'search dir (vs grep -rc)', medianMs: search, overheadMs: search - grep },
    ];
  } finally {
    await sandbox.destroy();
  }
}

interface CommandRow {
  backend: string;
  way: string;
  commands: number;
  medianMs: number;
  /** Machine-wide CPU and processes started a command (run it on an idle machine); null off Linux. */
  cpuMs: number | null;
  processes: number | null;
}

/**
 * What a command (`true`) costs in a bwrap of its own and in the sandbox's persistent shell
 * (SandboxSpec.persistentShell, the agent's sandbox), in blocks that alternate so that drift
 * hits both ways alike.
 */
async function commandCost(backend: SandboxBackend, repoDir: string): Promise<CommandRow[]> {
  const ways = [
    { way: 'a bwrap a command', persistentShell: false },
    { way: 'persistent shell', persistentShell: true },
  ];
  const sandboxes = await Promise.all(ways.map(({ persistentShell }) => backend.create({ repoDir, persistentShell })));
  try {
    const measured = ways.map(() => ({ times: [] as number[], cpuSeconds: 0, processes: 0, counted: true }));
    for (const sandbox of sandboxes) for (let i = 0; i < 5; i++) await sandbox.exec('true'); // the shell started
    for (let block = 0; block < COMMAND_BLOCKS; block++) {
      for (const [k, sandbox] of sandboxes.entries()) {
        const m = measured[k]!;
        const before = machineCounters();
        for (let i = 0; i < COMMAND_BLOCK; i++) {
          const t0 = performance.now();
          const r = await sandbox.exec('true');
          m.times.push(performance.now() - t0);
          if (r.exitCode !== 0) throw new Error(`exec(true) exited ${r.exitCode}: ${r.output}`);
        }
        const after = machineCounters();
        if (before && after) {
          m.cpuSeconds += after.cpuSeconds - before.cpuSeconds;
          m.processes += after.processes - before.processes;
        } else m.counted = false;
      }
    }
    const n = COMMAND_BLOCKS * COMMAND_BLOCK;
    return ways.map(({ way }, k) => {
      const m = measured[k]!;
      return { backend: backend.name, way, commands: n, medianMs: median(m.times), cpuMs: m.counted ? (m.cpuSeconds * 1000) / n : null, processes: m.counted ? m.processes / n : null };
    });
  } finally {
    await Promise.all(sandboxes.map((sandbox) => sandbox.destroy()));
  }
}

/** A Docker API socket: given, from DOCKER_HOST, or podman's service started for this run. */
async function dockerSocket(): Promise<{ socketPath: string; service?: PodmanService } | { skip: string }> {
  const given = flag('--docker-socket') ?? process.env.DOCKER_HOST?.replace(/^unix:\/\//, '');
  if (given) return { socketPath: given };
  try {
    const service = await startPodmanService();
    return { socketPath: service.socketPath, service };
  } catch (error) {
    return { skip: `no --docker-socket, no DOCKER_HOST, and podman's service did not start: ${(error as Error).message}` };
  }
}

async function main() {
  const repoDir = mkdtempSync(path.join(os.tmpdir(), 'swerl-bench-repo-'));
  writeFileSync(path.join(repoDir, 'module.py'), Array.from({ length: 200 }, (_, i) => `def f${i}(x):\n    return x + ${i}  # needle\n`).join('\n'));
  writeFileSync(path.join(repoDir, 'README.md'), '# bench repo\n');
  const latency: LatencyRow[] = [];
  const overhead: OverheadRow[] = [];
  const commands: CommandRow[] = [];
  const skipped: Record<string, string> = {};
  let service: PodmanService | undefined;
  try {
    for (const name of backends) {
      let options: Record<string, unknown> = {};
      if (name === 'docker') {
        const socket = await dockerSocket();
        if ('skip' in socket) {
          skipped.docker = socket.skip;
          continue;
        }
        service = socket.service;
        options = { socketPath: socket.socketPath };
      }
      const backend = await createSandboxBackend(name, options);
      await cycleLatency(backend, repoDir, 1); // warm-up: images, first-start reaping, page cache
      for (const concurrency of CONCURRENCY) {
        const row = await cycleLatency(backend, repoDir, concurrency);
        latency.push(row);
        console.error(`${name} c=${concurrency}: p50 ${row.p50Ms.toFixed(1)} ms`);
      }
      if (name === 'local') commands.push(...(await commandCost(backend, repoDir)));
      overhead.push(...(await toolOverhead(backend, repoDir)));
    }
  } finally {
    await service?.stop();
    rmSync(repoDir, { recursive: true, force: true });
  }

  console.log('\ncreate + exec(true) + destroy');
  console.log('backend  conc  cycles   p50 ms   p95 ms   max ms   cycles/s');
  for (const r of latency) {
    console.log(
      `${r.backend.padEnd(8)} ${String(r.concurrency).padStart(4)} ${String(r.cycles).padStart(7)} ${r.p50Ms.toFixed(1).padStart(8)} ${r.p95Ms.toFixed(1).padStart(8)} ${r.maxMs.toFixed(1).padStart(8)} ${r.throughput.toFixed(1).padStart(10)}`,
    );
  }
  if (commands.length > 0) {
    console.log('\na command (exec true): median wall, and machine-wide CPU and processes started a command');
    console.log('backend  way                     commands  median ms   CPU ms  processes');
    const shown = (x: number | null, digits: number) => (x === null ? 'n/a' : x.toFixed(digits));
    for (const r of commands) console.log(`${r.backend.padEnd(8)} ${r.way.padEnd(22)} ${String(r.commands).padStart(9)} ${r.medianMs.toFixed(1).padStart(10)} ${shown(r.cpuMs, 1).padStart(8)} ${shown(r.processes, 2).padStart(10)}`);
  }
  console.log('\ntool call overhead (median)');
  console.log('backend  operation                        ms    over bare ms');
  for (const r of overhead) console.log(`${r.backend.padEnd(8)} ${r.operation.padEnd(30)} ${r.medianMs.toFixed(2).padStart(7)} ${r.overheadMs.toFixed(2).padStart(10)}`);
  for (const [name, why] of Object.entries(skipped)) console.log(`\n${name}: skipped (${why})`);

  const local1 = latency.find((r) => r.backend === 'local' && r.concurrency === 1);
  const targets = local1 && { localP50AtMost30ms: local1.p50Ms <= LOCAL_P50_TARGET_MS, localP50Ms: local1.p50Ms };
  if (targets) console.log(`\ntarget: local create+exec+destroy p50 <= ${LOCAL_P50_TARGET_MS} ms: ${targets.localP50AtMost30ms ? 'met' : 'MISSED'} (${local1!.p50Ms.toFixed(1)} ms)`);

  await writeJsonAtomic(out, {
    benchmark: 'sandbox create + exec(true) + destroy, a command in a bwrap of its own and in the persistent shell, and tool-call overhead',
    date: new Date().toISOString(),
    device: { cpu: os.cpus()[0]?.model, logicalCores: os.cpus().length, kernel: os.release() },
    method: `${CYCLES} cycles per concurrency level after a warm-up level at 1; each cycle copies a 2-file repo in; tool overhead is the median of ${TOOL_CALLS} calls`,
    latency,
    commands,
    overhead,
    skipped,
    targets,
  });
  console.log(`\nwrote ${out}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
