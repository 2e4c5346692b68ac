/**
 * `swerl serve` under abuse, as a real process: choices by the hundred thousand, 50 MB bodies
 * (sized and chunked), a prompt too long to be worth tokenizing and one just short enough that
 * it is (seconds of tokenizer work), 15 MB of token ids and of tiny arrays, huge max_tokens,
 * posts that are not JSON (what a web page can send without a preflight), missing and wrong
 * API keys, weight updates outside the allowed folder (.., symlinks), a body that never
 * finishes, dozens of malformed bodies, and a 2000-token completion decoding throughout. Each
 * must get its answer within the bound; a 5xx, a hang or a dropped connection is a crash.
 * Meanwhile a second process polls /health: every poll answered, none held past 2 s (a loop held
 * by the server's own work); the 99th percentile is reported, not asserted: another job on the
 * cores moves it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import t from 'tap';

import { presetConfig } from '../../lib/model/model-config.js';
import { NativePolicy } from '../../lib/model/native-policy.js';
import { AdversarialTally, type Outcome } from '../support/adversarial.js';
import { CLI, spawnTs, waitForExit, waitForLine } from '../support/child-process.js';

const KEY = 'sk-adversarial-test';
// A hung request, not a slow one: the megabyte prompts take seconds to tokenize on an idle core
// and 22 s on a busy one (a full test run on two cores).
const BOUND_MS = 60_000;
// Only a loop held for seconds: a full test run on two cores slowed the odd poll past 500 ms.
// The text streamer's bounded decoding (its 0.35 s hold) is counted in text-streamer.test.ts.
const HEALTH_WORST_MS = 2_000;

/** `count` chunks of `size` bytes, sent without a content-length. */
function chunked(count: number, size: number): ReadableStream<Uint8Array> {
  const chunk = new TextEncoder().encode('a'.repeat(size));
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent++ < count) controller.enqueue(chunk.slice());
      else controller.close();
    },
  });
}

/**
 * Polls /health every 20 ms from its own process; prints the slowest answer when stdin closes.
 * It says 'ready' after a few untimed polls: the first loads its own HTTP client, which is the
 * poller's time, not the server's.
 */
const POLLER = `
const url = process.argv[1];
let count = 0, failures = 0, done = false; const times = [];
process.stdin.on('end', () => { done = true; }).resume();
(async () => {
  for (let i = 0; i < 3; i++) await (await fetch(url)).text();
  console.log('ready');
  while (!done) {
    const started = performance.now();
    try { const r = await fetch(url); await r.text(); if (r.status !== 200) failures++; } catch { failures++; }
    times.push(performance.now() - started); count++;
    await new Promise((r) => setTimeout(r, 20));
  }
  times.sort((a, b) => a - b);
  const worst = times.at(-1) ?? 0, p99 = times[Math.floor(0.99 * (times.length - 1))] ?? 0;
  console.log(JSON.stringify({ worst, p99, count, failures }));
})();
`;

t.test('swerl serve under abuse', async (t) => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'swerl-serve-abuse-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const weights = path.join(root, 'weights');
  const modelDir = path.join(weights, 'model');
  const policy = await NativePolicy.load(presetConfig('qwen3-tiny', 265), { seed: 1 });
  await policy.save(modelDir);
  policy.dispose();
  mkdirSync(path.join(root, 'outside'));
  symlinkSync(path.join(root, 'outside'), path.join(weights, 'escape'));

  const server = spawnTs(CLI, { SWERL_API_KEY: KEY }, ['serve', modelDir, '--port', '0', '--served-model-name', 'tiny', '--weights-root', weights]);
  t.teardown(() => void server.kill('SIGKILL'));
  const url = (await waitForLine(server, /swerl serve: tiny at (http:\/\/127\.0\.0\.1:\d+)\/v1/))[1]!;

  const auth = { authorization: `Bearer ${KEY}` };
  const json = { 'content-type': 'application/json', ...auth };
  /** A case that passes when the server answers `status` (any 4xx when given 'any4xx'). */
  const expect = (status: number | 'any4xx', init: RequestInit & { path?: string }) => async (): Promise<Outcome> => {
    const res = await fetch(`${url}${init.path ?? '/v1/completions'}`, { method: 'POST', ...init, signal: AbortSignal.timeout(BOUND_MS) });
    const text = await res.text();
    const ok = status === 'any4xx' ? res.status >= 400 && res.status < 500 : res.status === status;
    if (!ok) throw new Error(`answered ${res.status}, expected ${status}: ${text.slice(0, 300)}`);
    if (res.status >= 400 && !/"error"|"message"/.test(text)) throw new Error(`a ${res.status} without an error body: ${text.slice(0, 200)}`);
    return res.status >= 400 ? 'clean-error' : 'accepted';
  };
  const post = (body: unknown, extra: RequestInit & { path?: string } = {}) => ({ headers: json, body: typeof body === 'string' ? body : JSON.stringify(body), ...extra });

  // A body that never finishes, held open through every case below.
  const slow = net.connect(new URL(url).port ? Number(new URL(url).port) : 80, '127.0.0.1');
  slow.on('error', () => {});
  slow.write(`POST /v1/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nauthorization: Bearer ${KEY}\r\ncontent-length: 1000000\r\n\r\n{"prompt": "`);
  t.teardown(() => void slow.destroy());

  // The work is the server's, another process: the bound is a wall-clock hang guard.
  const tally = new AdversarialTally('serve', { clock: 'wall' });
  const cases: Array<[string, number | 'any4xx', RequestInit & { path?: string }]> = [
    ['n = 1e5', 400, post({ prompt: 'hi', max_tokens: 1, n: 1e5 })],
    ['n = 1e7', 400, post({ prompt: 'hi', max_tokens: 1, n: 1e7 })],
    ['chat n = 1e5', 400, post({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 1, n: 1e5 }, { path: '/v1/chat/completions' })],
    ['1000 prompts x n = 100', 400, post({ prompt: Array.from({ length: 1000 }, () => 'x'), max_tokens: 1, n: 100 })],
    ['a 50 MB body', 413, post({ prompt: 'a'.repeat(50e6), max_tokens: 1 })],
    ['a 50 MB chunked body', 413, { headers: json, body: chunked(50, 1 << 20), duplex: 'half' } as RequestInit],
    ['15 MB of token ids', 400, post(`{"prompt": [${'1,'.repeat(7_500_000)}1], "max_tokens": 1}`)],
    ['12 MB of tiny arrays', 400, post(`{"prompt": [${'[1],'.repeat(3_000_000)}[1]], "max_tokens": 1}`)],
    ['a 2 MB prompt, under the byte bound (seconds to tokenize)', 400, post({ prompt: 'lorem ipsum dolor sit amet '.repeat(77_000), max_tokens: 1 })],
    ['a 3 MB prompt (past the context in bytes)', 400, post({ prompt: 'a'.repeat(3e6), max_tokens: 1 })],
    ['a 3 MB chat message', 400, post({ messages: [{ role: 'user', content: 'a'.repeat(3e6) }], max_tokens: 1 }, { path: '/v1/chat/completions' })],
    ['a 3 MB /generate text', 400, post({ text: 'a'.repeat(3e6), sampling_params: { max_new_tokens: 1 } }, { path: '/generate' })],
    ['max_tokens = 1e9', 400, post({ prompt: 'hi', max_tokens: 1e9 })],
    ['max_new_tokens = 1e15', 400, post({ input_ids: [1, 2], sampling_params: { max_new_tokens: 1e15 } }, { path: '/generate' })],
    ['text/plain (a web page\'s simple post)', 415, { headers: { 'content-type': 'text/plain', ...auth }, body: JSON.stringify({ prompt: 'hi', max_tokens: 1 }) }],
    ['a form post', 415, { headers: { 'content-type': 'application/x-www-form-urlencoded', ...auth }, body: 'prompt=hi' }],
    ['no content-type', 415, { headers: auth, body: new Blob([JSON.stringify({ prompt: 'hi' })]) }],
    ['no API key', 401, { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'hi', max_tokens: 1 }) }],
    ['a wrong API key', 401, { headers: { 'content-type': 'application/json', authorization: 'Bearer sk-wrong' }, body: JSON.stringify({ prompt: 'hi', max_tokens: 1 }) }],
    ['a key of another length', 401, { headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}x` }, body: '{}' }],
    ['GET /v1/models without a key', 401, { method: 'GET', path: '/v1/models' }],
    ['the right key', 200, post({ prompt: 'hi', max_tokens: 2 })],
    ['n = 64, the most', 200, post({ prompt: 'hi', max_tokens: 4, n: 64, logprobs: 0 })],
    ['weights from /etc', 400, post({ model_path: '/etc' }, { path: '/update_weights_from_disk' })],
    ['weights through ..', 400, post({ model_path: path.join(weights, '..', 'outside') }, { path: '/update_weights_from_disk' })],
    ['weights through a symlink out', 400, post({ model_path: path.join(weights, 'escape') }, { path: '/update_weights_from_disk' })],
    ['/generate sampling_params null (the defaults)', 200, post({ input_ids: [1], sampling_params: null }, { path: '/generate' })],
    ['weights from the root', 200, post({ model_path: modelDir }, { path: '/update_weights_from_disk' })],
  ];
  const CHAT = { path: '/v1/chat/completions' };
  const malformed: Array<[string, unknown, { path?: string }?]> = [
    ['content list with null', { messages: [{ role: 'user', content: [null] }] }, CHAT],
    ['content part without text', { messages: [{ role: 'user', content: [{ type: 'text' }] }] }, CHAT],
    ['content part text a number', { messages: [{ role: 'user', content: [{ type: 'text', text: 5 }] }] }, CHAT],
    ['content an object', { messages: [{ role: 'user', content: {} }] }, CHAT],
    ['messages null', { messages: null }, CHAT],
    ['messages a string', { messages: 'hi' }, CHAT],
    ['messages [null]', { messages: [null] }, CHAT],
    ['messages [1]', { messages: [1] }, CHAT],
    ['messages [[]]', { messages: [[]] }, CHAT],
    ['an unknown role', { messages: [{ role: 'alien', content: 'x' }] }, CHAT],
    ['no role', { messages: [{ content: 'x' }] }, CHAT],
    ['tools a string', { messages: [{ role: 'user', content: 'x' }], tools: 'x' }, CHAT],
    ['tools [null]', { messages: [{ role: 'user', content: 'x' }], tools: [null] }, CHAT],
    ['tool_calls [null]', { messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: '', tool_calls: [null] }] }, CHAT],
    ['tool_calls function null', { messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: '', tool_calls: [{ function: null }] }] }, CHAT],
    ['chat_template_kwargs.enable_thinking "yes"', { messages: [{ role: 'user', content: 'x' }], chat_template_kwargs: { enable_thinking: 'yes' } }, CHAT],
    ['top_logprobs 5', { messages: [{ role: 'user', content: 'x' }], top_logprobs: 5 }, CHAT],
    // As text: JSON.stringify itself overflows on these.
    ['a body 100k levels deep', `{"prompt": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`],
    ['tools 100k levels deep', `{"messages": [{"role": "user", "content": "x"}], "tools": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`, CHAT],
    ['not JSON', '{"prompt": '],
    ['a JSON array', '[1, 2]'],
    ['JSON null', 'null'],
    ['an empty body', ''],
    ['prompt missing', { max_tokens: 1 }],
    ['prompt {}', { prompt: {} }],
    ['prompt [[]]', { prompt: [[]] }],
    ['prompt [-1]', { prompt: [-1] }],
    ['prompt [1e10]', { prompt: [1e10] }],
    ['prompt [1.5]', { prompt: [1.5] }],
    ['prompt mixed', { prompt: ['a', 1] }],
    ['temperature "hot"', { prompt: 'x', temperature: 'hot' }],
    ['temperature 1e-300', { prompt: 'x', temperature: 1e-300 }],
    ['temperature 1e300', { prompt: 'x', temperature: 1e300 }],
    ['top_p 0', { prompt: 'x', top_p: 0 }],
    ['top_k "x"', { prompt: 'x', top_k: 'x' }],
    ['n 0', { prompt: 'x', n: 0 }],
    ['n 1.5', { prompt: 'x', n: 1.5 }],
    ['seed -1', { prompt: 'x', seed: -1 }],
    ['stop 5', { prompt: 'x', stop: 5 }],
    ['stop [""]', { prompt: 'x', stop: [''] }],
    ['stop_token_ids [-1]', { prompt: 'x', stop_token_ids: [-1] }],
    ['logprobs 5', { prompt: 'x', logprobs: 5 }],
    ['logit_bias "abc"', { prompt: 'x', logit_bias: 'abc' }],
    ['echo true', { prompt: 'x', echo: true }],
    ['a model it does not serve', { prompt: 'x', model: 'gpt-4' }],
    ['/generate input_ids []', { input_ids: [] }, { path: '/generate' }],
    ['/generate text ""', { text: '' }, { path: '/generate' }],
    ['/generate sampling_params []', { input_ids: [1], sampling_params: [] }, { path: '/generate' }],
    ['/generate stream', { input_ids: [1], stream: true }, { path: '/generate' }],
    ['weights model_path 5', { model_path: 5 }, { path: '/update_weights_from_disk' }],
    ['weights model_path missing', {}, { path: '/update_weights_from_disk' }],
  ];
  for (const [name, body, extra] of malformed) cases.push([name, 'any4xx', post(body, extra ?? {})]);

  // The bodies are built; from here on the poller times every /health answer.
  const poller: ChildProcess = spawn(process.execPath, ['-e', POLLER, `${url}/health`], { stdio: ['pipe', 'pipe', 'inherit'] });
  t.teardown(() => void poller.kill('SIGKILL'));
  let pollerOut = '';
  poller.stdout!.on('data', (d: Buffer) => (pollerOut += d.toString()));
  await new Promise<void>((resolve) => poller.stdout!.on('data', () => pollerOut.startsWith('ready\n') && resolve()));
  // Decoding through the cases below, then decoded to text at once (the text streamer decoding
  // its whole prefix for each token once held the event loop 0.35 s here).
  const longCompletion = fetch(`${url}/v1/completions`, { method: 'POST', headers: json, body: JSON.stringify({ prompt: 'hi', max_tokens: 2000, ignore_eos: true }) });
  for (const [name, status, init] of cases) await tally.case(name, expect(status, init), BOUND_MS);
  await tally.case('a 2000-token completion decoded meanwhile', async (): Promise<Outcome> => {
    const res = await longCompletion;
    const out = (await res.json()) as { choices: { token_ids: number[] }[] };
    if (res.status !== 200 || out.choices[0]!.token_ids.length !== 2000) throw new Error(`answered ${res.status}: ${JSON.stringify(out).slice(0, 200)}`);
    return 'accepted';
  }, 2 * BOUND_MS);

  poller.stdin!.end();
  await waitForExit(poller);
  const health = JSON.parse(pollerOut.slice('ready\n'.length)) as { worst: number; p99: number; count: number; failures: number };
  t.comment(`/health: ${health.count} polls during the abuse, 99th percentile ${health.p99.toFixed(1)} ms, slowest ${health.worst.toFixed(1)} ms, ${health.failures} failed`);
  t.ok(health.count > 10, 'the poller ran throughout');
  t.equal(health.failures, 0, '/health always answered 200');
  // Another job on the cores slows polls (a 99th percentile of 199 ms and a slowest of 365 ms under
  // a full test run beside a training job); a loop held by the server's own work holds one by seconds.
  t.ok(health.worst < HEALTH_WORST_MS, `/health never waited ${HEALTH_WORST_MS} ms (slowest ${health.worst.toFixed(1)} ms)`);
  tally.report(t);

  const stopped = waitForLine(server, /swerl serve: stopped/);
  server.kill('SIGINT');
  await stopped;
});
