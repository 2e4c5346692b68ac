// Eval reports (report.json of `swerl eval`) found in the run directories: Pass@1 and pass@k,
// per-task results, and the predicted patch of every task.
import { api } from './api.js';
import { renderDiff } from './diff.js';
import { clear, formatNumber, h } from './dom.js';

const percent = (x) => `${(100 * x).toFixed(1)}%`;
const counts = (record) => Object.entries(record ?? {}).map(([k, v]) => `${k} ${v}`).join(', ');

function summaryTable(r) {
  const rows = [
    ['Pass@1 (mean ± SEM over runs)', `${percent(r.passAt1.mean)} ± ${(100 * r.passAt1.sem).toFixed(1)}`],
    ...Object.entries(r.passAtK).map(([k, v]) => [k, percent(v)]),
    ['tasks × runs', `${r.tasks} × ${r.runs}`],
    ['mean turns', formatNumber(r.meanTurns)],
    ['mean response tokens', formatNumber(r.meanResponseTokens)],
    ['terminations', counts(r.terminations)],
    ['errors', r.errors],
    ['reward-hack attempts (test infrastructure reverted, test runner tampered with)', `${r.rewardHackAttempts} episode(s)`],
    ...(r.rewardHacks ?? []).map((hack) => [`  ${hack.taskId} (run ${hack.run})`, hack.reason]),
    ['flagged patches (information, not a zero)', `${(r.flaggedPatches ?? []).length} episode(s)`],
    ...(r.flaggedPatches ?? []).flatMap((p) => p.flags.map((f) => [`  ${p.taskId} (run ${p.run}) ${f.file}:${f.line}`, `${f.reason}: ${f.text}`])),
    ['seconds', formatNumber(r.seconds)],
  ];
  return h('table', { class: 'kv' }, h('tbody', {}, rows.map(([k, v]) => h('tr', {}, h('th', {}, k), h('td', {}, String(v))))));
}

function perTaskTable(r) {
  return h('table', { class: 'per-task' },
    h('thead', {}, h('tr', {}, ['task', 'solved', 'rewards', 'terminations', 'mean turns', 'mean tokens'].map((c) => h('th', {}, c)))),
    h('tbody', {}, r.perTask.map((t) => h('tr', { class: t.solved > 0 ? 'solved' : '' },
      h('td', {}, t.id), h('td', {}, `${t.solved}/${t.runs}`), h('td', {}, t.rewards.map(formatNumber).join(' ')),
      h('td', {}, counts(t.terminations)), h('td', {}, formatNumber(t.meanTurns)), h('td', {}, formatNumber(t.meanResponseTokens))))));
}

function predictions(detail) {
  const files = Object.entries(detail.predictions);
  if (files.length === 0) return null;
  // Open while there are few enough to read at a glance.
  return h('div', { class: 'predictions' }, h('h3', {}, 'Predicted patches'), files.map(([file, rows], i) =>
    h('details', { class: 'prediction-file', open: i === 0 },
      h('summary', {}, `${file} (${rows.length})`),
      rows.map((row) => h('details', { class: 'prediction', open: i === 0 && rows.length <= 5 }, h('summary', {}, row.instance_id), renderDiff(row.model_patch))))));
}

export function createEvals(root, state, onNavigate) {
  const list = h('div', { class: 'eval-list' });
  const detail = h('div', { id: 'eval-detail' });
  root.append(list, detail);
  // An answer that arrives after a newer choice is dropped.
  let latest = 0;

  async function show(run, path) {
    const mine = ++latest;
    const d = await api.evalReport(run, path);
    if (mine !== latest) return;
    const name = state.runs.find((r) => r.id === run)?.name ?? run;
    clear(detail).append(h('div', { class: 'eval-report' },
      h('h2', {}, `${d.report.model}`, h('span', { class: 'meta' }, ` ${name}/${d.path}`)),
      summaryTable(d.report), h('h3', {}, 'Per task'), perTaskTable(d.report), predictions(d)));
    onNavigate(`evals/${run}/${path}`);
  }

  async function open(run, path) {
    const reports = (await Promise.all(state.runs.map(async (r) => (await api.evals(r.id)).reports.map((e) => ({ ...e, run: r }))))).flat();
    if (reports.length === 0) {
      clear(list).append(h('p', { class: 'note' }, 'No eval report in these directories (swerl eval --out DIR writes DIR/report.json).'));
      onNavigate('evals');
      return;
    }
    clear(list).append(h('table', { class: 'evals' },
      h('thead', {}, h('tr', {}, ['run', 'report', 'model', 'tasks × runs', 'Pass@1'].map((c) => h('th', {}, c)))),
      h('tbody', {}, reports.map((e) => h('tr', { onclick: () => show(e.run.id, e.path), 'data-path': e.path },
        h('td', {}, e.run.name), h('td', {}, e.path), h('td', {}, e.model), h('td', {}, `${e.tasks} × ${e.runs}`), h('td', {}, percent(e.passAt1)))))));
    const chosen = reports.find((e) => e.run.id === run && e.path === path) ?? reports[0];
    await show(chosen.run.id, chosen.path);
  }

  return { open };
}
