/**
 * npm run bench:serve — `swerl serve` on the tiny model: generation throughput (sampled tokens
 * per second, all clients together) and request latency at 1, 8 and 32 concurrent clients,
 * each sending requests back to back, against the same load on NativePolicy.generate in
 * process; and how long /health waits under that load (polled every 20 ms: its 99th percentile
 * and slowest, the figures the adversarial serve test reports rather than asserts). The server
 * runs as its own process (`swerl serve`, as users run it); prints a table and writes
 * bench/results/serve.json.
 *
 *   node dist/bench/serve.js [--quick] [--requests N] [--out FILE]
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { packageRoot } from '../lib/native.js';
import { presetConfig } from '../lib/model/model-config.js';
import { NativePolicy } from '../lib/model/native-policy.js';
import { writeJsonAtomic } from '../lib/util/atomic.js';
import { mulberry32 } from '../lib/util/random.js';
import { flag } from './args.js';

const quick = process.argv.includes('--quick');
const requestsPerClient = Number(flag('--requests') ?? (quick ? 2 : 6));
const out = flag('--out') ?? path.join(packageRoot(), 'bench', 'results', quick ? 'serve-quick.json' : 'serve.json');
const CONCURRENCY = [1, 8, 32];
const PROMPT_TOKENS = 64;
const NEW_TOKENS = quick ? 32 : 64;
const VOCAB = 265;

interface Row {
  path: 'http' | 'in-process';
  clients: number;
  requests: number;
  tokens: number;
  seconds: number;
  tokensPerSecond: number;
  latencyP50Ms: number;
  latencyP95Ms: number;
  /** http only: /health's answers during the load. */
  health?: { polls: number; p99Ms: number; slowestMs: number };
}

/** Polls /health every 20 ms until stopped; its answer times. */
function pollHealth(url: string): { stop: () => Promise<{ polls: number; p99Ms: number; slowestMs: number }> } {
  const times: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const t0 = performance.now();
      await fetch(`${url}/health`).then((r) => r.arrayBuffer());
      times.push(performance.now() - t0);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { polls: times.length, p99Ms: percentile(times, 0.99), slowestMs: Math.max(...times) };
    },
  };
}

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};

/** `clients` loops, each sending requestsPerClient requests back to back. */
async function load(clients: number, request: (client: number, i: number) => Promise<number>): Promise<Omit<Row, 'path' | 'clients'>> {
  const latencies: number[] = [];
  let tokens = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = 0; i < requestsPerClient; i++) {
        const t0 = performance.now();
        const sampled = await request(c, i);  // (not `tokens += await …`: that reads tokens before the await)
        tokens += sampled;
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { requests: latencies.length, tokens, seconds, tokensPerSecond: tokens / seconds, latencyP50Ms: percentile(latencies, 0.5), latencyP95Ms: percentile(latencies, 0.95) };
}

async function startServe(dir: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const cli = path.join(packageRoot(), 'dist', 'lib', 'cli.js');
  const child = spawn(process.execPath, [cli, 'serve', dir, '--port', '0', '--served-model-name', 'tiny'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (d: Buffer) => {
      text += d.toString();
      const m = /at (http:\/\/\S+)\/v1/.exec(text);
      if (m) resolve(m[1]!);
    });
    child.on('close', () => reject(new Error('swerl serve exited before listening')));
  });
  return { url, stop: async () => { child.kill('SIGINT'); await exited; } };
}

async function main(): Promise<void> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'swerl-bench-serve-'));
  const policy = await NativePolicy.load(presetConfig('qwen3-tiny', VOCAB), { seed: 1, maxBatchSize: 64 });
  await policy.save(dir);
  const random = mulberry32(7);
  const prompts = Array.from({ length: 64 }, () => Array.from({ length: PROMPT_TOKENS }, () => Math.floor(random() * VOCAB)));
  const rows: Row[] = [];

  const server = await startServe(dir);
  const complete = async (prompt: number[]) => {
    const res = await fetch(`${server.url}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiny', prompt, max_tokens: NEW_TOKENS, temperature: 1, ignore_eos: true, logprobs: 0 }),
    });
    const body = (await res.json()) as { choices: { token_ids: number[] }[] };
    return body.choices[0]!.token_ids.length;
  };
  try {
    await complete(prompts[0]!);  // warm-up
    for (const clients of CONCURRENCY) {
      const health = pollHealth(server.url);
      const row = await load(clients, (c, i) => complete(prompts[(c * 7 + i) % prompts.length]!));
      rows.push({ path: 'http', clients, ...row, health: await health.stop() });
    }
  } finally {
    await server.stop();
  }
  await policy.generate({ prompt: prompts[0]!, maxTokens: NEW_TOKENS, stopTokens: [] });  // warm-up
  for (const clients of CONCURRENCY) {
    const row = await load(clients, async (c, i) => (await policy.generate({ prompt: prompts[(c * 7 + i) % prompts.length]!, maxTokens: NEW_TOKENS, temperature: 1, stopTokens: [] })).tokens.length);
    rows.push({ path: 'in-process', clients, ...row });
  }
  policy.dispose();
  await fs.rm(dir, { recursive: true, force: true });

  console.log(`swerl serve vs in-process generation: qwen3-tiny (byte vocabulary), ${PROMPT_TOKENS}-token prompts, ${NEW_TOKENS} new tokens, ${requestsPerClient} requests per client, ${os.cpus()[0]?.model ?? 'CPU'}, ${os.cpus().length} cores`);
  console.log(['path', 'clients', 'requests', 'tokens/s', 'p50 ms', 'p95 ms', '/health p99 ms', '/health slowest ms'].join('\t'));
  for (const r of rows) {
    const health = r.health ? [r.health.p99Ms.toFixed(1), r.health.slowestMs.toFixed(1)] : ['', ''];
    console.log([r.path, r.clients, r.requests, r.tokensPerSecond.toFixed(0), r.latencyP50Ms.toFixed(0), r.latencyP95Ms.toFixed(0), ...health].join('\t'));
  }
  console.log('\nhttp / in-process throughput');
  for (const clients of CONCURRENCY) {
    const http = rows.find((r) => r.path === 'http' && r.clients === clients)!;
    const local = rows.find((r) => r.path === 'in-process' && r.clients === clients)!;
    console.log(`${clients} client(s): ${(http.tokensPerSecond / local.tokensPerSecond).toFixed(2)}`);
  }
  await writeJsonAtomic(out, { date: new Date().toISOString(), cpu: os.cpus()[0]?.model, cores: os.cpus().length, promptTokens: PROMPT_TOKENS, newTokens: NEW_TOKENS, requestsPerClient, rows });
  console.log(`\nwrote ${out}`);
}

await main();
