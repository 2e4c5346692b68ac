// A unified diff (git diff) shown with its added, removed and hunk lines coloured.
import { h } from './dom.js';

export function diffLineKind(line) {
  if (/^(diff --git|index |--- |\+\+\+ |new file|deleted file|similarity|rename |old mode|new mode|Binary files)/.test(line)) return 'meta';
  if (line.startsWith('@@')) return 'hunk';
  if (line.startsWith('+')) return 'add';
  if (line.startsWith('-')) return 'del';
  return 'context';
}

export function renderDiff(patch) {
  if (patch === undefined || patch === null) return h('p', { class: 'note' }, 'No patch: the episode was not graded on a repository.');
  if (patch.trim() === '') return h('p', { class: 'note' }, 'The patch is empty: the episode changed no file.');
  const lines = patch.replace(/\n$/, '').split('\n');
  const added = lines.filter((line) => diffLineKind(line) === 'add').length;
  const removed = lines.filter((line) => diffLineKind(line) === 'del').length;
  const files = lines.filter((line) => line.startsWith('diff --git')).length;
  return h('div', { class: 'diff-block' },
    h('div', { class: 'diff-stat' }, `${files} file(s), `, h('span', { class: 'add-count' }, `+${added}`), ' ', h('span', { class: 'del-count' }, `-${removed}`)),
    h('pre', { class: 'diff' }, lines.map((line) => h('div', { class: `diff-${diffLineKind(line)}` }, line === '' ? ' ' : line))));
}
