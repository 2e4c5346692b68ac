/**
 * Chat JSONL as SFT examples: the ids are renderChat's of the whole conversation, the trained
 * spans decode to exactly each assistant turn (content, tool calls, <|im_end|>) and nothing
 * else, the agent loop marks the same tokens when it samples the same conversation, and a bad
 * line is refused naming the file, the line and the field.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import { runEpisode } from '../../../../lib/agent/agent-loop.js';
import type { ChatMessage as EnvMessage, Env, RewardResult, StepResult } from '../../../../lib/env/env.js';
import { ByteTokenizer } from '../../../../lib/model/byte-tokenizer.js';
import { renderChat, type ChatMessage } from '../../../../lib/model/chat-template.js';
import type { AgentPolicy, Generation, SamplingRequest } from '../../../../lib/types/policy.js';
import { chatExample, loadChatFile } from '../../../../lib/train/sft/chat.js';
import { ROOT } from '../../../support/child-process.js';

const tokenizer = new ByteTokenizer();
const EXAMPLES = path.join(ROOT, 'examples', 'sft-tiny.jsonl');
const lines = readFileSync(EXAMPLES, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string; tools?: object[]; messages: Record<string, any>[] });

/** Runs of consecutive trained tokens, decoded (special tokens kept). */
function trainedSpans(ids: Int32Array, mask: Uint8Array): string[] {
  const spans: string[] = [];
  let start = -1;
  for (let i = 0; i <= mask.length; i++) {
    if (i < mask.length && mask[i] === 1) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      spans.push(tokenizer.decode(ids.subarray(start, i), { skipSpecialTokens: false }));
      start = -1;
    }
  }
  return spans;
}

/** An assistant turn as Qwen3's template writes it, from the template's rules (not from its code). */
function assistantText(m: Record<string, any>): string {
  let text = m.content ?? '';
  (m.tool_calls ?? []).forEach((call: { function: { name: string; arguments: string } }, i: number) => {
    if (i > 0 || text !== '') text += '\n';
    text += `<tool_call>\n{"name": "${call.function.name}", "arguments": ${call.function.arguments}}\n</tool_call>`;
  });
  return `${text}<|im_end|>`;
}

t.test('the example conversations: ids are the template\'s, trained spans are exactly the assistant turns', async (t) => {
  t.ok(lines.length >= 10, `${lines.length} conversations`);
  t.ok(lines.some((l) => l.messages.some((m) => m.role === 'tool')) && lines.some((l) => l.tools), 'tool turns and tools arrays are covered');
  t.ok(lines.some((l) => l.messages.some((m) => m.weight === 0)), 'an untrained assistant turn is covered');
  const examples = await loadChatFile(EXAMPLES, { tokenizer, enableThinking: false });
  t.equal(examples.length, lines.length);
  for (const [i, line] of lines.entries()) {
    const e = examples[i]!;
    t.equal(e.id, `${EXAMPLES}:${i + 1}`, 'ids are file:line');
    t.equal(e.source, EXAMPLES);
    const messages = line.messages.map(({ weight: _w, tool_call_id: _id, ...m }) => m as ChatMessage);
    const rendered = renderChat(tokenizer, messages, { enableThinking: false, ...(line.tools ? { tools: line.tools } : {}) });
    t.same(Array.from(e.tokens), Array.from(rendered.ids), `${line.id}: the tokens are renderChat of the whole conversation`);
    const expected = line.messages.filter((m) => m.role === 'assistant' && m.weight !== 0).map(assistantText);
    t.same(trainedSpans(e.tokens, e.mask), expected, `${line.id}: the trained spans are the assistant turns, in order`);
    const untrained = line.messages.filter((m) => m.role === 'assistant' && m.weight === 0);
    for (const m of untrained) t.ok(tokenizer.decode(e.tokens, { skipSpecialTokens: false }).includes(assistantText(m)), `${line.id}: a weight-0 turn stays in the context`);
  }
});

t.test('thinking mode follows the setting: the empty think block is part of the untrained header', async (t) => {
  const line = lines[0]!;
  const off = chatExample(line, { tokenizer, enableThinking: false }, 'x:1', 'x');
  const on = chatExample(line, { tokenizer, enableThinking: true }, 'x:1', 'x');
  const turns = line.messages.filter((m) => m.role === 'assistant').length;
  t.equal(off.tokens.length - on.tokens.length, turns * 6, 'each assistant header gains "<think>\\n\\n</think>\\n\\n": 2 added tokens and 4 bytes');
  t.same(trainedSpans(off.tokens, off.mask), trainedSpans(on.tokens, on.mask), 'the trained tokens are the same');
});

/** An env that replays a conversation's observations (user turns) after each assistant turn. */
class ReplayEnv implements Env {
  private next = 0;
  constructor(
    private readonly opening: EnvMessage[],
    private readonly observations: string[],
  ) {}
  async reset(): Promise<EnvMessage[]> {
    return this.opening;
  }
  async step(): Promise<StepResult> {
    const observation = this.observations[this.next++];
    return observation === undefined ? { observation: '', done: true, info: { termination: 'submitted', steps: this.next, durationMs: 0 } } : { observation, done: false, info: { steps: this.next, durationMs: 0 } };
  }
  async reward(): Promise<RewardResult> {
    return { reward: 1, tests: {}, reason: 'replayed' };
  }
  async close() {}
}

/** A policy that answers with a conversation's assistant turns, each closed with <|im_end|>. */
class ReplayPolicy implements AgentPolicy {
  readonly tokenizer = tokenizer;
  private next = 0;
  constructor(private readonly answers: string[]) {}
  async generate(_request: SamplingRequest): Promise<Generation> {
    const ids = [...tokenizer.encode(this.answers[this.next++]!), tokenizer.eosTokenIds[0]!];
    return { tokens: Int32Array.from(ids), logprobs: new Float32Array(ids.length), finishReason: 'stop' };
  }
}

t.test('the agent loop trains on the same tokens when it samples the same conversation', async (t) => {
  // Text-mode calls with observations as user turns: the way swerl's agent loop talks to SweEnv.
  const line = lines.find((l) => l.id === 'py-empty-list-text-calls')!;
  const [system, issue, ...rest] = line.messages;
  const answers = rest.filter((m) => m.role === 'assistant').map((m) => m.content as string);
  const observations = rest.filter((m) => m.role === 'user').map((m) => m.content as string);
  const trajectory = await runEpisode(
    {
      env: new ReplayEnv([system, issue] as EnvMessage[], observations),
      policy: new ReplayPolicy(answers),
      context: { taskId: line.id, sample: 0 },
      group: 0,
    },
    { maxTurns: 20, promptBudget: 4096, responseBudget: 8192, maxTokensPerTurn: 2048, temperature: 1, topK: 0, topP: 1, trajectoryTimeoutMs: 60_000, stepTimeoutMs: 60_000, warnTokensLeft: 0, budgetWarning: '', enableThinking: false },
  );
  t.equal(trajectory.turns.length, answers.length);
  const example = chatExample(line, { tokenizer, enableThinking: false }, 'x:1', 'x');
  t.same(Array.from(example.tokens), Array.from(trajectory.tokens), 'the same ids');
  t.same(Array.from(example.mask), Array.from(trajectory.mask), 'the same mask: SFT trains exactly what the loop samples');
});

t.test('a bad line is refused naming the file, the line and the field', async (t) => {
  const dir = t.testdir();
  const good = JSON.stringify({ messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }] });
  const cases: [string, RegExp][] = [
    [JSON.stringify({ messages: [{ role: 'robot', content: 'x' }] }), /:2 messages\[0\]\.role is "robot"; use one of "system", "user", "assistant", "tool"/],
    [JSON.stringify({ messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'search', arguments: '{"a": ' } }] }] }), /:2 messages\[1\]\.tool_calls\[0\]\.function\.arguments is a string that is not valid JSON/],
    [JSON.stringify({ messages: [{ role: 'user', content: 'x' }] }), /:2 messages has no assistant turn to train on/],
    [JSON.stringify({ messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: 'y', weight: 0.5 }] }), /:2 messages\[1\]\.weight is 0\.5; use 0/],
    [JSON.stringify({ messages: [{ role: 'user', content: 42 }, { role: 'assistant', content: 'y' }] }), /:2 messages\[0\]\.content is number/],
    [JSON.stringify({ messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: 'y', reasoning_content: 'z' }] }), /:2 messages\[1\]\.reasoning_content is not rendered/],
    [JSON.stringify({ conversation: [] }), /:2 messages is missing/],
    [JSON.stringify({ messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: 'y' }], tools: [{ type: 'function', function: {} }] }), /:2 tools\.0\.function\.name is required/],
    ['{"messages": [', /:2 is not valid JSON/],
  ];
  for (const [i, [bad, message]] of cases.entries()) {
    const file = path.join(dir, `bad-${i}.jsonl`);
    writeFileSync(file, `${good}\n${bad}\n`);
    await t.rejects(loadChatFile(file, { tokenizer, enableThinking: false }), { code: 'ERR_SWERL_INVALID_ARG', message: new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}${message.source}`) }, message.source);
  }
});

t.test('content as text parts, and assistant turns made of tool calls only', async (t) => {
  const record = {
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'list ' }, { type: 'text', text: 'files' }] },
      { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'execute_bash', arguments: { cmd: 'ls' } } }] },
      { role: 'tool', content: 'a.py' },
      { role: 'assistant', content: 'One file.' },
    ],
  };
  const e = chatExample(record, { tokenizer, enableThinking: false }, 'f:1', 'f');
  const text = tokenizer.decode(e.tokens, { skipSpecialTokens: false });
  t.ok(text.includes('<|im_start|>user\nlist files<|im_end|>'), 'parts joined');
  t.same(trainedSpans(e.tokens, e.mask), ['<tool_call>\n{"name": "execute_bash", "arguments": {"cmd": "ls"}}\n</tool_call><|im_end|>', 'One file.<|im_end|>']);
});
