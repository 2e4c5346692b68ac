/**
 * Repos folders: finding a row's clone (DIR/owner__name or DIR/owner/name) and the work tree a
 * sandbox gets: the base commit checked out with a .git of its own holding that commit only.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import { checkoutWorkTree, findCheckout, repositoryCandidates } from '../../../lib/env/repositories.js';
import { ROOT } from '../../support/child-process.js';

const REPOS = path.join(ROOT, 'test/fixtures/swe-real/repos');
const REPO = 'marshmallow-code/marshmallow';
const BASE_1359 = 'b40a0f4e33823e6d0f341f7e8684e359a99060d1';
const BASE_2123 = '5a10e83c557d2ee97799c2b85bec49fc90381656';

const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'safe.directory=*', ...args], { cwd, encoding: 'utf8' }).trim();

t.test('the clone of a row, found under both layouts', async (t) => {
  t.same(repositoryCandidates('/r', 'a/b'), ['/r/a__b', '/r/a/b']);
  const found = await findCheckout('x', REPOS, REPO, BASE_1359.slice(0, 12));
  t.same(found, { repository: path.join(REPOS, 'marshmallow-code__marshmallow'), commit: BASE_1359 }, 'a short commit id is resolved');

  const nested = t.testdir({ 'marshmallow-code': {} });
  execFileSync('git', ['clone', '-q', '--bare', path.join(REPOS, 'marshmallow-code__marshmallow'), path.join(nested, 'marshmallow-code', 'marshmallow')]);
  t.equal((await findCheckout('x', nested, REPO, BASE_2123)).repository, path.join(nested, 'marshmallow-code', 'marshmallow'), 'DIR/owner/name');

  await t.rejects(findCheckout('row-7', REPOS, 'marshmallow', BASE_1359), { code: 'ERR_SWERL_INVALID_TASK', message: /^row-7: row\.repo is "marshmallow"; a repos folder needs "owner\/name"/ });
  await t.rejects(findCheckout('row-7', REPOS, REPO, undefined), { message: /^row-7: row\.base_commit is undefined/ });
  const notGit = t.testdir({ 'marshmallow-code__marshmallow': { 'README.md': 'x' } });
  await t.rejects(findCheckout('row-7', notGit, REPO, BASE_1359), { message: /marshmallow-code__marshmallow is not a git repository .*; clone marshmallow-code\/marshmallow there/ });
});

t.test('the work tree: the base commit checked out, its own shallow .git, made once', async (t) => {
  const cache = t.testdir({});
  const checkout = await findCheckout('x', REPOS, REPO, BASE_2123);
  const [a, b] = await Promise.all([checkoutWorkTree(checkout, cache), checkoutWorkTree(checkout, cache)]);
  t.equal(a, b, 'concurrent callers share one work tree');
  t.equal(git(a, 'rev-parse', 'HEAD'), BASE_2123);
  t.equal(git(a, 'rev-parse', '--abbrev-ref', 'HEAD'), 'main');
  t.equal(git(a, 'status', '--porcelain'), '', 'clean');
  t.equal(git(a, 'rev-list', '--all', '--count'), '1', 'no history but the base commit: no future commits to read');
  t.ok(existsSync(path.join(a, '.git', 'shallow')));
  t.equal(git(a, 'remote'), '', 'no remote pointing back at the host');
  t.ok(existsSync(path.join(a, 'src', 'marshmallow', 'validate.py')), 'the tree is there');
  t.same(readdirSync(cache).filter((n) => n.includes('.tmp-')), [], 'nothing left aside');
  const other = await checkoutWorkTree(await findCheckout('y', REPOS, REPO, BASE_1359), cache);
  t.not(other, a, 'another commit, another work tree');
  t.equal(git(other, 'rev-parse', 'HEAD'), BASE_1359);
});
