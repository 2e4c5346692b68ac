import t from 'tap';

import { parseJsonToolCalls, parseTextAction } from '../../../lib/env/actions.js';

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
