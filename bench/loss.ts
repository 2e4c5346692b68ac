/**
 * npm run bench: the CPU policy losses, fused-linear vs. logits materialized with libtorch's
 * matmul, forward + backward through libtorch autograd. Prints a table and writes
 * bench/results/loss-cpu.json.
 *
 *   node dist/bench/loss.js [--quick] [--repeats N] [--out FILE]
 */
import { cpus } from 'node:os';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { resolveLossOptions } from '../lib/math/policy-loss.js';
import { native, packageRoot } from '../lib/native.js';
import { flag } from './args.js';

interface Row {
  tokens: number;
  hiddenSize: number;
  vocabSize: number;
  path: 'materialized' | 'fused';
  medianMs: number;
  timesMs: number[];
  /** 6 T H V (the useful work) per second. */
  gflops: number;
  peakExtraBytes: number;
  /** Peak minus the gradients every path returns ((T + V) H fp32): the path's own workspace. */
  workspaceBytes: number;
  gradientBytes: number;
}


const quick = process.argv.includes('--quick');
const repeats = Number(flag('--repeats') ?? (quick ? 2 : 3));
const out = flag('--out') ?? join(packageRoot(), 'bench', 'results', quick ? 'loss-cpu-quick.json' : 'loss-cpu.json');
const TOKENS = quick ? [512] : [512, 2048];
const HIDDEN = quick ? [256] : [256, 1024];
const VOCAB = quick ? [32000] : [32000, 151936];
// The GRPO++ loss as the library resolves it by default (its CPU tile included).
const LOSS = resolveLossOptions({}, 'bench', 'cpu');
const CHUNKS = { chunkTokens: LOSS.chunkTokens, chunkVocab: LOSS.chunkVocab };

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);

async function main(): Promise<void> {
  const addon = native();
  const info = addon.buildInfo();
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  console.log(`swerl loss benchmark: ${cpu}, ${info.threads} threads, libtorch ${info.torchVersion} (${info.torchSource}), ${repeats} repeats + 1 warm-up\n`);

  const rows: Row[] = [];
  const header = ['T', 'H', 'V', 'path', 'median ms', 'GFLOP/s', 'peak MiB', 'workspace MiB'];
  console.log(header.join('\t'));
  for (const tokens of TOKENS) {
    for (const hiddenSize of HIDDEN) {
      for (const vocabSize of VOCAB) {
        for (const path of ['materialized', 'fused'] as const) {
          const r = await addon.benchPolicyLoss({ tokens, hiddenSize, vocabSize, path, repeats, warmup: 1, seed: 1234, ...LOSS });
          const medianMs = median(r.timesMs);
          const row: Row = {
            tokens,
            hiddenSize,
            vocabSize,
            path,
            medianMs,
            timesMs: r.timesMs,
            gflops: (6 * tokens * hiddenSize * vocabSize) / (medianMs * 1e6),
            peakExtraBytes: r.peakExtraBytes,
            workspaceBytes: Math.max(0, r.peakExtraBytes - r.gradientBytes),
            gradientBytes: r.gradientBytes,
          };
          rows.push(row);
          console.log([tokens, hiddenSize, vocabSize, path, medianMs.toFixed(0), row.gflops.toFixed(1), mib(row.peakExtraBytes), mib(row.workspaceBytes)].join('\t'));
        }
      }
    }
  }

  console.log('\nfused / materialized');
  console.log(['T', 'H', 'V', 'time', 'peak', 'workspace'].join('\t'));
  const comparisons = [];
  for (let i = 0; i < rows.length; i += 2) {
    const [m, f] = [rows[i]!, rows[i + 1]!];
    const c = {
      tokens: m.tokens,
      hiddenSize: m.hiddenSize,
      vocabSize: m.vocabSize,
      timeRatio: f.medianMs / m.medianMs,
      peakRatio: f.peakExtraBytes / m.peakExtraBytes,
      workspaceRatio: f.workspaceBytes / m.workspaceBytes,
    };
    comparisons.push(c);
    console.log([c.tokens, c.hiddenSize, c.vocabSize, `${c.timeRatio.toFixed(2)}x`, c.peakRatio.toFixed(3), c.workspaceRatio.toFixed(3)].join('\t'));
  }

  // The targets at T=2048, H=1024, V=151936.
  const target = comparisons.find((c) => c.tokens === 2048 && c.hiddenSize === 1024 && c.vocabSize === 151936);
  const targets = target && {
    shape: 'T=2048 H=1024 V=151936',
    workspaceAtMostOneEighth: target.workspaceRatio <= 1 / 8,
    timeAtMost1_4x: target.timeRatio <= 1.4,
  };
  if (targets) {
    console.log(`\ntarget (${targets.shape}): fused workspace <= 1/8 of materialized: ${targets.workspaceAtMostOneEighth ? 'met' : 'MISSED'} (${target!.workspaceRatio.toFixed(3)})`);
    console.log(`target (${targets.shape}): fused time <= 1.4x materialized: ${targets.timeAtMost1_4x ? 'met' : 'MISSED'} (${target!.timeRatio.toFixed(2)}x)`);
  }

  const report = {
    benchmark: 'policy loss, CPU, forward + backward through libtorch autograd',
    date: new Date().toISOString(),
    device: { cpu, logicalCores: cpus().length, threads: info.threads, torch: info.torchVersion, torchSource: info.torchSource },
    method:
      'median of repeats after 1 warm-up; inputs made in C++ (seeded), on-policy old logprobs so every token is active; ' +
      'peak = rise of VmHWM over VmRSS during the call (glibc mmap threshold fixed at 1 MiB so freed blocks leave); ' +
      'workspace = peak minus the (T+V) x H fp32 gradients both paths return',
    chunks: CHUNKS,
    rows,
    comparisons,
    targets,
  };
  mkdirSync(dirname(out), { recursive: true });
  const tmp = `${out}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(report, null, 2) + '\n');
  renameSync(tmp, out);
  console.log(`\nwrote ${out}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
