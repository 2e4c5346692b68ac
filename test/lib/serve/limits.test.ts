// swerl serve's limits, each at its edge, on a real server with small settings: n, max_tokens,
// body size (413 by content-length and while a chunked body streams in), text prompts refused
// by their bytes before tokenizing, application/json only (415), the API key (401, /health
// open), weight updates only from under the allowed folder (.., symlinks), malformed bodies
// (4xx, never 5xx), options checked at start, and large bodies tokenized off the event loop.
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';

import t from 'tap';

import { renderChat } from '../../../lib/model/chat-template.js';
import { presetConfig } from '../../../lib/model/model-config.js';
import { NativePolicy } from '../../../lib/model/native-policy.js';
import { MAX_PROMPT_BYTES_PER_TOKEN } from '../../../lib/serve/requests.js';
import { startServer } from '../../../lib/serve/server.js';
import { Rng } from '../../reference/random.js';
import { writeTinyCheckpoint } from '../../support/tiny-checkpoint.js';

const KEY = 'sk-limits';
const CONTEXT = 32768;  // qwen3-tiny's max_position_embeddings
const MAX_PROMPT_BYTES = CONTEXT * MAX_PROMPT_BYTES_PER_TOKEN;
const MAX_BODY = MAX_PROMPT_BYTES + 64 * 1024;

const root = t.testdir();
const weights = path.join(root, 'weights');
const modelDir = path.join(weights, 'model');
const outside = path.join(root, 'outside');
const policy = await NativePolicy.load(presetConfig('qwen3-tiny', 265), { seed: 3 });
// Two real checkpoints: only the folder rule tells them apart.
await policy.save(modelDir);
await policy.save(outside);
symlinkSync(outside, path.join(weights, 'escape'));
const server = await startServer(policy, { port: 0, modelName: 'tiny', maxN: 4, maxBodyBytes: MAX_BODY, apiKey: KEY, weightsRoot: weights });
t.teardown(async () => {
  await server.close();
  policy.dispose();
});

const auth = { authorization: `Bearer ${KEY}` };
const jsonHeaders = { 'content-type': 'application/json', ...auth };

async function call(route: string, body: unknown, init: RequestInit = {}): Promise<{ status: number; body: { error?: { message: string; param: string | null; code: number }; [k: string]: unknown } }> {
  const res = await fetch(`${server.url}${route}`, { method: 'POST', headers: jsonHeaders, body: typeof body === 'string' ? body : JSON.stringify(body), ...init });
  return { status: res.status, body: (await res.json()) as never };
}

t.test('n: at most maxN choices, prompts times n included', async (t) => {
  const four = await call('/v1/completions', { prompt: 'hi', max_tokens: 1, n: 4 });
  t.equal(four.status, 200);
  t.equal((four.body.choices as unknown[]).length, 4, 'n = maxN');
  t.match(await call('/v1/completions', { prompt: 'hi', max_tokens: 1, n: 5 }), { status: 400, body: { error: { param: 'n', message: /n must be an integer in \[1, 4\]/ } } });
  t.match(await call('/v1/completions', { prompt: 'hi', max_tokens: 1, n: 1e7 }), { status: 400, body: { error: { param: 'n' } } });
  t.match(await call('/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }], max_tokens: 1, n: 1e5 }), { status: 400, body: { error: { param: 'n' } } });
  t.equal((await call('/v1/completions', { prompt: ['a', 'b'], max_tokens: 1, n: 2 })).status, 200, '2 prompts x 2');
  t.match(await call('/v1/completions', { prompt: ['a', 'b'], max_tokens: 1, n: 3 }), { status: 400, body: { error: { message: /6 choices; at most 4 per request/ } } });
  t.match(await call('/v1/completions', { prompt: ['a', 'b', 'c', 'd', 'e'], max_tokens: 1 }), { status: 400, body: { error: { param: 'prompt' } } });
});

t.test('max_tokens: within the model context', async (t) => {
  t.match(await call('/v1/completions', { prompt: 'hi', max_tokens: CONTEXT + 1 }), { status: 400, body: { error: { message: `max_tokens is over ${CONTEXT}, this model's maximum context length` } } });
  t.match(await call('/v1/completions', { prompt: 'hi', max_tokens: CONTEXT }), { status: 400, body: { error: { message: /with the prompt's 2 tokens exceeds this model's maximum context length of 32768/ } } });
  t.match(await call('/generate', { input_ids: [1], sampling_params: { max_new_tokens: 1e15 } }), { status: 400, body: { error: { param: 'max_new_tokens' } } });
  t.match(await call('/v1/completions', { prompt: Array.from({ length: CONTEXT + 1 }, () => 1), max_tokens: 1 }), { status: 400, body: { error: { message: /has 32769 token ids/ } } });
});

t.test('body size: 413 by content-length, and while a chunked body streams in', async (t) => {
  const padded = (bytes: number) => { const base = JSON.stringify({ prompt: 'hi', max_tokens: 1, pad: '' }); return base.replace('"pad":""', `"pad":"${'x'.repeat(bytes - base.length)}"`); };
  t.equal((await call('/v1/completions', padded(MAX_BODY))).status, 200, 'a body of exactly the limit is read');
  const over = await call('/v1/completions', padded(MAX_BODY + 1));
  t.match(over, { status: 413, body: { error: { message: `the request body is larger than ${MAX_BODY} bytes (--max-body-bytes)` } } });

  const chunk = new TextEncoder().encode('x'.repeat(1 << 20));
  let sent = 0;
  const endless = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent++ < 64) controller.enqueue(chunk.slice());
      else controller.close();
    },
  });
  const res = await fetch(`${server.url}/v1/completions`, { method: 'POST', headers: jsonHeaders, body: endless, duplex: 'half' } as RequestInit);
  t.equal(res.status, 413, 'a chunked body (no content-length) is refused as it passes the limit');
  await res.text();
});

t.test('text prompts: refused by their bytes before they are tokenized, then by their tokens', async (t) => {
  const overBytes = await call('/v1/completions', { prompt: 'a'.repeat(MAX_PROMPT_BYTES + 1), max_tokens: 1 });
  t.match(overBytes, { status: 400, body: { error: { param: 'prompt', message: `prompt is over ${MAX_PROMPT_BYTES} bytes: more than this model's maximum context of ${CONTEXT} tokens can hold at ${MAX_PROMPT_BYTES_PER_TOKEN} bytes a token` } } });
  // Half as many characters, as many UTF-8 bytes: the bound counts bytes.
  t.match(await call('/v1/completions', { prompt: 'é'.repeat(MAX_PROMPT_BYTES / 2 + 1), max_tokens: 1 }), { status: 400, body: { error: { message: /is over \d+ bytes/ } } });
  t.match(await call('/generate', { text: 'a'.repeat(MAX_PROMPT_BYTES + 1) }), { status: 400, body: { error: { param: 'text', message: /is over/ } } });
  t.match(await call('/v1/chat/completions', { messages: [{ role: 'user', content: 'a'.repeat(MAX_PROMPT_BYTES) }] }), { status: 400, body: { error: { param: 'messages', message: /is over/ } } });
  t.match(await call('/v1/completions', { prompt: 'a'.repeat(CONTEXT + 10), max_tokens: 1 }), { status: 400, body: { error: { message: `max_tokens with the prompt's ${CONTEXT + 10} tokens exceeds this model's maximum context length of ${CONTEXT} tokens` } } }, 'under the byte bound: tokenized, then refused by its tokens');
});

t.test('POST bodies must be application/json', async (t) => {
  const body = JSON.stringify({ prompt: 'hi', max_tokens: 1 });
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx']) {
    const res = await call('/v1/completions', body, { headers: { 'content-type': type, ...auth } });
    t.match(res, { status: 415, body: { error: { message: /send application\/json/ } } }, type);
  }
  t.equal((await call('/v1/completions', body, { headers: auth, body: new Blob([body]) })).status, 415, 'no content-type');
  t.equal((await call('/v1/completions', body, { headers: { 'content-type': 'Application/JSON; charset=utf-8', ...auth } })).status, 200, 'JSON with parameters');
});

t.test('API key: needed everywhere but /health', async (t) => {
  const body = JSON.stringify({ prompt: 'hi', max_tokens: 1 });
  for (const [name, headers] of [
    ['none', { 'content-type': 'application/json' }],
    ['wrong', { 'content-type': 'application/json', authorization: 'Bearer sk-wrong' }],
    ['longer', { 'content-type': 'application/json', authorization: `Bearer ${KEY}x` }],
    ['not Bearer', { 'content-type': 'application/json', authorization: KEY }],
  ] as const) t.match(await call('/v1/completions', body, { headers }), { status: 401, body: { error: { message: /needs an API key/ } } }, name);
  t.equal((await fetch(`${server.url}/v1/models`)).status, 401, 'GET /v1/models');
  t.equal((await fetch(`${server.url}/v1/models`, { headers: auth })).status, 200);
  t.equal((await fetch(`${server.url}/health`)).status, 200, '/health needs no key');
  t.equal((await call('/v1/completions', body)).status, 200, 'the key');
});

t.test('weight updates: only from under the allowed folder, symlinks and .. resolved', async (t) => {
  const update = (modelPath: unknown) => call('/update_weights_from_disk', { model_path: modelPath });
  t.match(await update(modelDir), { status: 200, body: { success: true } });
  for (const [name, dir] of [
    ['a checkpoint outside', outside],
    ['.. out of the root', path.join(weights, '..', 'outside')],
    ['a symlink out of the root', path.join(weights, 'escape')],
    ['/etc', '/etc'],
  ]) t.match(await update(dir), { status: 400, body: { success: false, error: { param: 'model_path', message: /is outside .*--weights-root/ } } }, name);
  t.match(await update(path.join(weights, 'missing')), { status: 400, body: { message: /is not a directory/ } });
  t.match(await update(5), { status: 400, body: { error: { param: 'model_path' } } });

  const closed = await startServer(policy, { port: 0 });
  t.teardown(() => closed.close());
  const res = await fetch(`${closed.url}/update_weights_from_disk`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model_path: modelDir }) });
  t.match({ status: res.status, body: await res.json() }, { status: 400, body: { success: false, message: /weight updates are off/ } }, 'no weightsRoot: no updates');
});

t.test('malformed bodies: a 4xx naming the field, never a 5xx', async (t) => {
  const chat = (messages: unknown, extra = {}) => call('/v1/chat/completions', { messages, max_tokens: 1, ...extra });
  t.match(await chat([{ role: 'user', content: [null] }]), { status: 400, body: { error: { param: 'messages[0].content[0]' } } }, 'a null content part');
  t.match(await chat([{ role: 'user', content: [{ type: 'text', text: 5 }] }]), { status: 400, body: { error: { param: 'messages[0].content[0].text' } } });
  t.match(await chat([null]), { status: 400, body: { error: { param: 'messages[0]' } } });
  t.match(await chat([{ role: 'alien', content: 'x' }]), { status: 400, body: { error: { message: /role/ } } });
  t.match(await chat([{ role: 'user', content: 'x' }], { chat_template_kwargs: 'x' }), { status: 400, body: { error: { param: 'chat_template_kwargs' } } });
  t.match(await chat([{ role: 'user', content: 'x' }], { stream_options: 5 }), { status: 400, body: { error: { param: 'stream_options' } } });
  t.match(await call('/v1/completions', { prompt: 'x', logit_bias: 5 }), { status: 400, body: { error: { param: 'logit_bias' } } });
  t.match(await call('/v1/completions', '[1]'), { status: 400, body: { error: { message: /must be a JSON object/ } } });
  t.match(await call('/v1/completions', '{"prompt": '), { status: 400, body: { error: { message: /not valid JSON/ } } });
  t.match(await call('/v1/completions', `{"prompt": ${'['.repeat(10_000)}${']'.repeat(10_000)}}`), { status: 400, body: { error: { message: /nests more than 64 levels/ } } });
});

t.test('a client that leaves a request of maxN streamed choices cancels them all', async (t) => {
  const aborter = new AbortController();
  const res = await fetch(`${server.url}/v1/completions`, { method: 'POST', headers: jsonHeaders, body: JSON.stringify({ prompt: 'long', max_tokens: 5000, n: 4, stream: true, ignore_eos: true }), signal: aborter.signal });
  const reader = res.body!.getReader();
  await reader.read();
  for (let i = 0; i < 400 && policy.load.running < 4; i++) await new Promise((r) => setTimeout(r, 5));
  t.equal(policy.load.running, 4, 'four choices decoding');
  aborter.abort();
  for (let i = 0; i < 400 && policy.load.running > 0; i++) await new Promise((r) => setTimeout(r, 5));
  t.equal(policy.load.running, 0, 'every choice was cancelled');
});

t.test('options are checked when the server starts', async (t) => {
  for (const [options, field] of [
    [{ maxN: 0 }, 'serve.maxN'],
    [{ maxBodyBytes: 1.5 }, 'serve.maxBodyBytes'],
    [{ apiKey: '' }, 'serve.apiKey'],
    [{ weightsRoot: path.join(root, 'nowhere') }, 'serve.weightsRoot'],
    [{ port: 70000 }, 'serve.port'],
  ] as const) await t.rejects(startServer(policy, { ...options }), { code: 'ERR_SWERL_INVALID_ARG', message: new RegExp(`^${field.replace('.', '\\.')} `) }, field);
});

t.test('a Qwen-style tokenizer: the worker tokenizes as the model does, off the event loop', async (t) => {
  const dir = path.join(root, 'hf');
  await writeTinyCheckpoint(dir, new Rng(5));
  // A context as long as qwen3-tiny's, so the byte bound lets a prompt through that takes the
  // tokenizer seconds; it then is refused by its tokens.
  const config = JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ ...config, max_position_embeddings: CONTEXT }));
  const hf = await NativePolicy.load(dir, { seed: 1 });
  const hfServer = await startServer(hf, { port: 0 });
  t.teardown(async () => {
    await hfServer.close();
    hf.dispose();
  });
  const post = async (route: string, body: unknown) => (await fetch(`${hfServer.url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<Record<string, unknown>>;

  const text = 'the user said: "file name" <tool_call>{}</tool_call> héllo 🙂\n\nassistant';
  const completion = (await post('/v1/completions', { prompt: text, max_tokens: 1 })) as { choices: { prompt_token_ids: number[] }[] };
  t.same(completion.choices[0]!.prompt_token_ids, hf.tokenizer.encode(text), 'text prompt ids = the model tokenizer\'s');
  const messages = [{ role: 'system', content: 'be brief' }, { role: 'user', content: text }];
  const chat = (await post('/v1/chat/completions', { messages, max_tokens: 1 })) as { prompt_token_ids: number[] };
  t.same(chat.prompt_token_ids, Array.from(renderChat(hf.tokenizer, messages as never, { addGenerationPrompt: true }).ids), 'chat prompt ids = renderChat\'s');

  const slow = 'lorem ipsum dolor sit amet '.repeat(Math.floor((MAX_PROMPT_BYTES - 1024) / 27));
  const started = performance.now();
  hf.tokenizer.encode(slow.slice(0, slow.length / 8));
  const inlineMs = (performance.now() - started) * 8;
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const requested = performance.now();
  const refused = await post('/v1/completions', { prompt: slow, max_tokens: 1 });
  const requestMs = performance.now() - requested;
  delay.disable();
  t.match(refused, { error: { message: /with the prompt's \d+ tokens exceeds/ } }, 'tokenized, then refused by its tokens');
  // Tokenizing on the event loop would block it once for most of the request; off it, the loop
  // only waits for the scheduler. Both times stretch together under load, so their ratio is the
  // claim (a bound in milliseconds failed under another job's load).
  const worstMs = delay.max / 1e6;
  t.ok(worstMs < requestMs / 2, `the event loop never waited half the request (${worstMs.toFixed(0)} of ${requestMs.toFixed(0)} ms; the tokenizer needs ~${inlineMs.toFixed(0)} ms for the prompt inline)`);
});
