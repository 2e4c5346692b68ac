// Prompt logprobs through real HTTP on loopback: swerl serve answers vLLM's prompt_logprobs and
// SGLang's input_token_logprobs in their shapes, from the policy's forward; RemotePolicy.logprobs
// over both protocols equals NativePolicy.logprobs; bad values are 400s naming the field; a
// server that answers no prompt logprobs (a stub) is a clear error.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import t, { type Test } from 'tap';

import { presetConfig } from '../../../lib/model/model-config.js';
import { NativePolicy } from '../../../lib/model/native-policy.js';
import { RemotePolicy } from '../../../lib/model/remote-policy.js';
import { startServer } from '../../../lib/serve/server.js';

const TINY = presetConfig('qwen3-tiny', 265);
const policy = await NativePolicy.load(TINY, { seed: 17 });
const server = await startServer(policy, { port: 0, modelName: 'tiny' });
t.teardown(async () => {
  await server.close();
  policy.dispose();
});

const VOCAB = policy.config.native.vocabSize;
const randomIds = (length: number) => Array.from({ length }, () => Math.floor(Math.random() * VOCAB));

async function post(path: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(server.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: await res.json() };
}

/** The native forward's logprobs of one sequence, as numbers. */
async function native(ids: number[]): Promise<number[]> {
  const [logprobs] = await policy.logprobs([ids]);
  return Array.from(logprobs!);
}

function assertClose(t: Test, got: ArrayLike<number>, want: ArrayLike<number>, what: string): void {
  t.equal(got.length, want.length, `${what}: one logprob per token`);
  const worst = Math.max(0, ...Array.from(got, (g, i) => Math.abs(g - want[i]!)));
  t.ok(worst <= 1e-4, `${what}: = the native forward's (max |diff| ${worst.toExponential(2)})`);
}

t.test('RemotePolicy.logprobs over swerl serve = NativePolicy.logprobs, both protocols', async (t) => {
  const sequences = [0, 1, 2, 5, 17, 64, 150].map(randomIds);
  const want = await policy.logprobs(sequences.filter((s) => s.length > 0));
  for (const protocol of ['openai', 'sglang'] as const) {
    const remote = await RemotePolicy.connect(policy.tokenizer, { servers: [server.url], protocol });
    const got = await remote.logprobs(sequences);
    t.equal(got.length, sequences.length, `${protocol}: one answer per sequence`);
    t.same(Array.from(got[0]!), [], `${protocol}: an empty sequence scores to nothing`);
    t.same(Array.from(got[1]!), [0], `${protocol}: a one-token sequence scores to [0]`);
    for (let i = 1; i < sequences.length; i++) {
      t.equal(got[i]![0], 0, `${protocol}: entry 0 is 0`);
      assertClose(t, got[i]!, want[i - 1]!, `${protocol}, ${sequences[i]!.length} tokens`);
    }
    // Off-by-one or constant answers would pass a check against values that do not vary.
    const longest = Array.from(want.at(-1)!).slice(1);
    t.ok(Math.max(...longest) - Math.min(...longest) > 1e-3, 'the logprobs vary along the sequence');
    t.same(remote.load.map((s) => s.inFlight), [0], `${protocol}: nothing left in flight`);
  }
});

t.test("/v1/completions prompt_logprobs: vLLM's shape, the forward's values", async (t) => {
  const ids = randomIds(12);
  const { status, json } = await post('/v1/completions', { model: 'tiny', prompt: ids, max_tokens: 1, temperature: 0, prompt_logprobs: 0 });
  t.equal(status, 200);
  const entries = json.choices[0].prompt_logprobs as (Record<string, { logprob: number; rank: number | null; decoded_token: string }> | null)[];
  t.equal(entries.length, ids.length, 'one entry per prompt token');
  t.equal(entries[0], null, 'null first');
  const want = await native(ids);
  entries.slice(1).forEach((entry, j) => {
    const i = j + 1;
    t.same(Object.keys(entry!), [String(ids[i])], `position ${i}: keyed by the actual token's id string`);
    const logprob = entry![String(ids[i])]!;
    t.equal(typeof logprob.logprob, 'number');
    t.equal(logprob.decoded_token, policy.tokenizer.decode([ids[i]!]), 'decoded_token');
    t.ok(Math.abs(logprob.logprob - want[i]!) <= 1e-4, `position ${i}: the forward's logprob`);
  });
  t.equal(json.choices[0].token_ids.length, 1, 'the sampled token still comes back');

  // A batch of prompts with n = 2: each choice carries its own prompt's logprobs.
  const prompts = [randomIds(4), randomIds(7)];
  const batch = await post('/v1/completions', { prompt: prompts, n: 2, max_tokens: 2, temperature: 1, prompt_logprobs: 0 });
  t.equal(batch.status, 200);
  for (const choice of batch.json.choices) {
    const prompt = prompts[Math.floor(choice.index / 2)]!;
    t.same(choice.prompt_token_ids, prompt);
    const logprobs = (choice.prompt_logprobs as (Record<string, { logprob: number }> | null)[]).map((e, i) => (i === 0 ? 0 : e![String(prompt[i])]!.logprob));
    assertClose(t, logprobs, await native(prompt), `choice ${choice.index}`);
  }

  const plain = await post('/v1/completions', { prompt: ids, max_tokens: 1 });
  t.notOk('prompt_logprobs' in plain.json.choices[0], 'not asked, not answered');
});

t.test("/generate logprob_start_len: SGLang's input_token_logprobs from that position", async (t) => {
  const ids = randomIds(10);
  const want = await native(ids);
  for (const start of [0, 3, ids.length - 1]) {
    const { status, json } = await post('/generate', { input_ids: ids, sampling_params: { max_new_tokens: 1, temperature: 0 }, return_logprob: true, logprob_start_len: start });
    t.equal(status, 200);
    const entries = json.meta_info.input_token_logprobs as [number | null, number, null][];
    t.equal(entries.length, ids.length - start, `start ${start}: the prompt from that position`);
    t.same(entries[0], [null, ids[start], null], `start ${start}: the first logprob null, as SGLang's`);
    t.same(entries.map((e) => e[1]), ids.slice(start), `start ${start}: the prompt's ids`);
    assertClose(t, entries.slice(1).map((e) => e[0]!), want.slice(start + 1), `start ${start}`);
    t.equal(json.meta_info.output_token_logprobs.length, json.output_ids.length, 'the output logprobs as before');
  }
  const outputOnly = await post('/generate', { input_ids: ids, sampling_params: { max_new_tokens: 2 }, return_logprob: true });
  t.notOk('input_token_logprobs' in outputOnly.json.meta_info, 'no logprob_start_len: output logprobs only, as before');
});

t.test('bad prompt_logprobs / logprob_start_len: 400 naming the field', async (t) => {
  const ids = [5, 6, 7, 8];
  for (const [value, message] of [[-1, /must be an integer >= 0/], [1.5, /must be an integer >= 0/], ['0', /must be an integer >= 0/], [true, /must be an integer >= 0/], [2, /not alternatives/]] as const) {
    const { status, json } = await post('/v1/completions', { prompt: ids, max_tokens: 1, prompt_logprobs: value });
    t.equal(status, 400, `prompt_logprobs ${JSON.stringify(value)}`);
    t.match(json.error, { param: 'prompt_logprobs', type: 'invalid_request_error', message: message });
    t.match(json.error.message, /^prompt_logprobs /);
  }
  const streamed = await post('/v1/completions', { prompt: ids, max_tokens: 1, prompt_logprobs: 0, stream: true });
  t.equal(streamed.status, 400);
  t.match(streamed.json.error, { param: 'prompt_logprobs', message: /stream/ });

  for (const [value, message] of [[-2, /must be an integer >= -1/], [1.5, /must be an integer/], ['x', /must be a number/], [ids.length, /past the prompt's last position \(3\)/]] as const) {
    const { status, json } = await post('/generate', { input_ids: ids, sampling_params: { max_new_tokens: 1 }, return_logprob: true, logprob_start_len: value });
    t.equal(status, 400, `logprob_start_len ${JSON.stringify(value)}`);
    t.match(json.error, { param: 'logprob_start_len', message: message });
    t.match(json.error.message, /^logprob_start_len /);
  }
});

/** A stub inference server on loopback (not swerl serve): `answer` gives each POST's status and JSON. */
async function stubServer(t: Test, answer: (path: string, body: any) => { status: number; json: unknown } | undefined) {
  const posts: string[] = [];
  const stub = createServer((req: IncomingMessage, res: ServerResponse) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      const reply = req.method === 'GET' ? { status: 200, json: path === '/v1/models' ? { data: [{ id: 'stub' }] } : { status: 'ok' } } : (posts.push(path), answer(path, JSON.parse(text)));
      if (!reply) return; // never answers
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply.json));
    });
  });
  await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => {
    stub.closeAllConnections();
    stub.close(() => resolve());
  }));
  return { url: `http://127.0.0.1:${(stub.address() as AddressInfo).port}`, posts };
}

t.test('a server that answers no prompt logprobs, or not one per token: a clear error', async (t) => {
  const generated = { choices: [{ text: 'x', token_ids: [1], finish_reason: 'length', logprobs: null }] };
  const openai = await stubServer(t, () => ({ status: 200, json: generated }));
  const remote = await RemotePolicy.connect(policy.tokenizer, { servers: [openai.url] });
  await t.rejects(remote.logprobs([[1, 2, 3]]), { code: 'ERR_SWERL_REMOTE', message: /the server at http:\/\/127\.0\.0\.1:\d+ returned no choices\[0\]\.prompt_logprobs .*vLLM >= 0\.5\.5 or swerl serve/ });

  const short = await stubServer(t, () => ({ status: 200, json: { choices: [{ ...generated.choices[0], prompt_logprobs: [null, { 2: { logprob: -1 } }] }] } }));
  const shortRemote = await RemotePolicy.connect(policy.tokenizer, { servers: [short.url] });
  await t.rejects(shortRemote.logprobs([[1, 2, 3]]), { code: 'ERR_SWERL_REMOTE', message: /returned 2 entries in prompt_logprobs for a prompt of 3 tokens/ });

  const otherToken = await stubServer(t, () => ({ status: 200, json: { choices: [{ ...generated.choices[0], prompt_logprobs: [null, { 9: { logprob: -1 } }] }] } }));
  const otherRemote = await RemotePolicy.connect(policy.tokenizer, { servers: [otherToken.url] });
  await t.rejects(otherRemote.logprobs([[1, 2]]), { code: 'ERR_SWERL_REMOTE', message: /no finite logprob for prompt token 1 \(id 2\)/ });

  const sglang = await stubServer(t, () => ({ status: 200, json: { output_ids: [1], meta_info: { finish_reason: { type: 'length' }, output_token_logprobs: [[-1, 1, null]] } } }));
  const sglangRemote = await RemotePolicy.connect(policy.tokenizer, { servers: [sglang.url], protocol: 'sglang' });
  await t.rejects(sglangRemote.logprobs([[1, 2, 3]]), { code: 'ERR_SWERL_REMOTE', message: /returned no meta_info\.input_token_logprobs/ });
});

t.test('scoring retries a server error on the next server, and stops when aborted', async (t) => {
  let failures = 1;
  const flaky = await stubServer(t, (_path, body) => {
    if (failures-- > 0) return { status: 503, json: { error: { message: 'busy' } } };
    return { status: 200, json: { choices: [{ prompt_logprobs: (body.prompt as number[]).map((id, i) => (i === 0 ? null : { [id]: { logprob: -i, rank: 1, decoded_token: 'x' } })) }] } };
  });
  const remote = await RemotePolicy.connect(policy.tokenizer, { servers: [flaky.url] });
  const [got] = await remote.logprobs([[4, 5, 6]]);
  t.same(Array.from(got!), [0, -1, -2], 'answered on the second attempt');
  t.same(flaky.posts, ['/v1/completions', '/v1/completions']);

  const silent = await stubServer(t, () => undefined);
  const waiting = await RemotePolicy.connect(policy.tokenizer, { servers: [silent.url] });
  const aborter = new AbortController();
  setTimeout(() => aborter.abort(), 50);
  await t.rejects(waiting.logprobs([[1, 2]], { signal: aborter.signal }), { code: 'ERR_SWERL_ABORTED' });
  t.same(silent.posts.length, 1, 'not retried once aborted');
});
