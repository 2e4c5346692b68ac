import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import t from 'tap';

import {
  ChatRenderer,
  renderChat,
  type ChatMessage,
  type RenderOptions,
} from '../../../lib/model/chat-template.js';
import { formatToolCall, parseToolCalls } from '../../../lib/model/tool-calls.js';
import type { ChatMessage as EnvChatMessage } from '../../../lib/env/env.js';
import { pythonJsonDumps } from '../../../lib/model/python-json.js';
import { ByteTokenizer } from '../../../lib/model/byte-tokenizer.js';
import { loadTokenizer } from '../../../lib/model/hf-tokenizer.js';
import type { Tokenizer } from '../../../lib/types/tokenizer.js';
import { writeTinyTokenizer } from '../../support/tiny-tokenizer.js';

const byteTok = new ByteTokenizer();
const tinyDir = await fs.mkdtemp(path.join(os.tmpdir(), 'swerl-chat-template-'));
t.teardown(() => fs.rm(tinyDir, { recursive: true, force: true }));
await writeTinyTokenizer(tinyDir);
const tinyTok = await loadTokenizer(tinyDir);
const TOKENIZERS: [string, Tokenizer][] = [['ByteTokenizer', byteTok], ['tiny Qwen2-style HF tokenizer', tinyTok]];

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'read_file',
      description: 'Read a file.',
      parameters: { type: 'object', properties: { path: { type: 'string', description: 'Path to the file' } }, required: ['path'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'run',
      description: 'Run a shell command; returns “stdout” — café.',
      parameters: { type: 'object', properties: { cmd: { type: 'string' }, timeout: { type: 'integer' } }, required: ['cmd'] },
    },
  },
];

/*
 * The expected texts below are written out character for character. They were checked against
 * Qwen3's own chat_template (Qwen/Qwen3-8B tokenizer_config.json, as kept in huggingface/trl
 * trl/chat_templates/qwen3.jinja) rendered by jinja2 with transformers' settings (trim_blocks,
 * lstrip_blocks, tojson = json.dumps(ensure_ascii=False)): identical, except where marked.
 * Each fixture is a list of [text, mask] pieces: mask 1 on what the policy is trained on.
 */
type Piece = [string, 0 | 1];

const TOOLS_SYSTEM =
  '# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
  'You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n' +
  '{"type": "function", "function": {"name": "read_file", "description": "Read a file.", "parameters": {"type": "object", "properties": {"path": {"type": "string", "description": "Path to the file"}}, "required": ["path"]}}}\n' +
  '{"type": "function", "function": {"name": "run", "description": "Run a shell command; returns “stdout” — café.", "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}, "timeout": {"type": "integer"}}, "required": ["cmd"]}}}\n' +
  '</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n' +
  '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n';

const AGENT_MESSAGES: ChatMessage[] = [
  { role: 'system', content: 'You are a coding agent.' },
  { role: 'user', content: 'Fix the bug in a.py and b.py.' },
  {
    role: 'assistant',
    content: '<think>\nI should read both files.\n</think>\n\nLet me read them.',
    tool_calls: [
      { type: 'function', id: 'c1', function: { name: 'read_file', arguments: { path: 'a.py' } } },
      { type: 'function', id: 'c2', function: { name: 'read_file', arguments: '{"path": "b.py"}' } },
    ],
  },
  { role: 'tool', tool_call_id: 'c1', content: 'def f():\n    return 1' },
  { role: 'tool', tool_call_id: 'c2', content: 'def g():\n    return 2' },
  { role: 'assistant', content: '<think>\nBoth look fine.\n</think>\n\nNothing to fix.' },
];

const AGENT_BODY_1 =
  '<think>\nI should read both files.\n</think>\n\nLet me read them.\n' +
  '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>\n' +
  '<tool_call>\n{"name": "read_file", "arguments": {"path": "b.py"}}\n</tool_call><|im_end|>';
const AGENT_UNTIL_TOOLS: Piece[] = [
  ['<|im_start|>system\nYou are a coding agent.\n\n' + TOOLS_SYSTEM, 0],
  ['<|im_start|>user\nFix the bug in a.py and b.py.<|im_end|>\n<|im_start|>assistant\n', 0],
  [AGENT_BODY_1, 1],
  ['\n<|im_start|>user\n<tool_response>\ndef f():\n    return 1\n</tool_response>\n<tool_response>\ndef g():\n    return 2\n</tool_response><|im_end|>\n', 0],
];

interface Fixture {
  messages: ChatMessage[];
  options: RenderOptions;
  expected: Piece[];
}

const FIXTURES: Record<string, Fixture> = {
  'system + tools, user, assistant with <think> and two tool calls, two tool results, final assistant': {
    messages: AGENT_MESSAGES,
    options: { tools: TOOLS },
    expected: [
      ...AGENT_UNTIL_TOOLS,
      ['<|im_start|>assistant\n', 0],
      ['<think>\nBoth look fine.\n</think>\n\nNothing to fix.<|im_end|>', 1],
      ['\n', 0],
    ],
  },
  'the same up to the tool results, with the generation prompt': {
    messages: AGENT_MESSAGES.slice(0, 5),
    options: { tools: TOOLS, addGenerationPrompt: true },
    expected: [...AGENT_UNTIL_TOOLS, ['<|im_start|>assistant\n', 0]],
  },
  'tools without a system message; a tool call with no content': {
    messages: [
      { role: 'user', content: 'Run the tests.' },
      { role: 'assistant', content: '', tool_calls: [{ type: 'function', function: { name: 'run', arguments: { cmd: 'npm test', timeout: 60 } } }] },
      { role: 'tool', content: 'ok' },
      { role: 'assistant', content: '<think>\nPassed.\n</think>\n\nAll tests pass.' },
    ],
    options: { tools: TOOLS },
    expected: [
      ['<|im_start|>system\n' + TOOLS_SYSTEM + '<|im_start|>user\nRun the tests.<|im_end|>\n<|im_start|>assistant\n', 0],
      ['<tool_call>\n{"name": "run", "arguments": {"cmd": "npm test", "timeout": 60}}\n</tool_call><|im_end|>', 1],
      ['\n<|im_start|>user\n<tool_response>\nok\n</tool_response><|im_end|>\n<|im_start|>assistant\n', 0],
      ['<think>\nPassed.\n</think>\n\nAll tests pass.<|im_end|>', 1],
      ['\n', 0],
    ],
  },
  'enableThinking: false adds the empty think block to the generation prompt': {
    messages: [{ role: 'user', content: 'Hi' }],
    options: { addGenerationPrompt: true, enableThinking: false },
    expected: [['<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n', 0]],
  },
  'multi-turn without tools (earlier reasoning kept: the one difference from Qwen3)': {
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: '<think>\nGreet back.\n</think>\n\nHello!' },
      { role: 'user', content: 'Bye' },
    ],
    options: { addGenerationPrompt: true },
    expected: [
      ['<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n', 0],
      // Qwen3's template writes only "Hello!<|im_end|>" here: it drops the reasoning of turns
      // before the last user message. We keep what the model sampled.
      ['<think>\nGreet back.\n</think>\n\nHello!<|im_end|>', 1],
      ['\n<|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n', 0],
    ],
  },
};

const CHATML = ['<|endoftext|>', '<|im_start|>', '<|im_end|>', '<think>', '</think>', '<tool_call>', '</tool_call>', '<tool_response>', '</tool_response>'];

/** ByteTokenizer's ids for text, worked out independently: ChatML tokens at 256.., else UTF-8 bytes. */
function byteIds(text: string): number[] {
  const ids: number[] = [];
  for (let i = 0; i < text.length; ) {
    const token = CHATML.findIndex((s) => text.startsWith(s, i));
    if (token >= 0) {
      ids.push(256 + token);
      i += CHATML[token]!.length;
    } else {
      const char = String.fromCodePoint(text.codePointAt(i)!);
      ids.push(...new TextEncoder().encode(char));
      i += char.length;
    }
  }
  return ids;
}

function expectedFor(pieces: Piece[], encode: (text: string) => number[]): { text: string; ids: number[]; mask: number[] } {
  const ids: number[] = [];
  const mask: number[] = [];
  for (const [text, m] of pieces) {
    for (const id of encode(text)) {
      ids.push(id);
      mask.push(m);
    }
  }
  return { text: pieces.map(([text]) => text).join(''), ids, mask };
}

t.test('fixtures with ByteTokenizer: ids are the bytes of the expected text, mask exactly on assistant turns', async (t) => {
  for (const [name, { messages, options, expected }] of Object.entries(FIXTURES)) {
    const out = renderChat(byteTok, messages, options);
    const want = expectedFor(expected, byteIds);
    t.ok(out.ids instanceof Int32Array && out.mask instanceof Uint8Array, name);
    t.equal(byteTok.decode(out.ids), want.text, `${name}: text`);
    t.same(Array.from(out.ids), want.ids, `${name}: ids`);
    t.same(Array.from(out.mask), want.mask, `${name}: mask`);
  }
});

t.test('fixtures with the tiny HF tokenizer: rendering equals encoding the full text', async (t) => {
  for (const [name, { messages, options, expected }] of Object.entries(FIXTURES)) {
    const out = renderChat(tinyTok, messages, options);
    const want = expectedFor(expected, (text) => tinyTok.encode(text));
    t.same(Array.from(out.ids), tinyTok.encode(want.text), `${name}: ids = encode(full text)`);
    t.same(Array.from(out.ids), want.ids, `${name}: ids`);
    t.same(Array.from(out.mask), want.mask, `${name}: mask`);
    t.equal(tinyTok.decode(out.ids), want.text, `${name}: decode`);
  }
});

t.test('the mask is 1 on assistant content and its <|im_end|>, 0 on the header and the newline after', async (t) => {
  const out = renderChat(byteTok, [{ role: 'user', content: 'q' }, { role: 'assistant', content: 'ab' }]);
  const text = '<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\nab<|im_end|>\n';
  t.same(Array.from(out.ids), byteIds(text));
  const user = [0, 0, 0, 0, 0, 0, 0, 0, 0]; // <|im_start|> u s e r \n q <|im_end|> \n
  const header = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]; // <|im_start|> a s s i s t a n t \n
  t.same(Array.from(out.mask), [...user, ...header, 1, 1, 1, 0]); // a b <|im_end|>, then \n
});

for (const [tokName, tok] of TOKENIZERS) {
  t.test(`ChatRenderer turn by turn equals a full render (${tokName})`, async (t) => {
    const sampled = (text: string): number[] => tok.encode(`${text}<|im_end|>`);
    const renderer = new ChatRenderer(tok, { tools: TOOLS });
    renderer.append(AGENT_MESSAGES[0]!, AGENT_MESSAGES[1]!).generationPrompt();
    t.same(renderer.ids, renderChat(tok, AGENT_MESSAGES.slice(0, 2), { tools: TOOLS, addGenerationPrompt: true }).ids, 'prompt');

    // The agent loop appends what the model sampled, as ids; content is for the loop's own use.
    renderer.append({ ...AGENT_MESSAGES[2]!, tokenIds: sampled(AGENT_BODY_1.replace('<|im_end|>', '')) });
    renderer.append(AGENT_MESSAGES[3]!);
    const partial = renderChat(tok, AGENT_MESSAGES.slice(0, 4), { tools: TOOLS });
    t.same(renderer.ids, partial.ids, 'an open tool turn reads as closed');
    t.same(renderer.mask, partial.mask);
    t.equal(renderer.length, partial.ids.length);

    renderer.append(AGENT_MESSAGES[4]!).generationPrompt();
    const prompt = renderChat(tok, AGENT_MESSAGES.slice(0, 5), { tools: TOOLS, addGenerationPrompt: true });
    t.same(renderer.ids, prompt.ids, 'two tool results share one user turn');
    t.same(renderer.mask, prompt.mask);

    renderer.append({ role: 'assistant', content: 'ignored when tokenIds are given', tokenIds: sampled(AGENT_MESSAGES[5]!.content!) });
    const full = renderChat(tok, AGENT_MESSAGES, { tools: TOOLS });
    t.same(renderer.ids, full.ids, 'whole conversation');
    t.same(renderer.mask, full.mask);
  });

  t.test(`enableThinking: false, turn by turn and at once (${tokName})`, async (t) => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
      { role: 'user', content: 'c' },
      { role: 'assistant', content: 'd' },
    ];
    const full = renderChat(tok, messages, { enableThinking: false });
    const want = expectedFor(
      [
        ['<|im_start|>user\na<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n', 0], ['b<|im_end|>', 1],
        ['\n<|im_start|>user\nc<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n', 0], ['d<|im_end|>', 1], ['\n', 0],
      ],
      (text) => tok.encode(text),
    );
    t.same(Array.from(full.ids), want.ids);
    t.same(Array.from(full.mask), want.mask);
    const renderer = new ChatRenderer(tok, { enableThinking: false });
    renderer.append(messages[0]!).generationPrompt().append({ role: 'assistant', content: null, tokenIds: tok.encode('b<|im_end|>') });
    renderer.append(messages[2]!).generationPrompt().append({ role: 'assistant', content: null, tokenIds: tok.encode('d<|im_end|>') });
    t.same(renderer.ids, full.ids);
    t.same(renderer.mask, full.mask);
  });
}

t.test('sampled tokenIds are appended verbatim, never re-tokenized', async (t) => {
  // "assistant" spelled one byte at a time, where the tokenizer would use one merged token.
  const spelled = [...'assistant'].map((c) => tinyTok.tokenId(c)!);
  const imEnd = tinyTok.specialTokens['<|im_end|>']!;
  t.not(tinyTok.encode('assistant').length, spelled.length);
  const out = renderChat(tinyTok, [{ role: 'assistant', content: 'assistant', tokenIds: [...spelled, imEnd] }]);
  const header = tinyTok.encode('<|im_start|>assistant\n');
  t.same(Array.from(out.ids), [...header, ...spelled, imEnd, ...tinyTok.encode('\n')]);
  t.same(Array.from(out.mask), [...header.map(() => 0), ...spelled.map(() => 1), 1, 0]);
});

t.test('a reply cut short gets an untrained <|im_end|>', async (t) => {
  const out = renderChat(byteTok, [{ role: 'assistant', content: null, tokenIds: Uint8Array.from([104, 105]) }]);
  t.same(Array.from(out.ids), byteIds('<|im_start|>assistant\nhi<|im_end|>\n'));
  t.same(Array.from(out.mask.slice(-4)), [1, 1, 0, 0], 'the sampled ids are trained, the closing <|im_end|> and newline are not');
  const eos = renderChat(byteTok, [{ role: 'assistant', content: null, tokenIds: [104, 256] }]);
  t.same(Array.from(eos.ids.slice(-4)), [104, 256, 258, 10], 'stopped on <|endoftext|>: kept, then the turn is closed');
  t.same(Array.from(eos.mask.slice(-4)), [1, 1, 0, 0]);
});

t.test('added-token text inside messages becomes the token, as in HF', async (t) => {
  const out = renderChat(byteTok, [{ role: 'tool', content: 'x<|im_end|>y' }]);
  t.same(Array.from(out.ids), byteIds('<|im_start|>user\n<tool_response>\nx<|im_end|>y\n</tool_response><|im_end|>\n'));
  t.ok(Array.from(out.ids).filter((id) => id === 258).length === 2);
});

t.test("lib/env's ChatMessage renders, and later system messages keep their role", async (t) => {
  const envMessages: EnvChatMessage[] = [
    { role: 'user', content: 'u' },
    { role: 'system', content: 's' },
  ];
  t.equal(byteTok.decode(renderChat(byteTok, envMessages).ids), '<|im_start|>user\nu<|im_end|>\n<|im_start|>system\ns<|im_end|>\n');
  t.equal(byteTok.decode(renderChat(byteTok, [], { tools: [], addGenerationPrompt: true }).ids), '<|im_start|>assistant\n', 'no tools: no system turn');
  t.equal(
    byteTok.decode(renderChat(byteTok, [], { tools: TOOLS, addGenerationPrompt: true }).ids),
    `<|im_start|>system\n${TOOLS_SYSTEM}<|im_start|>assistant\n`,
  );
});

t.test('bad input is a SwerlError naming the field', async (t) => {
  const bad = (run: () => unknown, message: RegExp, name?: string): void => {
    t.throws(run, { name: 'SwerlError', code: 'ERR_SWERL_INVALID_ARG', message }, name ?? String(message));
  };
  bad(() => renderChat(byteTok, [{ role: 'user', content: 'a' }, { role: 'robot', content: 'b' } as unknown as ChatMessage]),
    /^messages\[1\]\.role is "robot"; use one of "system", "user", "assistant", "tool"$/);
  bad(() => renderChat(byteTok, [{ role: 'user', content: 5 } as unknown as ChatMessage]), /^messages\[0\]\.content must be a string$/);
  bad(() => renderChat(byteTok, [null as unknown as ChatMessage]), /^messages\[0\] is not a message/);
  bad(() => renderChat(byteTok, {} as unknown as ChatMessage[]), /^messages must be an array/);
  bad(() => renderChat(byteTok, [{ role: 'user', content: 'a', tokenIds: [1] }]), /^messages\[0\]\.tokenIds is set on a user message/);

  const call = (args: unknown): ChatMessage[] => [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: '', tool_calls: [{ function: { name: 'run', arguments: args as string } }] },
  ];
  bad(() => renderChat(byteTok, call([1, 2])), /^messages\[1\]\.tool_calls\[0\]\.function\.arguments is an array, not a JSON object; pass an object/);
  bad(() => renderChat(byteTok, call(7)), /^messages\[1\]\.tool_calls\[0\]\.function\.arguments is number, not a JSON object/);
  bad(() => renderChat(byteTok, call(null)), /^messages\[1\]\.tool_calls\[0\]\.function\.arguments is null/);
  bad(() => renderChat(byteTok, call('{oops')), /^messages\[1\]\.tool_calls\[0\]\.function\.arguments is a string that is not valid JSON/);
  bad(() => renderChat(byteTok, call('["a"]')), /arguments is a string that does not hold a JSON object/);
  bad(() => renderChat(byteTok, call({ n: NaN })), /^messages\[1\]\.tool_calls\[0\]\.function\.arguments\.n is NaN/);
  bad(() => renderChat(byteTok, [{ role: 'assistant', content: '', tool_calls: [{ function: { arguments: {} } } as never] }]),
    /^messages\[0\]\.tool_calls\[0\]\.function\.name is missing/);
  bad(() => renderChat(byteTok, [{ role: 'assistant', content: null, tokenIds: [104, 265] }]),
    /^messages\[0\]\.tokenIds\[1\] is 265; token ids are integers in \[0, 265\)$/);
  // A model with padded rows (AgentPolicy.vocabSize) samples ids the tokenizer has not: its own samples are taken up to its rows.
  const padded = new ChatRenderer(byteTok, {}, 272).append({ role: 'assistant', content: null, tokenIds: [104, 271] });
  t.same([...padded.ids.slice(-4, -2)], [104, 271], 'a sampled id past the tokenizer, below the model\'s rows, is kept');
  bad(() => new ChatRenderer(byteTok, {}, 272).append({ role: 'assistant', content: null, tokenIds: [272] }), /^messages\[0\]\.tokenIds\[0\] is 272; token ids are integers in \[0, 272\)$/);

  bad(() => renderChat(byteTok, [], { tool: [] } as RenderOptions), /^options\.tool is not a known option/);
  bad(() => renderChat(byteTok, [], { tools: [{ type: 'function' }] }), /^options\.tools\.0\.function is required/);
  bad(() => renderChat(byteTok, [], { enableThinking: 'no' } as unknown as RenderOptions), /^options\.enableThinking must be of type boolean/);
  bad(() => new ChatRenderer(byteTok, { addGenerationPrompt: true } as RenderOptions), /^options\.addGenerationPrompt is not a known option/);

  const noChatMl: Tokenizer = { vocabSize: 256, specialTokens: {}, encode: (s: string) => byteTok.encode(s) } as unknown as Tokenizer;
  bad(() => renderChat(noChatMl, []), /^tokenizer has no <\|im_start\|> token; ChatML needs/);

  const renderer = new ChatRenderer(byteTok).append({ role: 'user', content: 'q' }).generationPrompt();
  const before = renderer.ids;
  bad(() => renderer.append({ role: 'user', content: 'again' }), /^messages\[1\]\.role is "user" right after the generation prompt; append the assistant reply first/);
  bad(() => renderer.generationPrompt(), /^generationPrompt\(\) was called twice/);
  bad(() => renderer.append({ role: 'assistant', content: 'ok' }, { role: 'bogus' } as unknown as ChatMessage), /^messages\[2\]\.role/);
  t.same(renderer.ids, before, 'a rejected append changes nothing');
  renderer.append({ role: 'assistant', content: 'ok' });
  t.equal(byteTok.decode(renderer.ids), '<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\nok<|im_end|>\n');
});

t.test('parseToolCalls reads back what the template writes', async (t) => {
  const body = AGENT_BODY_1.replace('<|im_end|>', '');
  t.same(parseToolCalls(body), {
    content: '<think>\nI should read both files.\n</think>\n\nLet me read them.',
    toolCalls: [{ name: 'read_file', arguments: { path: 'a.py' } }, { name: 'read_file', arguments: { path: 'b.py' } }],
    errors: [],
  });
  t.same(parseToolCalls('just text\n'), { content: 'just text\n', toolCalls: [], errors: [] });
  t.same(parseToolCalls('<tool_call>\n{"name": "run", "arguments": {"cmd": "ls"}}'), {
    content: '',
    toolCalls: [{ name: 'run', arguments: { cmd: 'ls' } }],
    errors: [],
  }, 'a last call the sampler cut before </tool_call> is still read');
  t.same(parseToolCalls('<tool_call>{"name": "finish"}</tool_call>'), { content: '', toolCalls: [{ name: 'finish', arguments: {} }], errors: [] });

  const mixed = parseToolCalls(
    'Plan.\n<tool_call>\n{"name": "a", "arguments": {oops}\n</tool_call>\n<tool_call>\n{"name": "b", "arguments": {"x": 1}}\n</tool_call>\n' +
      '<tool_call>\n["not", "a", "call"]\n</tool_call><tool_call>{"arguments": {}}</tool_call><tool_call>\n{"name": "c", "argu',
  );
  t.equal(mixed.content, 'Plan.');
  t.same(mixed.toolCalls, [{ name: 'b', arguments: { x: 1 } }]);
  t.equal(mixed.errors.length, 4);
  t.match(mixed.errors[0], /^tool call 1: invalid JSON/);
  t.match(mixed.errors[1], /^tool call 3: expected \{"name": \.\.\., "arguments": \{\.\.\.\}\}/);
  t.match(mixed.errors[2], /^tool call 4: "name" is missing/);
  t.match(mixed.errors[3], /^tool call 5 \(no <\/tool_call>\): invalid JSON/);
});

t.test('formatToolCall and pythonJsonDumps write what Python json.dumps does', async (t) => {
  t.equal(
    formatToolCall({ function: { name: 'f', arguments: { b: [1, 2.5, true, null], a: { 'é': 'ü\n"\\\t\u0001' }, u: undefined } } }, 'call'),
    '<tool_call>\n{"name": "f", "arguments": {"b": [1, 2.5, true, null], "a": {"é": "ü\\n\\"\\\\\\t\\u0001"}}}\n</tool_call>',
  );
  t.equal(formatToolCall({ function: { name: 'f', arguments: '{"x":1}' } }, 'call'), '<tool_call>\n{"name": "f", "arguments": {"x":1}}\n</tool_call>', 'string arguments verbatim');
  t.equal(pythonJsonDumps({}, 'x'), '{}');
  t.equal(pythonJsonDumps([], 'x'), '[]');
  t.equal(pythonJsonDumps([undefined, 'a'], 'x'), '[null, "a"]');
  t.throws(() => pythonJsonDumps({ f: () => 1 }, 'tool'), { code: 'ERR_SWERL_INVALID_ARG', message: /^tool\.f is a function/ });
  t.throws(() => pythonJsonDumps([Infinity], 'v'), { code: 'ERR_SWERL_INVALID_ARG', message: /^v\[0\] is Infinity/ });
});

t.test('deeply nested tool calls are refused by name, never a stack overflow', async (t) => {
  const deep = '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000);
  const parsed = parseToolCalls(`<tool_call>\n{"name": "search", "arguments": ${deep}}\n</tool_call>`);
  t.same(parsed.toolCalls, []);
  t.match(parsed.errors[0], /tool call 1: arguments nest more than 64 levels deep/);
  let nested: Record<string, unknown> = {};
  for (let i = 0; i < 100_000; i++) nested = { a: nested };
  t.throws(() => formatToolCall({ function: { name: 'search', arguments: nested } }, 'messages[1].tool_calls[0]'), {
    code: 'ERR_SWERL_INVALID_ARG',
    message: /messages\[1\]\.tool_calls\[0\]\.function\.arguments nests more than 64 levels/,
  });
});
