// The page: a run list, and three tabs (curves, trajectories, eval reports) addressed by the
// location hash (#/curves, #/trajectories/RUN/STEP/INDEX, #/evals/RUN/PATH), so a view can be
// linked and reloaded. Metrics and the run list are polled, so a live run's curves grow.
import { api } from './api.js';
import { createCurves } from './curves.js';
import { createEvals } from './evals.js';
import { renderRunList } from './runs.js';
import { createTrajectories } from './trajectories.js';

const POLL_MS = 3000;
const TABS = ['curves', 'trajectories', 'evals'];

const state = { runs: [] };
const errorBar = document.getElementById('error');
const runList = document.getElementById('runs');

function showError(error) {
  errorBar.hidden = false;
  errorBar.textContent = `${error?.message ?? error}`;
}

/** Runs an async action, showing its failure on the page rather than losing it. */
function guard(action) {
  return (...args) => Promise.resolve().then(() => action(...args)).then(() => { errorBar.hidden = true; }, showError);
}

/**
 * Records where the page is once a view has shown it: the hash (for links and reloads) and
 * body[data-route] (what tests wait for). A view that finishes loading after the user moved
 * to another tab records nothing.
 */
function navigate(part) {
  if (part.split('/')[0] !== activeTab) return;
  history.replaceState(null, '', `#/${part}`);
  document.body.dataset.route = part;
}

const curves = createCurves(document.getElementById('view-curves'), state);
let activeTab;
const trajectories = createTrajectories(document.getElementById('view-trajectories'), state, navigate);
const evals = createEvals(document.getElementById('view-evals'), state, navigate);

async function route() {
  const [tab = 'curves', ...rest] = location.hash.replace(/^#\/?/, '').split('/');
  const name = TABS.includes(tab) ? tab : 'curves';
  activeTab = name;
  for (const t of TABS) {
    document.getElementById(`view-${t}`).hidden = t !== name;
    document.getElementById(`tab-${t}`).classList.toggle('active', t === name);
  }
  const number = (text) => (text === undefined || text === '' ? undefined : Number(text));
  if (name === 'curves') {
    await curves.refresh();
    curves.render();
    navigate('curves');
  } else if (name === 'trajectories') {
    await trajectories.open(number(rest[0]), number(rest[1]), number(rest[2]));
  } else {
    await evals.open(number(rest[0]), rest.slice(1).join('/'));
  }
}

async function loadRuns() {
  const { runs } = await api.runs();
  const visible = new Map(state.runs.map((run) => [run.id, run.visible]));
  state.runs = runs.map((run) => ({ ...run, visible: visible.get(run.id) ?? true }));
  renderRunList(runList, state, guard(async () => {
    curves.render();
    await curves.refresh();
  }));
  trajectories.fillRuns();
}

let polling = false;
async function poll() {
  if (polling) return;
  polling = true;
  try {
    await loadRuns();
    if (activeTab === 'curves') await curves.refresh();
  } finally {
    polling = false;
  }
}

for (const tab of TABS) {
  document.getElementById(`tab-${tab}`).addEventListener('click', guard(async () => {
    location.hash = `#/${tab}`;
  }));
}
window.addEventListener('hashchange', guard(route));
await guard(async () => {
  await loadRuns();
  await route();
  document.body.dataset.ready = 'true';
})();
setInterval(guard(poll), POLL_MS);
