import t from 'tap';

import { parseJsonToolCalls, parseTextAction } from '../../../../lib/env/actions.js';
import { SweTools, TOOL_NAMES, toolDescriptions } from '../../../../lib/env/tools/index.js';
import { sandboxWith } from './fixture.js';

t.test('execute_bash: exit codes, combined output, a fresh shell in the work tree each call', async (t) => {
  const tools = new SweTools(await sandboxWith(t));
  t.same(await tools.call({ name: 'execute_bash', args: { cmd: 'echo hello' } }), {
    tool: 'execute_bash',
    observation: 'Exit code: 0\nExecution output of [execute_bash]:\nhello\n',
    finished: false,
    error: false,
    timedOut: false,
  });
  t.same(await tools.call({ name: 'execute_bash', args: { cmd: 'echo out; echo err >&2; exit 3' } }), {
    tool: 'execute_bash',
    observation: 'Exit code: Error: Exit code 3\nExecution output of [execute_bash]:\nout\nerr\n',
    finished: false,
    error: false,
    timedOut: false,
  });
  t.equal(
    (await tools.call({ name: 'execute_bash', args: { cmd: 'cd pkg && export X=1 && pwd' } })).observation,
    'Exit code: 0\nExecution output of [execute_bash]:\n/testbed/pkg\n',
  );
  t.equal(
    (await tools.call({ name: 'execute_bash', args: { cmd: 'pwd; echo "[$X]"' } })).observation,
    'Exit code: 0\nExecution output of [execute_bash]:\n/testbed\n[]\n',
    'no cwd or environment carries over',
  );
  t.equal(
    (await tools.call({ name: 'execute_bash', args: { cmd: "printf '\\033[31mred\\033[0m\\r\\n'" } })).observation,
    'Exit code: 0\nExecution output of [execute_bash]:\nred\n',
    'terminal controls stripped',
  );
  t.match(
    (await tools.call({ name: 'execute_bash', args: { cmd: 'seq 1 100' } })).observation,
    /^Exit code: 0\nExecution output of \[execute_bash\]:\n1\n2\n[^]*\n40\n\[\.\.\. \d+ lines truncated: [^\n]*\]\n[^]*\n100\n$/,
    'the middle of long outputs cut (observations.ts)',
  );
});

t.test('execute_bash: the step timeout', async (t) => {
  const sandbox = await sandboxWith(t);
  const tools = new SweTools(sandbox);
  const started = performance.now();
  t.same(await tools.call({ name: 'execute_bash', args: { cmd: 'sleep 20' } }, { timeoutMs: 500 }), {
    tool: 'execute_bash',
    observation: 'Exit code: -1\nExecution output of [execute_bash]:\nThe command took too long to execute (>0.5s)',
    finished: false,
    error: false,
    timedOut: true,
  });
  const ms = performance.now() - started;
  t.ok(ms < 20_000, `stopped before the command's own 20 s (${ms.toFixed(0)} ms)`);
  t.equal(
    (await tools.call({ name: 'execute_bash', args: { cmd: 'sleep 20' } }, { timeoutMs: 300 })).observation,
    'Exit code: -1\nExecution output of [execute_bash]:\nThe command took too long to execute (>0.3s)',
    'a per-call limit',
  );
  await t.rejects(tools.call({ name: 'execute_bash', args: { cmd: 'true' } }, { timeoutMs: 0 }), { code: 'ERR_SWERL_INVALID_ARG', message: 'options.timeoutMs is 0; give a positive number of milliseconds' });
  t.throws(() => new SweTools(sandbox, { profile: 'swe-agent' as 'default' }), { code: 'ERR_SWERL_INVALID_ARG', message: 'options.profile is "swe-agent"; use "default" or "r2egym"' });
});

t.test('execute_bash: output past the sandbox limit', async (t) => {
  const tools = new SweTools(await sandboxWith(t, { 'a.txt': 'a\n' }, { limits: { maxOutputBytes: 4096 } }));
  // A command that never ends by itself: one that ends (yes | head -c 1000000) can finish before
  // the limit's kill lands, under load, and exit 0 (a fresh-clone CI run saw it).
  const result = await tools.call({ name: 'execute_bash', args: { cmd: 'yes; echo never' } });
  t.match(result.observation, /^Exit code: Error: Exit code \d+\nExecution output of \[execute_bash\]:\ny\n/);
  t.ok(
    result.observation.endsWith(
      '\n[The output passed the size limit, so the command was stopped. Send long output to a file and read parts of it (head, tail, grep).]',
    ),
  );
  t.notMatch(result.observation, /never/);
  t.equal(result.timedOut, false);
});

t.test('search and file_editor: R2E-Gym observation lines, error flags', async (t) => {
  const tools = new SweTools(await sandboxWith(t));
  t.same(await tools.call({ name: 'search', args: { search_term: 'haystack' } }), {
    tool: 'search',
    observation: 'Execution output of [search]:\nFound 1 matches for "haystack" in /testbed:\n./src/notes.txt (1 matches)\nEnd of matches for "haystack" in /testbed',
    finished: false,
    error: false,
    timedOut: false,
  });
  t.same(await tools.call({ name: 'search', args: { search_term: 'x', path: 'missing' } }), {
    tool: 'search',
    observation: "Execution output of [search]:\nDirectory '/testbed/missing' not found or not a directory.",
    finished: false,
    error: true,
    timedOut: false,
  });
  t.same(await tools.call({ name: 'file_editor', args: { command: 'view', path: '/testbed/README.md' } }), {
    tool: 'file_editor',
    observation: "Execution output of [file_editor]:\nHere's the result of running `cat -n` on the file: /testbed/README.md:\n     1 # Demo\n     2 A small fixture repository.",
    finished: false,
    error: false,
    timedOut: false,
  });
  t.same(await tools.call({ name: 'file_editor', args: { command: 'view', path: 'README.md' } }), {
    tool: 'file_editor',
    observation: "Execution output of [file_editor]:\nERROR: The path 'README.md' is not an absolute path. Use an absolute path, e.g. '/testbed/README.md'.",
    finished: false,
    error: true,
    timedOut: false,
  });
  await tools.call({ name: 'file_editor', args: { command: 'str_replace', path: '/testbed/README.md', old_str: 'Demo', new_str: 'Demo 2' } });
  await tools.call({ name: 'file_editor', args: { command: 'str_replace', path: '/testbed/README.md', old_str: 'Demo 2', new_str: 'Demo 3' } });
  t.match((await tools.call({ name: 'file_editor', args: { command: 'undo_edit', path: '/testbed/README.md' } })).observation, /\t# Demo 2\n/);
  t.match(
    (await tools.call({ name: 'file_editor', args: { command: 'undo_edit', path: '/testbed/README.md' } })).observation,
    /\t# Demo\n/,
    'the undo history lives as long as the SweTools',
  );
});

t.test('finish, unknown tools, missing parameters', async (t) => {
  const tools = new SweTools(await sandboxWith(t));
  t.same(await tools.call({ name: 'finish', args: { command: 'submit' } }), {
    tool: 'finish',
    observation: '<<< Finished >>>',
    finished: true,
    error: false,
    timedOut: false,
  });
  t.equal((await tools.call({ name: 'finish', args: {} })).finished, true, 'command defaults to submit');
  t.same(await tools.call({ name: 'run_python', args: { code: 'print(1)' } }), {
    tool: 'run_python',
    observation: "ERROR: Unknown tool 'run_python'. Valid tools: execute_bash, search, file_editor, finish.",
    finished: false,
    error: true,
    timedOut: false,
  });
  t.same(await tools.call({ name: 'execute_bash', args: { command: 'ls' } }), {
    tool: 'execute_bash',
    observation: "ERROR: Missing required parameter 'cmd' for tool 'execute_bash'. Parameters of execute_bash: cmd (required).",
    finished: false,
    error: true,
    timedOut: false,
  });
  t.equal(
    (await tools.call({ name: 'file_editor', args: { command: 'view' } })).observation,
    "ERROR: Missing required parameter 'path' for tool 'file_editor'. Parameters of file_editor: command (required), path (required), " +
      'file_text (optional), old_str (optional), new_str (optional), insert_line (optional), view_range (optional), concise (optional).',
  );
  t.equal(
    (await tools.call({ name: 'search', args: { path: '.' } })).observation,
    "ERROR: Missing required parameter 'search_term' for tool 'search'. Parameters of search: search_term (required), path (optional).",
  );
});

t.test('parsed actions run end to end (text and JSON calls)', async (t) => {
  const sandbox = await sandboxWith(t);
  const tools = new SweTools(sandbox);
  const text = parseTextAction(
    'I will fix it.\n<function=file_editor>\n<parameter=command>str_replace</parameter>\n<parameter=path>/testbed/src/app.py</parameter>\n' +
      '<parameter=old_str>\nline 3\n</parameter>\n<parameter=new_str>line three</parameter>\n</function>',
  )!;
  t.equal(
    (await tools.call(text)).observation,
    'Execution output of [file_editor]:\nThe file /testbed/src/app.py has been edited. ' +
      "Here's the result of running `cat -n` on a snippet of /testbed/src/app.py:\n" +
      '     1\tline 1\n     2\tline 2\n     3\tline three\n     4\tline 4\n     5\tline 5\n     6\tline 6\n     7\tline 7\n' +
      'Review the changes and make sure they are as expected. Edit the file again if necessary.',
  );
  const json = parseJsonToolCalls([
    { function: { name: 'file_editor', arguments: JSON.stringify({ command: 'view', path: '/testbed/src/app.py', view_range: [2, 3] }) } },
  ])!;
  t.equal(
    (await tools.call(json)).observation,
    "Execution output of [file_editor]:\nHere's the result of running `cat -n` on the file: /testbed/src/app.py:\n     2 line 2\n     3 line three",
  );
  const insert = parseJsonToolCalls([{ function: { name: 'file_editor', arguments: { command: 'insert', path: '/testbed/src/app.py', insert_line: 0, new_str: '# top' } } }])!;
  t.match((await tools.call(insert)).observation, /\n     1\t# top\n/);

  await sandbox.destroy();
  await t.rejects(tools.call({ name: 'execute_bash', args: { cmd: 'true' } }), { code: 'ERR_SWERL_SANDBOX' }, 'a destroyed sandbox throws');
  await t.rejects(tools.call({ name: 'file_editor', args: { command: 'view', path: '/testbed' } }), { code: 'ERR_SWERL_SANDBOX' });
  await t.rejects(tools.call({ name: 'search', args: { search_term: 'x' } }), { code: 'ERR_SWERL_SANDBOX' });
});

t.test('r2egym profile: R2E-Gym refused some commands; .py-only tools', async (t) => {
  const tools = new SweTools(await sandboxWith(t), { profile: 'r2egym' });
  const refused = (word: string) => `Exit code: Error: Exit code 1\nExecution output of [execute_bash]:\nBash command '${word}' is not allowed. Please use a different command or tool.\n`;
  t.equal((await tools.call({ name: 'execute_bash', args: { cmd: 'cd pkg && ls' } })).observation, refused('cd'));
  t.equal((await tools.call({ name: 'execute_bash', args: { cmd: '  pip install requests' } })).observation, refused('pip'));
  t.equal((await tools.call({ name: 'execute_bash', args: { cmd: 'ls pkg; cd pkg' } })).observation, 'Exit code: 0\nExecution output of [execute_bash]:\n__init__.py\ndeep\nutil.py\n');
  t.equal(
    (await tools.call({ name: 'file_editor', args: { command: 'view', path: '/testbed/README.md' } })).observation,
    "Execution output of [file_editor]:\nERROR: Viewing non-Python files is disallowed for saving context. File 'README.md' is not a .py file.",
  );
  t.equal(
    (await tools.call({ name: 'search', args: { search_term: 'needle' } })).observation,
    'Execution output of [search]:\nFound 2 matches for "needle" in /testbed:\n./pkg/util.py (1 matches)\n./pkg/deep/inner/x.py (1 matches)\nEnd of matches for "needle" in /testbed',
  );
  t.test('the default profile refuses nothing', async (t) => {
    const plain = new SweTools(await sandboxWith(t));
    t.equal((await plain.call({ name: 'execute_bash', args: { cmd: 'cd pkg && pwd' } })).observation, 'Exit code: 0\nExecution output of [execute_bash]:\n/testbed/pkg\n');
  });
});

/** `  - name (type, required|optional): ...` lines of one tool's section of the text block. */
function textParameters(text: string, tool: string): Array<{ name: string; type: string; required: boolean }> {
  const section = text.split('\n### ').find((s) => s.startsWith(`${tool}\n`));
  if (!section) throw new Error(`no section for ${tool}`);
  return [...section.matchAll(/^ {2}- (\w+) \((\w+), (required|optional)\): /gm)].map((m) => ({ name: m[1]!, type: m[2]!, required: m[3] === 'required' }));
}

t.test('toolDescriptions: the text block and the OpenAI schemas describe the same parameters', async (t) => {
  for (const profile of ['default', 'r2egym'] as const) {
    const { text, openAiTools } = toolDescriptions(profile);
    t.match(text, /<function=TOOL_NAME>\n<parameter=PARAMETER_NAME>value<\/parameter>\n/, `${profile}: the call grammar`);
    t.match(text, /<\/function>/);
    t.same(JSON.parse(JSON.stringify(openAiTools)), openAiTools, 'plain JSON');
    const tools = openAiTools as Array<{
      type: string;
      function: { name: string; description: string; parameters: { type: string; properties: Record<string, { type: string; enum?: string[]; items?: object }>; required: string[] } };
    }>;
    t.same(
      tools.map((tool) => tool.function.name),
      [...TOOL_NAMES],
    );
    for (const tool of tools) {
      t.equal(tool.type, 'function');
      t.ok(text.includes(`### ${tool.function.name}\n${tool.function.description}\n`), `${profile}/${tool.function.name}: same description`);
      const fromText = textParameters(text, tool.function.name);
      t.same(
        fromText,
        Object.entries(tool.function.parameters.properties).map(([name, p]) => ({ name, type: p.type, required: tool.function.parameters.required.includes(name) })),
        `${profile}/${tool.function.name}: same parameters, types and required flags`,
      );
    }
    const editor = tools.find((tool) => tool.function.name === 'file_editor')!.function.parameters;
    t.same(editor.properties.command!.enum, ['view', 'create', 'str_replace', 'insert', 'undo_edit']);
    t.same(editor.properties.view_range!.items, { type: 'integer' });
    t.same(editor.required, ['command', 'path']);
  }
  const r2egym = toolDescriptions('r2egym').text;
  const plain = toolDescriptions('default').text;
  t.match(r2egym, /only `\.py` files can be viewed/);
  t.match(r2egym, /`cd`, `ipython`, `jupyter`, `pip`, `nohup` are refused/);
  t.notMatch(plain, /are refused/);
  t.notMatch(plain, /only `\.py`/);
});

t.test('toolDescriptions: required parameters are what SweTools checks', async (t) => {
  const tools = new SweTools(await sandboxWith(t));
  for (const tool of toolDescriptions().openAiTools as Array<{ function: { name: string; parameters: { required: string[] } } }>) {
    const { name, parameters } = tool.function;
    const result = await tools.call({ name, args: {} });
    if (parameters.required.length === 0) t.notOk(result.error, `${name} needs nothing`);
    else t.match(result.observation, new RegExp(`^ERROR: Missing required parameter '${parameters.required[0]}' for tool '${name}'`));
  }
});
