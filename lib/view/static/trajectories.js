// The trajectory browser: run -> step -> one of the step's trajectories, then that trajectory
// whole: its conversation, its tokens under the loss mask, its patch and its test results.
import { api } from './api.js';
import { renderConversation } from './conversation.js';
import { renderDiff } from './diff.js';
import { clear, formatDuration, formatNumber, h } from './dom.js';
import { renderTests } from './tests-view.js';
import { renderTokens } from './tokens-view.js';

const COLUMNS = [
  ['#', (t) => t.index],
  ['task', (t) => t.taskId],
  ['group', (t) => t.group],
  ['sample', (t) => t.sample],
  ['reward', (t) => formatNumber(t.reward)],
  ['shaped', (t) => formatNumber(t.shapedReward)],
  ['gold', (t) => (t.goldSimilarity === undefined ? '' : formatNumber(t.goldSimilarity))],
  ['advantage', (t) => formatNumber(t.advantage)],
  ['termination', (t) => t.termination],
  ['filtered', (t) => (t.filtered ? 'filtered' : '')],
  ['kept', (t) => (t.kept ? 'kept' : 'dropped')],
  ['turns', (t) => t.turns],
  ['tokens', (t) => `${t.promptTokens}+${t.responseTokens}`],
  ['tests', (t) => (t.tests ? `${t.tests.passed}/${t.tests.total}` : '')],
];

function badge(label, value, kind = '') {
  return h('span', { class: `badge ${kind}` }, h('span', { class: 'badge-label' }, label), ' ', String(value));
}

function detailHeader(t) {
  const sign = t.advantage > 0 ? 'good' : t.advantage < 0 ? 'bad' : '';
  return h('div', { class: 'detail-header' },
    h('h2', {}, t.taskId, h('span', { class: 'meta' }, ` step ${t.step} · group ${t.group} · sample ${t.sample} · #${t.index}`)),
    h('div', { class: 'badges' },
      badge('reward', formatNumber(t.reward), t.reward > 0 ? 'good' : ''),
      badge('shaped', formatNumber(t.shapedReward)),
      t.goldSimilarity === undefined ? null : badge('gold similarity', formatNumber(t.goldSimilarity)),
      badge('advantage', formatNumber(t.advantage), sign),
      badge('termination', t.termination),
      badge('loss', t.filtered ? 'filtered (masked out)' : t.kept ? 'kept' : 'dropped by the group filter', t.filtered || !t.kept ? 'bad' : 'good'),
      badge('attempts', t.attempts),
      badge('weights', `v${t.weightVersion}`),
      badge('time', formatDuration(t.timings.totalMs))),
    h('p', { class: 'reward-reason' }, h('strong', {}, 'reward reason: '), t.rewardReason),
    t.error ? h('p', { class: 'error' }, h('strong', {}, 'error: '), t.error) : null);
}

const SECTIONS = [
  ['conversation', 'Conversation', (t) => renderConversation(t)],
  ['tokens', 'Tokens & loss mask', (t) => renderTokens(t)],
  ['patch', 'Patch', (t) => renderDiff(t.patch)],
  ['tests', 'Tests', (t) => renderTests(t.tests, t.reverted, t.tampering, t.patchFlags)],
];

function renderDetail(t) {
  const bodies = new Map();
  const tabs = h('div', { class: 'subtabs', role: 'tablist' });
  const content = h('div', { class: 'section' });
  const show = (id) => {
    for (const button of tabs.children) button.classList.toggle('active', button.dataset.section === id);
    // Rendered on first show: a long trajectory's tokens are tens of thousands of spans.
    if (!bodies.has(id)) bodies.set(id, SECTIONS.find(([key]) => key === id)[2](t));
    content.replaceChildren(bodies.get(id));
  };
  for (const [id, label] of SECTIONS) tabs.append(h('button', { type: 'button', 'data-section': id, onclick: () => show(id) }, label));
  show('conversation');
  return h('div', { class: 'detail' }, detailHeader(t), tabs, content);
}

export function createTrajectories(root, state, onNavigate) {
  const runSelect = h('select', { id: 'traj-run', onchange: () => selectRun(Number(runSelect.value)) });
  const stepSelect = h('select', { id: 'traj-step', onchange: () => selectStep(Number(stepSelect.value)) });
  const list = h('div', { class: 'traj-list' });
  const detail = h('div', { id: 'traj-detail' });
  const note = h('p', { class: 'note', hidden: true });
  root.append(h('div', { class: 'controls' }, h('label', {}, 'run ', runSelect), h('label', {}, 'step ', stepSelect)), note, list, detail);
  const current = { run: undefined, step: undefined, index: undefined };
  // Each selection counts; an answer that arrives after a newer selection is dropped.
  let latest = 0;
  const here = () => ['trajectories', current.run, current.step, current.index].filter((x) => x !== undefined).join('/');

  function fillRuns() {
    const value = runSelect.value;
    clear(runSelect).append(...state.runs.map((run) => h('option', { value: run.id }, run.name)));
    if (value !== '') runSelect.value = value;
  }

  async function selectRun(run, step, index) {
    const mine = ++latest;
    Object.assign(current, { run, step: undefined, index: undefined });
    runSelect.value = String(run);
    const { steps } = await api.steps(run);
    if (mine !== latest) return;
    clear(stepSelect).append(...steps.map((s) => h('option', { value: s }, `step ${s}`)));
    clear(list);
    clear(detail);
    if (steps.length === 0) {
      note.hidden = false;
      note.textContent = 'This run has no saved trajectories (run.saveTrajectories, or no step finished yet).';
      onNavigate(here());
      return;
    }
    note.hidden = true;
    await selectStep(steps.includes(step) ? step : steps.at(-1), index);
  }

  async function selectStep(step, index) {
    const mine = ++latest;
    Object.assign(current, { step, index: undefined });
    stepSelect.value = String(step);
    const { trajectories } = await api.step(current.run, step);
    if (mine !== latest) return;
    const rows = trajectories.map((t) => h('tr', {
      'data-index': t.index,
      class: t.filtered ? 'filtered' : '',
      onclick: () => selectTrajectory(t.index),
    }, COLUMNS.map(([, cell]) => h('td', {}, cell(t)))));
    clear(list).append(h('table', { class: 'trajectories' },
      h('thead', {}, h('tr', {}, COLUMNS.map(([name]) => h('th', {}, name)))),
      h('tbody', {}, rows)));
    clear(detail);
    if (index !== undefined && index < trajectories.length) await selectTrajectory(index);
    else onNavigate(here());
  }

  async function selectTrajectory(index) {
    const mine = ++latest;
    current.index = index;
    for (const row of list.querySelectorAll('tr[data-index]')) row.classList.toggle('selected', Number(row.dataset.index) === index);
    clear(detail).append(h('p', { class: 'note' }, 'loading…'));
    const t = await api.trajectory(current.run, current.step, index);
    if (mine !== latest) return;
    clear(detail).append(renderDetail(t));
    onNavigate(here());
  }

  /** Shows what a location hash names (#/trajectories/run/step/index), or the first run. */
  async function open(run, step, index) {
    fillRuns();
    if (state.runs.length === 0) return onNavigate('trajectories');
    const known = state.runs.some((r) => r.id === run);
    if (known && run === current.run && step === current.step && index === current.index) onNavigate(here());
    else await selectRun(known ? run : state.runs[0].id, step, index);
  }

  return { open, fillRuns };
}
