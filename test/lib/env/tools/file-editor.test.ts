import t from 'tap';

import { CLIPPED_MARKER } from '../../../../lib/env/tools/common.js';
import { FileEditor, parseViewRange } from '../../../../lib/env/tools/file-editor.js';
import { numberedLines, sandboxWith } from './fixture.js';

/** Lines numbered from `first`, as views print them: number in 6 columns, then `sep`. */
function numbered(lines: readonly string[], first = 1, sep = ' '): string {
  return lines.map((line, i) => `${String(first + i).padStart(6)}${sep}${line}`).join('\n');
}

function range(from: number, to: number, word = 'line'): string[] {
  return Array.from({ length: to - from + 1 }, (_, i) => `${word} ${from + i}`);
}

const VIEW_HEADER = (file: string) => `Here's the result of running \`cat -n\` on the file: ${file}:\n`;
const EDITED = 'Review the changes and make sure they are as expected. Edit the file again if necessary.';
const INSERTED = 'Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary.';

t.test('view: a file, numbered in 6 columns and one space', async (t) => {
  const editor = new FileEditor(await sandboxWith(t), { profile: 'default' });
  t.equal(
    await editor.run({ command: 'view', path: '/testbed/README.md' }),
    "Here's the result of running `cat -n` on the file: /testbed/README.md:\n     1 # Demo\n     2 A small fixture repository.",
  );
  t.equal(
    await editor.run({ command: 'view', path: '/testbed/src/app.py' }),
    VIEW_HEADER('/testbed/src/app.py') + numbered(range(1, 12)),
  );
  t.equal(
    await editor.run({ command: 'view', path: '/testbed//src/./app.py/' }),
    VIEW_HEADER('/testbed/src/app.py') + numbered(range(1, 12)),
    'the path is normalised as Python prints it',
  );
  t.equal(await editor.run({ command: 'view', path: '/testbed/pkg/__init__.py' }), VIEW_HEADER('/testbed/pkg/__init__.py'), 'empty file');
});

t.test('view: view_range', async (t) => {
  const editor = new FileEditor(await sandboxWith(t), { profile: 'default' });
  const file = '/testbed/src/app.py';
  const view = (view_range: string) => editor.run({ command: 'view', path: file, view_range });
  t.equal(await view('[3, 5]'), `${VIEW_HEADER(file)}     3 line 3\n     4 line 4\n     5 line 5`);
  t.equal(await view('[10, -1]'), `${VIEW_HEADER(file)}    10 line 10\n    11 line 11\n    12 line 12`, '-1 is the end');
  t.equal(await view('[12, 12]'), `${VIEW_HEADER(file)}    12 line 12`);
  t.equal(await view('3,4'), `${VIEW_HEADER(file)}     3 line 3\n     4 line 4`, 'brackets optional');
  t.equal(await view('[1,2]'), `${VIEW_HEADER(file)}     1 line 1\n     2 line 2`, 'JSON form');
  t.equal(await view('[0, 5]'), 'ERROR: Invalid view_range [0, 5]: start line must be in [1, 12]');
  t.equal(await view('[13, -1]'), 'ERROR: Invalid view_range [13, -1]: start line must be in [1, 12]');
  t.equal(await view('[5, 13]'), 'ERROR: Invalid view_range [5, 13]: end must be >= start and <= 12, or -1 to view until end.');
  t.equal(await view('[6, 5]'), 'ERROR: Invalid view_range [6, 5]: end must be >= start and <= 12, or -1 to view until end.');
  t.equal(
    await view('[1, x]'),
    "ERROR: Invalid view_range '[1, x]': give two integers [start_line, end_line], e.g. [3, 10]; an end_line of -1 means the end of the file.",
  );
  t.equal(await view('  '), VIEW_HEADER(file) + numbered(range(1, 12)), 'an empty view_range is no range');
  t.same(parseViewRange('(2 7)'), [2, 7]);
  t.same(parseViewRange(' [ -3 , +4 ] '), [-3, 4]);
});

t.test('view: a directory, two levels deep, hidden entries excluded, sorted', async (t) => {
  const editor = new FileEditor(await sandboxWith(t), { profile: 'default' });
  t.equal(
    await editor.run({ command: 'view', path: '/testbed' }),
    [
      "Here's the files and directories up to 2 levels deep in /testbed, excluding hidden:",
      '/testbed',
      '/testbed/README.md',
      '/testbed/data.bin',
      '/testbed/pkg',
      '/testbed/pkg/__init__.py',
      '/testbed/pkg/deep',
      '/testbed/pkg/util.py',
      '/testbed/src',
      '/testbed/src/app.py',
      '/testbed/src/notes.txt',
      '',
    ].join('\n'),
  );
  t.equal(
    await editor.run({ command: 'view', path: '/testbed/pkg/' }),
    [
      "Here's the files and directories up to 2 levels deep in /testbed/pkg, excluding hidden:",
      '/testbed/pkg',
      '/testbed/pkg/__init__.py',
      '/testbed/pkg/deep',
      '/testbed/pkg/deep/inner',
      '/testbed/pkg/util.py',
      '',
    ].join('\n'),
  );
  t.equal(
    await editor.run({ command: 'view', path: '/testbed/.hidden' }),
    "Here's the files and directories up to 2 levels deep in /testbed/.hidden, excluding hidden:\n/testbed/.hidden\n/testbed/.hidden/h.py\n",
    'a hidden folder can be listed when asked for by name',
  );
});

t.test('create', async (t) => {
  const sandbox = await sandboxWith(t);
  const editor = new FileEditor(sandbox, { profile: 'default' });
  t.equal(
    await editor.run({ command: 'create', path: '/testbed/src/new.py', file_text: 'def f():\n\treturn 1\n' }),
    'File created at /testbed/src/new.py. ' +
      "Here's the result of running `cat -n` on /testbed/src/new.py:\n" +
      '     1\tdef f():\n     2\t        return 1\n     3\t\n' +
      'Review the file and make sure that it is as expected. Edit the file if necessary.',
    'numbers then a TAB; tabs in the text expanded; a final newline shows an empty line',
  );
  t.equal((await sandbox.readFile('src/new.py')).toString(), 'def f():\n\treturn 1\n', 'written as given');
  t.equal(
    await editor.run({ command: 'create', path: '/testbed/src/app.py', file_text: 'x' }),
    "ERROR: File already exists at: /testbed/src/app.py. Cannot overwrite with 'create'.",
  );
  t.equal(
    await editor.run({ command: 'create', path: '/testbed/src', file_text: 'x' }),
    "ERROR: File already exists at: /testbed/src. Cannot overwrite with 'create'.",
  );
  t.equal((await sandbox.readFile('src/app.py')).toString(), numberedLines(12), 'the existing file is untouched');
  t.equal(await editor.run({ command: 'create', path: '/testbed/src/other.py' }), "ERROR: Cannot create file without 'file_text' parameter.");
  t.match(await editor.run({ command: 'create', path: '/testbed/new/dir/m.py', file_text: 'm = 1' }), /^File created at \/testbed\/new\/dir\/m\.py\. /);
  t.equal((await sandbox.readFile('new/dir/m.py')).toString(), 'm = 1', 'parent folders are made');
  t.equal(await editor.run({ command: 'create', path: '/testbed/empty.py', file_text: '' }), "File created at /testbed/empty.py. Here's the result of running `cat -n` on /testbed/empty.py:\n     1\t\nReview the file and make sure that it is as expected. Edit the file if necessary.");
});

t.test('str_replace', async (t) => {
  const sandbox = await sandboxWith(t);
  const editor = new FileEditor(sandbox, { profile: 'default' });
  const file = '/testbed/src/app.py';
  t.equal(
    await editor.run({ command: 'str_replace', path: file, old_str: 'line 6', new_str: 'line six\nline 6.5' }),
    `The file ${file} has been edited. Here's the result of running \`cat -n\` on a snippet of ${file}:\n` +
      numbered(['line 2', 'line 3', 'line 4', 'line 5', 'line six', 'line 6.5', 'line 7', 'line 8', 'line 9', 'line 10'], 2, '\t') +
      `\n${EDITED}`,
    'snippet: 4 lines before the edit to 4 lines after the new text',
  );
  t.equal(
    (await sandbox.readFile('src/app.py')).toString(),
    'line 1\nline 2\nline 3\nline 4\nline 5\nline six\nline 6.5\nline 7\nline 8\nline 9\nline 10\nline 11\nline 12\n',
  );
  t.equal(
    await editor.run({ command: 'str_replace', path: file, old_str: 'line 1\n', new_str: '# first\n' }),
    `The file ${file} has been edited. Here's the result of running \`cat -n\` on a snippet of ${file}:\n` +
      numbered(['# first', 'line 2', 'line 3', 'line 4', 'line 5', 'line six'], 1, '\t') +
      `\n${EDITED}`,
    'at the top: the snippet starts at line 1',
  );
  t.equal(
    await editor.run({ command: 'str_replace', path: file, old_str: 'line 12\n' }),
    `The file ${file} has been edited. Here's the result of running \`cat -n\` on a snippet of ${file}:\n` +
      numbered(['line 8', 'line 9', 'line 10', 'line 11', ''], 9, '\t') +
      `\n${EDITED}`,
    'no new_str: the text is deleted',
  );
  t.equal(
    (await sandbox.readFile('src/app.py')).toString(),
    '# first\nline 2\nline 3\nline 4\nline 5\nline six\nline 6.5\nline 7\nline 8\nline 9\nline 10\nline 11\n',
  );
  t.equal(
    await editor.run({ command: 'str_replace', path: file, old_str: 'line 99', new_str: 'x' }),
    `ERROR: No occurrences of 'line 99' found in ${file} for replacement.`,
  );
  t.equal(
    await editor.run({ command: 'str_replace', path: file, old_str: 'line 1', new_str: 'x' }),
    `ERROR: Multiple occurrences of 'line 1' found in ${file}. Please ensure it is unique before using str_replace.`,
    '"line 1" is in line 10 and 11 too',
  );
  t.equal(await editor.run({ command: 'str_replace', path: file, new_str: 'x' }), "ERROR: Missing required parameter 'old_str' for 'str_replace'.");
  const before = (await sandbox.readFile('src/app.py')).toString();
  t.equal(
    await editor.run({ command: 'str_replace', path: file, old_str: 'line 7', new_str: 'line 7' }),
    'ERROR: No replacement was performed: `new_str` is the same as `old_str`. Write the changed text in `new_str`.',
    'a replacement that changes nothing is refused',
  );
  t.equal(
    await editor.run({ command: 'str_replace', path: file, old_str: 'line 77', new_str: 'line 77' }),
    `ERROR: No occurrences of 'line 77' found in ${file} for replacement.`,
    'a text that is not there is reported first',
  );
  t.equal((await sandbox.readFile('src/app.py')).toString(), before, 'the file is untouched');
  const r2egym = new FileEditor(sandbox, { profile: 'r2egym' });
  t.match(await r2egym.run({ command: 'str_replace', path: file, old_str: 'line 7', new_str: 'line 7' }), /has been edited/, "the r2egym profile rewrites the file as R2E-Gym's script did");
  t.equal(
    await editor.run({ command: 'str_replace', path: '/testbed/src', old_str: 'a', new_str: 'b' }),
    "ERROR: The path '/testbed/src' is a directory. Only 'view' can be used on directories.",
  );
  t.equal(
    await editor.run({ command: 'str_replace', path: '/testbed/src/notes.txt', old_str: '$&', new_str: '$& $1 $$' }),
    "ERROR: No occurrences of '$&' found in /testbed/src/notes.txt for replacement.",
  );
  await editor.run({ command: 'str_replace', path: '/testbed/src/notes.txt', old_str: 'no match here', new_str: "$& $1 $$ $' `x`" });
  t.equal(
    (await sandbox.readFile('src/notes.txt')).toString(),
    "needle in a haystack\n$& $1 $$ $' `x`\nanother needle\n",
    'replacement text is literal (no $-patterns)',
  );
});

t.test('insert', async (t) => {
  const sandbox = await sandboxWith(t, { 'f.py': 'a\nb\nc\nd\ne\nf\n' });
  const editor = new FileEditor(sandbox, { profile: 'default' });
  const file = '/testbed/f.py';
  const content = async () => (await sandbox.readFile('f.py')).toString();
  t.equal(
    await editor.run({ command: 'insert', path: file, insert_line: '0', new_str: '# top' }),
    `The file ${file} has been edited. Here's the result of running \`cat -n\` on a snippet of the edited file:\n` +
      numbered(['# top', 'a', 'b', 'c', 'd'], 1, '\t') +
      `\n${INSERTED}`,
  );
  t.equal(await content(), '# top\na\nb\nc\nd\ne\nf\n');
  t.equal(
    await editor.run({ command: 'insert', path: file, insert_line: '5', new_str: 'm1\nm2' }),
    `The file ${file} has been edited. Here's the result of running \`cat -n\` on a snippet of the edited file:\n` +
      numbered(['a', 'b', 'c', 'd', 'm1', 'm2', 'e', 'f', ''], 2, '\t') +
      `\n${INSERTED}`,
    'after line 5; the last element of the split text is the empty line after the final newline',
  );
  t.equal(await content(), '# top\na\nb\nc\nd\nm1\nm2\ne\nf\n');
  t.equal(
    await editor.run({ command: 'insert', path: file, insert_line: '9', new_str: 'end' }),
    `The file ${file} has been edited. Here's the result of running \`cat -n\` on a snippet of the edited file:\n` +
      numbered(['m1', 'm2', 'e', 'f', 'end', ''], 6, '\t') +
      `\n${INSERTED}`,
    'after the last line',
  );
  t.equal(await content(), '# top\na\nb\nc\nd\nm1\nm2\ne\nf\nend\n');
  t.equal(await editor.run({ command: 'insert', path: file, insert_line: '11', new_str: 'x' }), 'ERROR: Invalid insert_line 11. Must be in [0, 10].');
  t.equal(await editor.run({ command: 'insert', path: file, insert_line: '-1', new_str: 'x' }), 'ERROR: Invalid insert_line -1. Must be in [0, 10].');
  t.equal(
    await editor.run({ command: 'insert', path: file, insert_line: 'two', new_str: 'x' }),
    "ERROR: Invalid insert_line 'two': it must be an integer (0 inserts at the top of the file).",
  );
  t.equal(await editor.run({ command: 'insert', path: file, new_str: 'x' }), "ERROR: Missing required parameter 'insert_line' for 'insert'.");
  t.equal(await editor.run({ command: 'insert', path: file, insert_line: '1' }), "ERROR: Missing required parameter 'new_str' for 'insert'.");
  t.equal(await content(), '# top\na\nb\nc\nd\nm1\nm2\ne\nf\nend\n', 'failed inserts change nothing');
});

t.test('undo_edit: a per-path history, several levels deep', async (t) => {
  const sandbox = await sandboxWith(t);
  const editor = new FileEditor(sandbox, { profile: 'default' });
  const file = '/testbed/src/mod.py';
  const content = async () => (await sandbox.readFile('src/mod.py')).toString();
  t.equal(await editor.run({ command: 'undo_edit', path: '/testbed/src/app.py' }), 'ERROR: No previous edits found for /testbed/src/app.py to undo.');
  await editor.run({ command: 'create', path: file, file_text: 'v = 1\n' });
  await editor.run({ command: 'str_replace', path: file, old_str: 'v = 1', new_str: 'v = 2' });
  await editor.run({ command: 'insert', path: file, insert_line: '1', new_str: 'w = 3' });
  await editor.run({ command: 'str_replace', path: '/testbed/src/app.py', old_str: 'line 12', new_str: 'last' });
  t.equal(await content(), 'v = 2\nw = 3\n');

  t.equal(
    await editor.run({ command: 'undo_edit', path: file }),
    `Last edit to ${file} undone successfully. Here's the result of running \`cat -n\` on ${file}:\n     1\tv = 2\n     2\t\n`,
  );
  t.equal(await content(), 'v = 2\n');
  t.equal(
    await editor.run({ command: 'undo_edit', path: file }),
    `Last edit to ${file} undone successfully. Here's the result of running \`cat -n\` on ${file}:\n     1\tv = 1\n     2\t\n`,
  );
  t.equal(await content(), 'v = 1\n');
  t.equal(
    await editor.run({ command: 'undo_edit', path: file }),
    `Last edit to ${file} undone successfully. The file did not exist before that edit, so it has been removed.`,
    'undoing the create removes the file',
  );
  t.equal((await sandbox.exec('test -e src/mod.py')).exitCode, 1);
  t.equal(await editor.run({ command: 'undo_edit', path: file }), `ERROR: The path '${file}' does not exist.`);
  await editor.run({ command: 'create', path: file, file_text: 'again' });
  t.equal(
    await editor.run({ command: 'undo_edit', path: file }),
    `Last edit to ${file} undone successfully. The file did not exist before that edit, so it has been removed.`,
  );
  t.equal(await editor.run({ command: 'create', path: file, file_text: 'third' }), `File created at ${file}. Here's the result of running \`cat -n\` on ${file}:\n     1\tthird\nReview the file and make sure that it is as expected. Edit the file if necessary.`);
  await editor.run({ command: 'str_replace', path: file, old_str: 'third', new_str: 'fourth' });
  t.match(await editor.run({ command: 'undo_edit', path: file }), /^Last edit to \/testbed\/src\/mod\.py undone successfully\./);
  t.match(await editor.run({ command: 'undo_edit', path: file }), /so it has been removed\.$/);
  t.equal(await editor.run({ command: 'undo_edit', path: file }), `ERROR: The path '${file}' does not exist.`);

  t.equal(
    await editor.run({ command: 'undo_edit', path: '/testbed/src/app.py' }),
    `Last edit to /testbed/src/app.py undone successfully. Here's the result of running \`cat -n\` on /testbed/src/app.py:\n` +
      numbered([...range(1, 12), ''], 1, '\t') +
      '\n',
    'the other file kept its own history',
  );
  t.equal(await editor.run({ command: 'undo_edit', path: '/testbed/src/app.py' }), 'ERROR: No previous edits found for /testbed/src/app.py to undo.');

  const other = new FileEditor(sandbox, { profile: 'default' });
  await editor.run({ command: 'str_replace', path: '/testbed/src/app.py', old_str: 'line 12', new_str: 'last' });
  t.equal(await other.run({ command: 'undo_edit', path: '/testbed/src/app.py' }), 'ERROR: No previous edits found for /testbed/src/app.py to undo.', 'history belongs to one editor (episode)');
});

t.test('every observation is clipped at 10,000 characters', async (t) => {
  const long = numberedLines(3000, 'a fairly long line of text, number');
  const sandbox = await sandboxWith(t, { 'long.txt': long });
  const editor = new FileEditor(sandbox, { profile: 'default' });
  const full = VIEW_HEADER('/testbed/long.txt') + numbered(long.trimEnd().split('\n'));
  const view = await editor.run({ command: 'view', path: '/testbed/long.txt' });
  t.equal(view, full.slice(0, 10_000) + CLIPPED_MARKER);
  t.equal(
    CLIPPED_MARKER,
    '<response clipped><NOTE>To save on context only part of this file has been shown to you. You should retry this tool after you have searched inside the file with `grep -n` in order to find the line numbers of what you are looking for.</NOTE>',
  );
  t.equal(await editor.run({ command: 'view', path: '/testbed/long.txt', view_range: '[100, 102]' }), VIEW_HEADER('/testbed/long.txt') + numbered(range(100, 102, 'a fairly long line of text, number'), 100), 'a range shows what was cut');

  // Edits clip the text before numbering it, as R2E-Gym does: the marker ends the last line.
  const created = await editor.run({ command: 'create', path: '/testbed/long2.txt', file_text: long });
  const clippedText = long.slice(0, 10_000) + CLIPPED_MARKER;
  t.equal(
    created,
    "File created at /testbed/long2.txt. Here's the result of running `cat -n` on /testbed/long2.txt:\n" +
      numbered(clippedText.split('\n'), 1, '\t') +
      '\nReview the file and make sure that it is as expected. Edit the file if necessary.',
  );
  t.equal((await sandbox.readFile('long2.txt')).toString(), long, 'the file itself is complete');

  // Characters are code points, as Python counts them.
  const emoji = '\u{1F600}'.repeat(12_000);
  await sandbox.writeFile('emoji.txt', emoji);
  const clipped = await editor.run({ command: 'view', path: '/testbed/emoji.txt' });
  const header = VIEW_HEADER('/testbed/emoji.txt') + '     1 ';
  t.equal(clipped, header + '\u{1F600}'.repeat(10_000 - header.length) + CLIPPED_MARKER);

  const exactly = 'x'.repeat(10_000 - VIEW_HEADER('/testbed/exact.txt').length - 7);
  await sandbox.writeFile('exact.txt', exactly);
  t.equal(await editor.run({ command: 'view', path: '/testbed/exact.txt' }), `${VIEW_HEADER('/testbed/exact.txt')}     1 ${exactly}`, '10,000 characters exactly: not clipped');
});

t.test('errors are observations', async (t) => {
  const sandbox = await sandboxWith(t);
  const editor = new FileEditor(sandbox, { profile: 'default' });
  t.equal(await editor.run({ command: 'view', path: 'src/app.py' }), "ERROR: The path 'src/app.py' is not an absolute path. Use an absolute path, e.g. '/testbed/src/app.py'.");
  t.equal(await editor.run({ command: 'view', path: './src' }), "ERROR: The path './src' is not an absolute path. Use an absolute path, e.g. '/testbed/src'.");
  t.equal(await editor.run({ command: 'view', path: '/testbed/nope.py' }), "ERROR: The path '/testbed/nope.py' does not exist.");
  t.equal(await editor.run({ command: 'view' }), "ERROR: Missing required parameter 'path' for 'view'.");
  t.equal(await editor.run({ path: '/testbed' }), "ERROR: Missing required parameter 'command'. Allowed commands: view, create, str_replace, insert, undo_edit.");
  t.equal(await editor.run({ command: 'delete', path: '/testbed/README.md' }), "ERROR: Unrecognized command 'delete'. Allowed commands: view, create, str_replace, insert, undo_edit.");
  t.equal(await editor.run({ command: 'view', path: '/testbed/data.bin' }), 'ERROR: The file /testbed/data.bin looks binary (it contains NUL bytes); file_editor works on text files only.');
  t.equal(await editor.run({ command: 'view', path: '/dev/null' }), "ERROR: The path '/dev/null' is not a regular file or directory.");
  if ((await sandbox.exec('id -u')).output.trim() !== '0') {
    await sandbox.exec('mkdir locked && echo s > locked/s.py && chmod 000 locked/s.py');
    const denied = await editor.run({ command: 'view', path: '/testbed/locked/s.py' });
    t.match(denied, /^ERROR: Failed to read file \/testbed\/locked\/s\.py: .*Permission denied/, 'an unreadable file');
  }
  t.match(await editor.run({ command: 'create', path: '/usr/x.py', file_text: 'x' }), /^ERROR: Failed to write file \/usr\/x\.py: /, 'read-only places');

  await sandbox.destroy();
  await t.rejects(editor.run({ command: 'view', path: '/testbed/README.md' }), { code: 'ERR_SWERL_SANDBOX' }, 'a destroyed sandbox is thrown, not observed');
});

t.test('bytes are preserved: encodings and CRLF', async (t) => {
  const sandbox = await sandboxWith(t, {
    'crlf.py': 'a = 1\r\nb = 2\r\nc = 3\r\n',
    'latin1.txt': Buffer.from('caf\xe9\nna\xefve\n', 'latin1'),
    'bom.py': '\ufeffx = 1\n',
  });
  const editor = new FileEditor(sandbox, { profile: 'default' });
  t.equal(await editor.run({ command: 'view', path: '/testbed/crlf.py' }), `${VIEW_HEADER('/testbed/crlf.py')}     1 a = 1\n     2 b = 2\n     3 c = 3`);
  t.equal(
    await editor.run({ command: 'str_replace', path: '/testbed/crlf.py', old_str: 'a = 1\nb = 2', new_str: 'a = 10\nb = 20' }),
    `The file /testbed/crlf.py has been edited. Here's the result of running \`cat -n\` on a snippet of /testbed/crlf.py:\n     1\ta = 10\n     2\tb = 20\n     3\tc = 3\n     4\t\n${EDITED}`,
    'an all-CRLF file is edited with \\n',
  );
  t.equal((await sandbox.readFile('crlf.py')).toString(), 'a = 10\r\nb = 20\r\nc = 3\r\n', 'and written back with CRLF');
  await editor.run({ command: 'insert', path: '/testbed/crlf.py', insert_line: '3', new_str: 'd = 4' });
  t.equal((await sandbox.readFile('crlf.py')).toString(), 'a = 10\r\nb = 20\r\nc = 3\r\nd = 4\r\n');

  t.equal(await editor.run({ command: 'view', path: '/testbed/latin1.txt' }), `${VIEW_HEADER('/testbed/latin1.txt')}     1 café\n     2 naïve`);
  await editor.run({ command: 'str_replace', path: '/testbed/latin1.txt', old_str: 'na', new_str: 'NA' });
  t.same([...(await sandbox.readFile('latin1.txt'))], [...Buffer.from('caf\xe9\nNA\xefve\n', 'latin1')], 'not valid UTF-8: written back byte for byte');
  await editor.run({ command: 'undo_edit', path: '/testbed/latin1.txt' });
  t.same([...(await sandbox.readFile('latin1.txt'))], [...Buffer.from('caf\xe9\nna\xefve\n', 'latin1')], 'undo restores the exact bytes');

  await editor.run({ command: 'str_replace', path: '/testbed/bom.py', old_str: 'x = 1', new_str: 'x = 2' });
  t.equal((await sandbox.readFile('bom.py')).toString(), '\ufeffx = 2\n', 'a byte-order mark stays');
});

const LONG_PY = [
  '"""A module."""',
  'import os',
  '',
  '',
  'class Thing:',
  '    """A thing.',
  '',
  '    With a docstring',
  '    long enough',
  '    to elide.',
  '    """',
  '',
  '    def short(self):',
  '        return 1',
  '',
  '    def long(self, x):',
  '        y = x + 1',
  '        z = y * 2',
  '        w = z - 3',
  '        return w',
  '',
  ...Array.from({ length: 100 }, (_, i) => `CONSTANT_${i} = ${i}`),
  '',
  'def main():',
  '    for name in os.listdir("."):',
  '        print(name)',
  '    print("done")',
  '    return 0',
].join('\n') + '\n';

const CONDENSED_HEADER = (file: string) =>
  `Here is a condensed view for file: ${file}; [Note: Useful for understanding file structure in a concise manner. Please use specific view_range without concise cmd if you want to explore further into the relevant parts.]\n`;

t.test('r2egym profile: .py only, concise view of long Python files', async (t) => {
  const sandbox = await sandboxWith(t, {
    'README.md': '# Demo\n',
    'long.py': LONG_PY,
    'short.py': 'def f():\n    a = 1\n    b = 2\n    c = 3\n    return a + b + c\n',
    'f.py': 'a\nb\n',
    pkg: { 'm.py': 'm = 1\n', 'data.json': '{}\n', sub: { 's.py': '', deeper: { 'd.py': '' } } },
  });
  const r2e = new FileEditor(sandbox, { profile: 'r2egym' });
  const plain = new FileEditor(sandbox, { profile: 'default' });

  t.equal(
    await r2e.run({ command: 'view', path: '/testbed/README.md' }),
    "ERROR: Viewing non-Python files is disallowed for saving context. File 'README.md' is not a .py file.",
  );
  t.equal(await plain.run({ command: 'view', path: '/testbed/README.md' }), `${VIEW_HEADER('/testbed/README.md')}     1 # Demo`);
  t.match(
    await r2e.run({ command: 'str_replace', path: '/testbed/README.md', old_str: 'Demo', new_str: 'Demo!' }),
    /^The file \/testbed\/README\.md has been edited\./,
    'R2E-Gym restricted viewing only: edits of other files work',
  );

  t.equal(
    await r2e.run({ command: 'view', path: '/testbed/pkg' }),
    "Here's the files and directories up to 2 levels deep in /testbed/pkg, excluding hidden:\n/testbed/pkg\n/testbed/pkg/m.py\n/testbed/pkg/sub\n/testbed/pkg/sub/deeper\n/testbed/pkg/sub/s.py\n",
    'folders and .py files only',
  );
  t.equal(
    await plain.run({ command: 'view', path: '/testbed/pkg' }),
    "Here's the files and directories up to 2 levels deep in /testbed/pkg, excluding hidden:\n/testbed/pkg\n/testbed/pkg/data.json\n/testbed/pkg/m.py\n/testbed/pkg/sub\n/testbed/pkg/sub/deeper\n/testbed/pkg/sub/s.py\n",
  );

  const lines = LONG_PY.trimEnd().split('\n');
  const condensed =
    CONDENSED_HEADER('/testbed/long.py') +
    [
      ...lines.slice(0, 6).map((l, i) => `${String(i + 1).padStart(6)} ${l}`),
      '     7 ... eliding lines 7-10 ...',
      ...lines.slice(10, 16).map((l, i) => `${String(i + 11).padStart(6)} ${l}`),
      '    17 ... eliding lines 17-20 ...',
      ...lines.slice(20, 123).map((l, i) => `${String(i + 21).padStart(6)} ${l}`),
      '   124 ... eliding lines 124-127 ...',
    ].join('\n');
  t.equal(await r2e.run({ command: 'view', path: '/testbed/long.py' }), condensed, 'over 110 lines: condensed by default');
  t.equal(
    await plain.run({ command: 'view', path: '/testbed/long.py' }),
    VIEW_HEADER('/testbed/long.py') + lines.map((l, i) => `${String(i + 1).padStart(6)} ${l}`).join('\n'),
    'default profile: in full',
  );
  t.equal(await plain.run({ command: 'view', path: '/testbed/long.py', concise: 'True' }), condensed, 'default profile: condensed on request');
  t.equal(
    await r2e.run({ command: 'view', path: '/testbed/long.py', view_range: '[13, 16]' }),
    `${VIEW_HEADER('/testbed/long.py')}    13     def short(self):\n    14         return 1\n    15 \n    16     def long(self, x):`,
    'a view_range shows the lines themselves',
  );
  t.equal(
    await r2e.run({ command: 'view', path: '/testbed/short.py' }),
    `${VIEW_HEADER('/testbed/short.py')}     1 def f():\n     2     a = 1\n     3     b = 2\n     4     c = 3\n     5     return a + b + c`,
    'short files are shown in full',
  );
  t.equal(
    await r2e.run({ command: 'view', path: '/testbed/short.py', concise: 'true' }),
    `${CONDENSED_HEADER('/testbed/short.py')}     1 def f():\n     2 ... eliding lines 2-5 ...`,
  );
  // R2E-Gym checked an explicit concise view's range against the condensed line count (here
  // 2); the default profile checks it against the file's 5 lines.
  t.equal(await r2e.run({ command: 'view', path: '/testbed/short.py', concise: 'true', view_range: '[1, 4]' }), 'ERROR: Invalid view_range [1, 4]: end must be >= start and <= 2, or -1 to view until end.');
  t.equal(await plain.run({ command: 'view', path: '/testbed/short.py', concise: 'true', view_range: '[1, 4]' }), `${CONDENSED_HEADER('/testbed/short.py')}     1 def f():\n     2 ... eliding lines 2-5 ...`);
  t.equal(await plain.run({ command: 'view', path: '/testbed/README.md', concise: 'true' }), `${VIEW_HEADER('/testbed/README.md')}     1 # Demo!`, 'concise is for Python files only');

  await sandbox.writeFile('broken.py', `def f(:\n    s = """never closed\n${'x = 1\n'.repeat(120)}`);
  t.equal(
    await r2e.run({ command: 'view', path: '/testbed/broken.py' }),
    'ERROR: Syntax error for file /testbed/broken.py: unterminated triple-quoted string literal (detected at line 122) (/testbed/broken.py, line 2)',
    'a file that does not parse cannot be condensed',
  );
  t.match(await r2e.run({ command: 'view', path: '/testbed/broken.py', view_range: '[1, 2]' }), /^Here's the result/, 'but a range can be viewed');

  // insert: R2E-Gym's bound is one more than the line count after a final newline.
  t.equal(await plain.run({ command: 'insert', path: '/testbed/f.py', insert_line: '3', new_str: 'x' }), 'ERROR: Invalid insert_line 3. Must be in [0, 2].');
  t.equal(
    await r2e.run({ command: 'insert', path: '/testbed/f.py', insert_line: '3', new_str: 'x' }),
    `The file /testbed/f.py has been edited. Here's the result of running \`cat -n\` on a snippet of the edited file:\n     1\ta\n     2\tb\n     3\t\n     4\tx\n${INSERTED}`,
  );
  t.equal((await sandbox.readFile('f.py')).toString(), 'a\nb\n\nx');

  // undo of a create: R2E-Gym leaves an empty file.
  await r2e.run({ command: 'create', path: '/testbed/made.py', file_text: 'made = 1' });
  t.equal(
    await r2e.run({ command: 'undo_edit', path: '/testbed/made.py' }),
    "Last edit to /testbed/made.py undone successfully. Here's the result of running `cat -n` on /testbed/made.py:\n     1\t\n",
  );
  t.equal((await sandbox.readFile('made.py')).toString(), '');
});

t.test('a call that reads a file takes one sandbox command to find and read it; one past the output limit is read on its own', async (t) => {
  const big = numberedLines(400); // ~3.9 kB, past the 1 kB output limit below
  const sandbox = await sandboxWith(t, { 'small.py': numberedLines(3), 'big.py': big }, { limits: { maxOutputBytes: 1024 } });
  const commands: string[] = [];
  const exec = sandbox.exec.bind(sandbox);
  sandbox.exec = (command, options) => {
    commands.push(command);
    return exec(command, options);
  };
  const editor = new FileEditor(sandbox, { profile: 'default' });
  t.equal(await editor.run({ command: 'view', path: '/testbed/small.py' }), VIEW_HEADER('/testbed/small.py') + numbered(range(1, 3)));
  t.equal(commands.length, 1, 'view: one command');
  commands.length = 0;
  t.match(await editor.run({ command: 'str_replace', path: '/testbed/small.py', old_str: 'line 2', new_str: 'line two' }), /has been edited/);
  t.equal(commands.length, 2, 'str_replace: one to find and read, one to write');
  t.equal((await sandbox.readFile('small.py')).toString(), 'line 1\nline two\nline 3\n');

  commands.length = 0;
  t.match(await editor.run({ command: 'view', path: '/testbed/big.py', view_range: '[399, 400]' }), /   399 line 399\n   400 line 400$/);
  t.equal(commands.length, 2, 'a file larger than the output limit: found, then read whole by readFile');

  await sandbox.writeFile('notes.md', big);
  commands.length = 0;
  const r2e = new FileEditor(sandbox, { profile: 'r2egym' });
  t.match(await r2e.run({ command: 'view', path: '/testbed/notes.md' }), /^ERROR: Viewing non-Python files is disallowed/);
  t.equal(commands.length, 1, 'a view the r2egym profile refuses: one command');
  t.notMatch(commands[0], /\bcat\b/, 'which does not read the file it refuses');
});
