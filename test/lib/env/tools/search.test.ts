import t from 'tap';

import type { Sandbox } from '../../../../lib/env/sandbox/sandbox.js';
import type { ToolProfile } from '../../../../lib/env/tools/common.js';
import { runSearch } from '../../../../lib/env/tools/search.js';
import { sandboxWith } from './fixture.js';

/** The search tool's observation alone. */
const search = async (sandbox: Sandbox, args: Record<string, string>, profile?: ToolProfile) =>
  (await runSearch(sandbox, args, profile)).observation;

t.test('a folder: matching files with their counts, in walk order', async (t) => {
  const sandbox = await sandboxWith(t);
  t.equal(
    await search(sandbox, { search_term: 'needle' }),
    [
      'Found 4 matches for "needle" in /testbed:',
      './pkg/util.py (1 matches)',
      './pkg/deep/inner/x.py (1 matches)',
      './src/notes.txt (2 matches)',
      'End of matches for "needle" in /testbed',
    ].join('\n'),
    'hidden files and folders are skipped, and so is the binary data.bin',
  );
  t.equal(
    await search(sandbox, { search_term: 'needle', path: '.' }),
    await search(sandbox, { search_term: 'needle', path: '/testbed' }),
    'the default path is the work tree',
  );
  t.equal(
    await search(sandbox, { search_term: 'needle', path: 'src' }),
    'Found 2 matches for "needle" in /testbed/src:\n./src/notes.txt (2 matches)\nEnd of matches for "needle" in /testbed/src',
    'paths stay relative to the work tree',
  );
  t.equal(
    await search(sandbox, { search_term: 'needle', path: '/testbed/pkg/' }),
    'Found 2 matches for "needle" in /testbed/pkg:\n./pkg/util.py (1 matches)\n./pkg/deep/inner/x.py (1 matches)\nEnd of matches for "needle" in /testbed/pkg',
  );
  t.equal(
    await search(sandbox, { search_term: 'needle', path: '.hidden' }),
    'Found 1 matches for "needle" in /testbed/.hidden:\n./.hidden/h.py (1 matches)\nEnd of matches for "needle" in /testbed/.hidden',
    'a hidden folder can be searched when named',
  );
  t.equal(await search(sandbox, { search_term: 'zebra' }), 'No matches found for "zebra" in /testbed');
  t.equal(await search(sandbox, { search_term: 'Needle' }), 'No matches found for "Needle" in /testbed', 'case-sensitive');
  t.same(await runSearch(sandbox, { search_term: 'needle', path: 'nope' }), {
    observation: "Directory '/testbed/nope' not found or not a directory.",
    error: true,
    timedOut: false,
  });
  t.same(await runSearch(sandbox, { search_term: '' }), { observation: "ERROR: Missing required parameter 'search_term' for 'search'.", error: true, timedOut: false });
  t.equal(await search(sandbox, { search_term: 'needle\nin' }), 'No matches found for "needle\nin" in /testbed', 'a term spanning lines matches no line');
});

t.test('a file: grep -n lines under a header', async (t) => {
  const sandbox = await sandboxWith(t);
  t.equal(
    await search(sandbox, { search_term: 'needle', path: 'src/notes.txt' }),
    'Matches for "needle" in /testbed/src/notes.txt:\n1:needle in a haystack\n3:another needle',
  );
  t.equal(
    await search(sandbox, { search_term: 'needle', path: '/testbed/pkg/util.py' }),
    'Matches for "needle" in /testbed/pkg/util.py:\n2:    return "needle"',
  );
  t.equal(await search(sandbox, { search_term: 'zebra', path: 'src/notes.txt' }), 'No matches found for "zebra" in /testbed/src/notes.txt');
  await sandbox.writeFile('many.txt', 'hit\n'.repeat(3000));
  const clipped = await search(sandbox, { search_term: 'hit', path: 'many.txt' });
  t.equal(clipped.length, 10_000 + '<response clipped>'.length + clipped.split('<response clipped>')[1]!.length, 'long outputs are clipped');
  t.match(clipped, /^Matches for "hit" in \/testbed\/many\.txt:\n1:hit\n2:hit\n/);
});

t.test('over 100 matching files: asks to narrow the search', async (t) => {
  const sandbox = await sandboxWith(t, { 'a.txt': 'nothing\n' });
  await sandbox.exec('mkdir many hundred && for i in $(seq 1 101); do echo token > many/f$i.txt; done && for i in $(seq 1 100); do echo other > hundred/f$i.txt; done');
  t.equal(await search(sandbox, { search_term: 'token' }), 'More than 101 files matched for "token" in /testbed. Please narrow your search.');
  const hundred = (await search(sandbox, { search_term: 'other', path: 'hundred' })).split('\n');
  t.equal(hundred.length, 102, '100 files are still listed');
  t.equal(hundred[0], 'Found 100 matches for "other" in /testbed/hundred:');
  t.equal(hundred[1], './hundred/f1.txt (1 matches)');
  t.equal(hundred[2], './hundred/f10.txt (1 matches)', 'names in code point order');
  t.equal(hundred[101], 'End of matches for "other" in /testbed/hundred');
});

t.test('terms are matched literally and never reach a shell', async (t) => {
  const weird = [
    `it's "quoted"`,
    '$HOME and $(echo hi) and `id`',
    'back\\slash and a literal \\n',
    '-e starts with a dash',
    '--help too',
    'a.b*c[d]',
    'axbbc',
  ].join('\n') + '\n';
  const sandbox = await sandboxWith(t, { 'weird.txt': weird, 'other.py': 'x = 1\n' });
  const found = (term: string) => `Found 1 matches for "${term}" in /testbed:\n./weird.txt (1 matches)\nEnd of matches for "${term}" in /testbed`;
  for (const term of [`it's "quoted"`, '$HOME', '$(echo hi)', '`id`', 'back\\slash', '\\n', '-e', '--help', 'a.b*c', '[d]', '*']) {
    t.equal(await search(sandbox, { search_term: term }), found(term), JSON.stringify(term));
  }
  t.equal(await search(sandbox, { search_term: '-e', path: 'weird.txt' }), 'Matches for "-e" in /testbed/weird.txt:\n4:-e starts with a dash');
  t.equal(await search(sandbox, { search_term: 'a.b*c', path: 'weird.txt' }), 'Matches for "a.b*c" in /testbed/weird.txt:\n6:a.b*c[d]', 'no regex: axbbc does not match');
  for (const term of [`'; touch /testbed/pwned1; echo '`, '$(touch /testbed/pwned2)', '`touch /testbed/pwned3`', '"; touch /testbed/pwned4; echo "', "\\'; touch /testbed/pwned5 #"]) {
    t.equal(await search(sandbox, { search_term: term }), `No matches found for "${term}" in /testbed`);
    t.equal(await search(sandbox, { search_term: term, path: 'weird.txt' }), `No matches found for "${term}" in /testbed/weird.txt`);
  }
  t.equal((await sandbox.exec('ls /testbed')).output, 'other.py\nweird.txt\n', 'nothing was run');
});

t.test('profiles: r2egym searches .py files only', async (t) => {
  const sandbox = await sandboxWith(t);
  t.equal(
    await search(sandbox, { search_term: 'needle' }, 'r2egym'),
    'Found 2 matches for "needle" in /testbed:\n./pkg/util.py (1 matches)\n./pkg/deep/inner/x.py (1 matches)\nEnd of matches for "needle" in /testbed',
  );
  t.equal(await search(sandbox, { search_term: 'needle', path: 'src' }, 'r2egym'), 'No matches found for "needle" in /testbed/src');
  t.equal(
    await search(sandbox, { search_term: 'haystack', path: 'src/notes.txt' }, 'r2egym'),
    'Matches for "haystack" in /testbed/src/notes.txt:\n1:needle in a haystack',
    'a named file of any kind can be searched',
  );
});
