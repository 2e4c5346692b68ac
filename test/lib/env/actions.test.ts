import t from 'tap';

import { countTextCalls, parseJsonToolCalls, parseTextAction } from '../../../lib/env/actions.js';

t.test('text calls', async (t) => {
  t.same(
    parseTextAction('I will look.\n<function=execute_bash>\n<parameter=cmd>\n  ls -la /testbed \n</parameter>\n</function>'),
    { name: 'execute_bash', args: { cmd: 'ls -la /testbed' } },
    'name and trimmed argument',
  );
  t.same(
    parseTextAction('<function=file_editor><parameter=command>create</parameter><parameter=path>/a.py</parameter><parameter=file_text>def f():\n    return 1\n</parameter></function>'),
    { name: 'file_editor', args: { command: 'create', path: '/a.py', file_text: 'def f():\n    return 1' } },
    'several arguments; values span lines',
  );
  t.same(
    parseTextAction('<function=search><parameter=search_term>a</parameter><parameter=search_term>b</parameter></function>'),
    { name: 'search', args: { search_term: 'b' } },
    'a repeated key keeps the last value',
  );
  t.same(
    parseTextAction('<function=finish><parameter=command>submit</parameter></function>\n<function=execute_bash><parameter=cmd>rm -rf /</parameter></function>'),
    { name: 'finish', args: { command: 'submit' } },
    'only the first call counts',
  );
  t.same(
    parseTextAction('<function=execute_bash>\n<parameter=cmd>pytest -x</parameter>\n'),
    { name: 'execute_bash', args: { cmd: 'pytest -x' } },
    'a call cut before </function> runs to the end',
  );
  t.same(
    parseTextAction('<function=execute_bash></function><parameter=cmd>after</parameter>'),
    { name: 'execute_bash', args: {} },
    'parameters after </function> are ignored',
  );
  t.equal(parseTextAction('I think the bug is in utils.py.'), null, 'no call');
  t.equal(parseTextAction('<function=>\n</function>'), null, 'no name');
});

t.test('counting text calls: a turn must make exactly one', async (t) => {
  const bash = (cmd: string) => `<function=execute_bash>\n<parameter=cmd>${cmd}</parameter>\n</function>`;
  t.equal(countTextCalls('no call here'), 0);
  t.equal(countTextCalls(bash('ls')), 1);
  t.equal(countTextCalls(`${bash('ls')}\nand then\n${bash('pwd')}`), 2, 'two closed calls');
  t.equal(countTextCalls(`${bash('ls')}${bash('pwd')}<function=finish>`), 3, 'the last one unclosed still counts');
  t.equal(countTextCalls(bash('grep -rn "<function=foo>" .')), 1, 'a command mentioning <function= inside a call is not a second call');
  t.equal(countTextCalls('<function=>\n</function>'), 0, 'no name, no call');
  t.equal(countTextCalls('<function=execute_bash><parameter=cmd>ls'), 1, 'an unclosed call runs to the end');
});

t.test('JSON tool calls', async (t) => {
  t.same(
    parseJsonToolCalls([
      { type: 'function', id: '1', function: { name: 'file_editor', arguments: '{"command": "view", "path": "/x", "view_range": [1, 5], "concise": true}' } },
      { type: 'function', id: '2', function: { name: 'finish', arguments: '{}' } },
    ]),
    { name: 'file_editor', args: { command: 'view', path: '/x', view_range: '[1,5]', concise: 'true' } },
    'first call; every value as a string',
  );
  t.same(parseJsonToolCalls([{ function: { name: 'finish', arguments: '' } }]), { name: 'finish', args: {} }, 'empty arguments');
  t.same(parseJsonToolCalls([{ function: { name: 'search', arguments: { search_term: ' x ' } } }]), { name: 'search', args: { search_term: 'x' } }, 'object arguments');
  t.equal(parseJsonToolCalls([]), null);
  t.equal(parseJsonToolCalls(undefined), null);
  t.throws(() => parseJsonToolCalls([{ function: { name: 'search', arguments: '{oops' } }]), { code: 'ERR_SWERL_INVALID_ARG', message: /arguments is not valid JSON/ });
  t.throws(() => parseJsonToolCalls([{ function: { name: 'search', arguments: '[1]' } }]), { code: 'ERR_SWERL_INVALID_ARG', message: /must be a JSON object/ });
});

t.test('hostile text is parsed in linear time', async (t) => {
  // The regex parser this replaced took 30-39 s on 4k characters of these, minutes on 8k.
  const hostile = [
    '<function=' + ' '.repeat(200_000),
    '<function=x>\n<parameter=' + '\n'.repeat(200_000),
    '<function' + '\t'.repeat(200_000) + '<function=a>',
    '<function=x>' + '<parameter=a>'.repeat(20_000),
    '<function=x>' + '<parameter=a>b</parameter>'.repeat(20_000),
  ];
  // CPU time, not the wall clock: another job on the cores stretches the latter (a backtracking
  // pattern here took seconds of CPU; linear parsing takes milliseconds).
  for (const text of hostile) {
    const started = process.cpuUsage();
    parseTextAction(text);
    const { user, system } = process.cpuUsage(started);
    t.ok((user + system) / 1000 < 500, `${JSON.stringify(text.slice(0, 24))}... (${text.length} chars) parsed within 500 ms of CPU`);
  }
  t.same(parseTextAction('<function' + ' '.repeat(1000) + '<function=a>'), { name: 'a', args: {} }, 'a tag without = is passed over');
  t.same(parseTextAction('<function=x><parameter=a>1</parameter><parameter=b>2'), { name: 'x', args: { a: '1' } }, 'an unclosed parameter is not a parameter');
  t.same(parseTextAction('<function  =  x  ><parameter\n=\nk\n>v</parameter>'), { name: 'x', args: { k: 'v' } }, 'whitespace around = and before >');
});

t.test('deeply nested tool-call arguments are a clean error', async (t) => {
  const deep = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
  t.throws(() => parseJsonToolCalls([{ function: { name: 'search', arguments: deep(100_000) } }]), { code: 'ERR_SWERL_INVALID_ARG', message: /arguments nests more than 64 levels/ });
  let nested: Record<string, unknown> = {};
  for (let i = 0; i < 100_000; i++) nested = { a: nested };
  t.throws(() => parseJsonToolCalls([{ function: { name: 'search', arguments: nested } }]), { code: 'ERR_SWERL_INVALID_ARG' });
  t.same(parseJsonToolCalls([{ function: { name: 'search', arguments: deep(60) } }])?.name, 'search', 'real depths still parse');
});
