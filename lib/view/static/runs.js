// The run list: a checkbox per run (which runs the curves show) beside its legend swatch, what
// it trains, and how far it is.
import { runStyle, swatch } from './chart.js';
import { clear, h } from './dom.js';

function describeModel(config) {
  const model = config?.model;
  if (!model) return '';
  return model.preset ?? String(model.path ?? '').split('/').filter(Boolean).at(-1) ?? '';
}

function ago(ms) {
  const seconds = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (seconds < 120) return `${seconds} s ago`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min ago`;
  return `${Math.round(seconds / 3600)} h ago`;
}

function describeProgress(run) {
  const total = run.config?.run?.steps;
  const step = run.lastStep ?? 0;
  if (run.summary) return `finished: ${run.summary.steps ?? step} step(s)${run.summary.stopped ? ' (stopped)' : ''}`;
  if (run.updatedMs === null) return run.config ? 'no step yet' : 'eval output';
  return `step ${step}${total ? `/${total}` : ''}, written ${ago(run.updatedMs)}`;
}

export function renderRunList(root, state, onToggle) {
  clear(root).append(h('h2', {}, 'Runs'));
  for (const run of state.runs) {
    const checkbox = h('input', { type: 'checkbox', checked: run.visible, 'aria-label': `show ${run.name}`, onchange: () => { run.visible = checkbox.checked; onToggle(); } });
    const tasks = run.config?.tasks?.kind;
    root.append(h('label', { class: 'run', title: run.dir, 'data-run': run.id },
      checkbox,
      swatch(runStyle(run.id)),
      h('span', { class: 'run-text' },
        h('span', { class: 'run-name' }, run.name),
        h('span', { class: 'run-meta' }, [describeModel(run.config), tasks].filter(Boolean).join(' · ')),
        h('span', { class: 'run-meta' }, describeProgress(run)))));
  }
}
