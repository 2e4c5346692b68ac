// swerl serve through the official openai client and plain fetch: completions (text and token
// ids), chat with tools, SSE streaming, SGLang's /generate, errors with their status codes, a
// weight update that the next request sees and the one in flight does not, a client that goes
// away, and RemotePolicy against it inside a real rollout (FrozenLake through the agent loop).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import OpenAI from 'openai';
import t, { type Test } from 'tap';

import { parseAgentLoopOptions } from '../../../lib/agent/agent-loop.js';
import { runRollouts, type RolloutItem } from '../../../lib/agent/rollout.js';
import { FrozenLakeEnv } from '../../../lib/env/frozen-lake.js';
import { renderChat } from '../../../lib/model/chat-template.js';
import { presetConfig } from '../../../lib/model/model-config.js';
import { NativePolicy } from '../../../lib/model/native-policy.js';
import { RemotePolicy } from '../../../lib/model/remote-policy.js';
import { startServer } from '../../../lib/serve/server.js';

const TINY = presetConfig('qwen3-tiny', 265);
const TOOLS = [{ type: 'function' as const, function: { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
const ASK = [{ role: 'user' as const, content: 'Weather in Paris?' }];
const CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';

const policy = await NativePolicy.load(TINY, { seed: 7, maxBatchSize: 16, optimizer: { lr: 3e-3 } });
// The one folder /update_weights_from_disk may load from.
const WEIGHTS_ROOT = await fs.mkdtemp(path.join(os.tmpdir(), 'swerl-serve-weights-'));
const server = await startServer(policy, { port: 0, modelName: 'tiny', weightsRoot: WEIGHTS_ROOT });
const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
t.teardown(async () => {
  await server.close();
  policy.dispose();
  await fs.rm(WEIGHTS_ROOT, { recursive: true, force: true });
});

/** Sampler logprobs must equal a full forward's of the same tokens. */
async function assertLogprobsMatch(t: Test, prompt: number[], tokens: number[], logprobs: number[], temperature: number) {
  const [full] = await policy.logprobs([[...prompt, ...tokens]], { temperature });
  const recomputed = Array.from(full!.subarray(prompt.length));
  const worst = Math.max(0, ...recomputed.map((l, i) => Math.abs(l - logprobs[i]!)));
  t.ok(worst <= 1e-4, `sampler logprobs = a full forward's (max |diff| ${worst.toExponential(2)})`);
}

/** Supervised steps (A = +1) until the model answers the tool-call question with CALL greedily. */
async function teachToolCall(): Promise<void> {
  const prompt = Array.from(renderChat(policy.tokenizer, ASK, { tools: TOOLS, addGenerationPrompt: true, enableThinking: false }).ids);
  const answer = [...policy.tokenizer.encode(CALL), ...policy.tokenizer.eosTokenIds];
  const tokens = [...prompt, ...answer];
  const weights = tokens.map((_, i) => (i >= prompt.length ? 1 / answer.length : 0));
  for (let step = 0; step < 200; step++) {
    // On-policy old logprobs (ratio 1): with A = +1 the step is plain maximum likelihood.
    const [oldLogprobs] = await policy.logprobs([tokens]);
    await policy.trainStep({ sequences: [{ tokens, weights, oldLogprobs: oldLogprobs!, advantage: 1 }] });
    if (step % 10 === 9) {
      const g = await policy.generate({ prompt, maxTokens: answer.length + 4, temperature: 0 });
      if (Array.from(g.tokens).join() === answer.join()) return;
    }
  }
  throw new Error('the tiny model did not learn the tool call');
}

t.test('models, completions with text and token-id prompts, logprobs', async (t) => {
  const models = await client.models.list();
  t.same(models.data.map((m) => m.id), ['tiny']);

  const out = await client.completions.create({ model: 'tiny', prompt: 'hello', max_tokens: 12, temperature: 1, logprobs: 0, seed: 5 });
  const choice = out.choices[0]! as typeof out.choices[0] & { token_ids: number[]; prompt_token_ids: number[] };
  t.ok(choice.token_ids.length >= 1 && choice.token_ids.length <= 12, 'sampled token ids come back');
  t.same(choice.prompt_token_ids, policy.tokenizer.encode('hello'), 'the text prompt is tokenized as the tokenizer does');
  t.equal(choice.logprobs!.token_logprobs!.length, choice.token_ids.length, 'one logprob per sampled token');
  t.equal(choice.text, policy.tokenizer.decode(choice.token_ids, { skipSpecialTokens: true }), 'text = the sampled ids decoded');
  t.equal(out.usage!.completion_tokens, choice.token_ids.length);
  await assertLogprobsMatch(t, choice.prompt_token_ids, choice.token_ids, choice.logprobs!.token_logprobs!, 1);

  const ids = [3, 50, 70, 120, 9];
  const again = await client.completions.create({ model: 'tiny', prompt: ids, max_tokens: 6, temperature: 0.7, logprobs: 0, seed: 11, return_tokens_as_token_ids: true } as OpenAI.CompletionCreateParamsNonStreaming);
  const c = again.choices[0]! as typeof again.choices[0] & { token_ids: number[]; prompt_token_ids: number[] };
  t.same(c.prompt_token_ids, ids, 'token-id prompt taken as is');
  t.same(c.logprobs!.tokens, c.token_ids.map((id) => `token_id:${id}`), 'return_tokens_as_token_ids');
  await assertLogprobsMatch(t, ids, c.token_ids, c.logprobs!.token_logprobs!, 0.7);

  const twice = await client.completions.create({ model: 'tiny', prompt: 'abc', max_tokens: 5, n: 3, seed: 1 });
  t.same(twice.choices.map((ch) => ch.index), [0, 1, 2], 'n choices');
});

t.test('completion streaming: the deltas add up to the same completion', async (t) => {
  const request = { model: 'tiny', prompt: 'stream me', max_tokens: 20, temperature: 1, seed: 42, logprobs: 0 };
  const whole = await client.completions.create(request);
  const stream = await client.completions.create({ ...request, stream: true, stream_options: { include_usage: true } });
  let text = '';
  const ids: number[] = [];
  let finish: string | null = null;
  let usage: unknown;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const ch of chunk.choices) {
      text += ch.text;
      ids.push(...((ch as unknown as { token_ids: number[] }).token_ids ?? []));
      finish = ch.finish_reason ?? finish;
    }
  }
  t.equal(text, whole.choices[0]!.text, 'streamed text');
  t.same(ids, (whole.choices[0] as unknown as { token_ids: number[] }).token_ids, 'streamed token ids');
  t.equal(finish, whole.choices[0]!.finish_reason);
  t.same(usage, whole.usage, 'usage chunk');
});

t.test('stop strings end the text before them', async (t) => {
  const free = await client.completions.create({ model: 'tiny', prompt: 'x', max_tokens: 30, temperature: 0 });
  const text = free.choices[0]!.text;
  const stop = text.slice(5, 7);
  t.ok(stop.length === 2, `a stop string from the free text (${JSON.stringify(stop)})`);
  const cut = await client.completions.create({ model: 'tiny', prompt: 'x', max_tokens: 30, temperature: 0, stop });
  t.equal(cut.choices[0]!.text, text.slice(0, text.indexOf(stop)));
  t.equal(cut.choices[0]!.finish_reason, 'stop');
});

t.test('chat completions, streaming, and tools parsed into tool_calls', async (t) => {
  const plain = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10, temperature: 0, logprobs: true });
  t.equal(plain.choices[0]!.message.role, 'assistant');
  t.equal(typeof plain.choices[0]!.message.content, 'string');
  t.equal(plain.choices[0]!.logprobs!.content!.length, (plain.choices[0] as unknown as { token_ids: number[] }).token_ids.length);

  const chunks = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10, temperature: 0, stream: true });
  let content = '';
  for await (const chunk of chunks) content += chunk.choices[0]?.delta.content ?? '';
  t.equal(content, plain.choices[0]!.message.content, 'streamed chat content = the whole answer');

  await teachToolCall();
  const called = await client.chat.completions.create({ model: 'tiny', messages: ASK, tools: TOOLS, temperature: 0, chat_template_kwargs: { enable_thinking: false } } as OpenAI.ChatCompletionCreateParamsNonStreaming);
  const message = called.choices[0]!.message;
  t.equal(called.choices[0]!.finish_reason, 'tool_calls');
  t.equal(message.tool_calls?.length, 1);
  const call = message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
  t.equal(call.function.name, 'get_weather');
  t.same(JSON.parse(call.function.arguments), { city: 'Paris' });

  const streamed = await client.chat.completions.create({ model: 'tiny', messages: ASK, tools: TOOLS, temperature: 0, stream: true, chat_template_kwargs: { enable_thinking: false } } as OpenAI.ChatCompletionCreateParamsStreaming);
  const calls: { name?: string; arguments?: string }[] = [];
  let finish: string | null = null;
  for await (const chunk of streamed) {
    for (const c of chunk.choices[0]?.delta.tool_calls ?? []) calls.push({ name: c.function?.name, arguments: c.function?.arguments });
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  t.equal(finish, 'tool_calls');
  t.same(calls.map((c) => [c.name, JSON.parse(c.arguments!)]), [['get_weather', { city: 'Paris' }]], 'the streamed tool call');
});

t.test('errors: OpenAI-style JSON with the right status', async (t) => {
  await t.rejects(client.completions.create({ model: 'other', prompt: 'x', max_tokens: 2 }), { status: 404, message: /model `other` does not exist/ });
  await t.rejects(client.completions.create({ model: 'tiny', prompt: 'x', max_tokens: 2, temperature: -1 }), { status: 400, message: /temperature must be 0 \(greedy\) or in \[0\.01, 10\]/ });
  await t.rejects(client.completions.create({ model: 'tiny', prompt: 'x', max_tokens: 2, presence_penalty: 0.5 }), { status: 400, message: /presence_penalty is not supported/ });
  await t.rejects(client.completions.create({ model: 'tiny', prompt: 'x', max_tokens: 2, logprobs: 3 }), { status: 400, message: /logprobs must be 0/ });
  await t.rejects(client.completions.create({ model: 'tiny', prompt: [1, 2, 999], max_tokens: 2 }), { status: 400, message: /prompt\[2\] must be a token id in \[0, 265\)/ });
  await t.rejects(client.completions.create({ model: 'tiny', prompt: 'x', max_tokens: 10 ** 6 }), { status: 400, message: /maximum context length/ });
  await t.rejects(client.chat.completions.create({ model: 'tiny', messages: [], max_tokens: 2 }), { status: 400, message: /messages must be a non-empty array/ });

  const raw = await fetch(`${server.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{not json' });
  t.equal(raw.status, 400);
  t.match(await raw.json(), { error: { type: 'invalid_request_error', message: /not valid JSON/ } });
  t.equal((await fetch(`${server.url}/v1/nothing`)).status, 404);
  t.equal((await fetch(`${server.url}/v1/completions`)).status, 405);
});

t.test("SGLang's /generate", async (t) => {
  const res = await fetch(`${server.url}/generate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input_ids: [5, 6, 7], sampling_params: { max_new_tokens: 8, temperature: 1, sampling_seed: 3 }, return_logprob: true }) });
  t.equal(res.status, 200);
  const out = (await res.json()) as { output_ids: number[]; meta_info: { output_token_logprobs: [number, number, null][]; finish_reason: { type: string } } };
  t.same(out.meta_info.output_token_logprobs.map((e) => e[1]), out.output_ids, 'ids in the logprob entries');
  t.match(out.meta_info.finish_reason.type, /^(stop|length)$/);
  await assertLogprobsMatch(t, [5, 6, 7], out.output_ids, out.meta_info.output_token_logprobs.map((e) => e[0]), 1);
});

t.test('/health counts the prefix cache: a client resending its conversation prefills only the new turn', async (t) => {
  const health = async () => ((await (await fetch(`${server.url}/health`)).json()) as { prefix_cache: Record<string, number> }).prefix_cache;
  const generate = async (input_ids: number[]) => {
    const res = await fetch(`${server.url}/generate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input_ids, sampling_params: { max_new_tokens: 6, temperature: 1, sampling_seed: 5, ignore_eos: true } }) });
    return ((await res.json()) as { output_ids: number[] }).output_ids;
  };
  const turn1 = Array.from({ length: 40 }, (_, i) => 10 + ((i * 7) % 200));
  const before = await health();
  const reply = await generate(turn1);
  const turn2 = [...turn1, ...reply, 21, 22, 23, 24, 25];
  await generate(turn2);
  const after = await health();
  t.equal(after.lookups! - before.lookups!, 2, 'two prompts looked up');
  t.equal(after.hits! - before.hits!, 1, 'the second turn hit');
  t.equal(after.reused_tokens! - before.reused_tokens!, turn1.length + reply.length - 1, 'reused: the first turn and its reply (its last token never entered the cache)');
  t.ok(after.entries! >= 1 && after.bytes! > 0, `stored: ${after.entries} entries, ${after.bytes} bytes`);
});

t.test('RemotePolicy against swerl serve inside a real rollout, both protocols', async (t) => {
  for (const protocol of ['openai', 'sglang'] as const) {
    const remote = await RemotePolicy.connect(policy.tokenizer, { servers: [server.url, `${server.url}/v1`], protocol });
    const items: RolloutItem[] = Array.from({ length: 4 }, (_, i) => ({
      taskId: `lake-${i}`,
      group: i >> 1,
      sample: i & 1,
      seed: 100 + i,
      makeEnv: () => new FrozenLakeEnv({ map: ['SF', 'FG'], maxSteps: 3, prompt: 'short' }),
    }));
    const agent = parseAgentLoopOptions({ maxTurns: 3, promptBudget: 2000, responseBudget: 400, maxTokensPerTurn: 24, enableThinking: false }, 'agent');
    const trajectories = await runRollouts(items, remote, { concurrency: 4, generationConcurrency: 0, retries: 0, agent });
    t.equal(trajectories.length, 4, `${protocol}: every episode ran`);
    const sampled = trajectories.reduce((n, tr) => n + tr.mask.reduce((a, m) => a + m, 0), 0);
    t.ok(sampled > 0, `${protocol}: ${sampled} sampled tokens`);
    // Sampled at temperature 1: each sampled token's logprob equals the model's recomputed one.
    const recomputed = await policy.logprobs(trajectories.map((tr) => tr.tokens), { temperature: 1 });
    let worst = 0;
    trajectories.forEach((tr, k) => tr.mask.forEach((m, i) => m && (worst = Math.max(worst, Math.abs(tr.logprobs[i]! - recomputed[k]![i]!)))));
    t.ok(worst <= 1e-4, `${protocol}: trajectory logprobs = the model's (max |diff| ${worst.toExponential(2)})`);
  }
  const remote = await RemotePolicy.connect(policy.tokenizer, { servers: [server.url] });
  await t.rejects(remote.generate({ prompt: [1, 2], maxTokens: 2, temperature: 1, topP: 0.9 }), { code: 'ERR_SWERL_INVALID_ARG', message: /remote sampling is pure temperature/ });
  await t.rejects(RemotePolicy.connect(policy.tokenizer, { servers: [server.url], model: 'nope' }), { code: 'ERR_SWERL_REMOTE', message: /does not serve model "nope"/ });
  await t.rejects(RemotePolicy.connect(policy.tokenizer, { servers: ['http://127.0.0.1:9'] }), { code: 'ERR_SWERL_REMOTE' });
});

t.test('a weight update: seen by the next request, not by the one in flight', async (t) => {
  const dir = path.join(WEIGHTS_ROOT, 'other');
  const other = await NativePolicy.load(TINY, { seed: 99 });
  await other.save(dir);
  const prompt = [10, 20, 30, 40];
  const greedy = { model: 'tiny', prompt, max_tokens: 400, temperature: 0 };
  const before = (await client.completions.create(greedy)).choices[0] as unknown as { token_ids: number[] };

  const inFlight = client.completions.create(greedy);
  for (let i = 0; i < 200 && policy.load.running === 0; i++) await new Promise((r) => setTimeout(r, 5));
  t.ok(policy.load.running > 0, 'a request is decoding when the update arrives');
  const update = await fetch(`${server.url}/update_weights_from_disk`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model_path: dir }) });
  t.equal(update.status, 200);
  t.match(await update.json(), { success: true, weight_version: 1 });
  const during = (await inFlight).choices[0] as unknown as { token_ids: number[] };
  t.same(during.token_ids, before.token_ids, 'the request in flight finished on the old weights');

  const after = (await client.completions.create(greedy)).choices[0] as unknown as { token_ids: number[] };
  const expected = await other.generate({ prompt, maxTokens: 400, temperature: 0 });
  t.same(after.token_ids, Array.from(expected.tokens), 'the next request runs on the new weights');
  t.notSame(after.token_ids, before.token_ids);
  t.match(await (await fetch(`${server.url}/health`)).json(), { status: 'ok', weight_version: 1 });

  const remote = await RemotePolicy.connect(policy.tokenizer, { servers: [server.url] });
  t.equal(await remote.updateWeights(dir), 1, 'RemotePolicy.updateWeights counts versions');
  const bad = await fetch(`${server.url}/update_weights_from_disk`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model_path: path.join(dir, 'missing') }) });
  t.equal(bad.status, 400);
  t.match(await bad.json(), { success: false, message: /is not a directory/ });
  await t.rejects(remote.updateWeights('/nonexistent'), { code: 'ERR_SWERL_REMOTE', message: /failed on 1 of 1 server/ });
  await fs.rm(dir, { recursive: true });
  other.dispose();
});

t.test('a client that goes away frees its place in the batch', async (t) => {
  const aborter = new AbortController();
  const res = await fetch(`${server.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'long', max_tokens: 5000, stream: true, temperature: 1 }), signal: aborter.signal });
  const reader = res.body!.getReader();
  await reader.read();
  t.ok(policy.load.running > 0, 'decoding');
  aborter.abort();
  for (let i = 0; i < 400 && policy.load.running > 0; i++) await new Promise((r) => setTimeout(r, 5));
  t.equal(policy.load.running, 0, 'the generation was cancelled');
});

t.test('RemotePolicy routing over two servers: round-robin alternates, least-loaded spreads', async (t) => {
  const policies = await Promise.all([11, 12].map((seed) => NativePolicy.load(TINY, { seed })));
  const servers = await Promise.all(policies.map((p) => startServer(p, { port: 0 })));
  t.teardown(async () => {
    for (const s of servers) await s.close();
    for (const p of policies) p.dispose();
  });
  // The same seeded request: same-sized random models may agree on tokens, never on logprobs.
  const request = { prompt: [7, 8, 9], maxTokens: 30, temperature: 1, seed: 5 };
  const answer = (g: { tokens: Int32Array; logprobs: Float32Array }) => [Array.from(g.tokens), Array.from(g.logprobs)];
  // The same tokens, and logprobs within 1e-5: a repeated prompt hits the server's prefix
  // cache, which prefills fewer positions, so the last bits may differ.
  const same = (a: number[][], b: number[][]) => a[0]!.join() === b[0]!.join() && a[1]!.every((x, i) => Math.abs(x - b[1]![i]!) <= 1e-5);
  const own = await Promise.all(policies.map(async (p) => answer(await p.generate(request))));
  t.notSame(own[0], own[1], 'the two servers hold different weights');

  const roundRobin = await RemotePolicy.connect(policy.tokenizer, { servers: servers.map((s) => s.url), routing: 'round-robin' });
  const answers: number[][][] = [];
  for (let i = 0; i < 4; i++) answers.push(answer(await roundRobin.generate(request)));
  t.ok(answers.every((a, i) => same(a, own[i % 2]!) && !same(a, own[(i + 1) % 2]!)), 'requests alternate between the servers');

  const leastLoaded = await RemotePolicy.connect(policy.tokenizer, { servers: servers.map((s) => s.url) });
  const running = Promise.all(Array.from({ length: 6 }, () => leastLoaded.generate({ prompt: [7, 8, 9], maxTokens: 300, temperature: 1 })));
  t.same(leastLoaded.load.map((s) => s.inFlight), [3, 3], 'six requests in flight: three on each server');
  await running;
  t.same(leastLoaded.load.map((s) => s.inFlight), [0, 0]);

  // A server that dies: its request is retried on the other one.
  await servers[1]!.close();
  const survivor = [];
  for (let i = 0; i < 3; i++) survivor.push(answer(await roundRobin.generate(request)));
  t.ok(survivor.every((a) => same(a, own[0]!)), 'every request is answered by the live server');
  const none = await RemotePolicy.connect(policy.tokenizer, { servers: [servers[0]!.url], retries: 1 });
  await servers[0]!.close();
  await t.rejects(none.generate(request), { code: 'ERR_SWERL_REMOTE', message: /failed/ }, 'no live server: the error after the retries');
});
