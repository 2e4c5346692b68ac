// The curves tab: every numeric metric of metrics.jsonl, a panel each, the visible runs
// overlaid, smoothed by an EMA, redrawn when a live run writes a step.
import { api } from './api.js';
import { lineChart, runStyle, swatch } from './chart.js';
import { clear, h } from './dom.js';
import { ema, groupOf, metricSeries, sortMetricKeys } from './metrics.js';

export function createCurves(root, state) {
  const metrics = new Map(); // run id -> { signature, series }
  const smoothing = h('input', { type: 'range', min: 0, max: 0.99, step: 0.01, value: '0', id: 'smoothing', oninput: () => { smoothingValue.textContent = smoothing.value; render(); } });
  const smoothingValue = h('span', { class: 'smoothing-value' }, '0');
  const filter = h('input', { type: 'search', id: 'metric-filter', placeholder: 'filter metrics (e.g. loss/ or reward)', oninput: () => render() });
  const legend = h('div', { class: 'legend' });
  const charts = h('div', { class: 'charts', id: 'charts' });
  const note = h('p', { class: 'note', hidden: true });
  root.append(h('div', { class: 'controls' }, h('label', {}, 'smoothing ', smoothing, ' ', smoothingValue), filter), legend, note, charts);

  function visibleRuns() {
    return state.runs.filter((run) => run.visible);
  }

  async function refresh() {
    let changed = false;
    await Promise.all(visibleRuns().map(async (run) => {
      const { rows } = await api.metrics(run.id);
      // A live run only appends (or rewrites on resume): the count and last row tell a change.
      const signature = `${rows.length}:${JSON.stringify(rows.at(-1) ?? null)}`;
      if (metrics.get(run.id)?.signature === signature) return;
      metrics.set(run.id, { signature, series: metricSeries(rows) });
      changed = true;
    }));
    if (changed) render();
  }

  function render() {
    const runs = visibleRuns().filter((run) => metrics.has(run.id));
    clear(legend).append(...visibleRuns().map((run) => h('span', { class: 'legend-item' }, swatch(runStyle(run.id)), run.name)));
    const weight = Number(smoothing.value);
    const query = filter.value.trim().toLowerCase();
    const keys = sortMetricKeys(new Set(runs.flatMap((run) => [...metrics.get(run.id).series.keys()])))
      .filter((key) => key.toLowerCase().includes(query));
    note.hidden = keys.length > 0;
    note.textContent = runs.length === 0 ? 'No run is selected, or none has metrics yet.' : 'No metric matches the filter.';
    clear(charts);
    let group;
    for (const key of keys) {
      if (groupOf(key) !== group) {
        group = groupOf(key);
        charts.append(h('h2', { class: 'group' }, group));
      }
      const series = runs.flatMap((run) => {
        const points = metrics.get(run.id).series.get(key);
        if (!points) return [];
        return [{ label: run.name, style: runStyle(run.id), points: ema(points, weight), raw: weight > 0 ? points : undefined }];
      });
      charts.append(lineChart(key, series));
    }
  }

  return { refresh, render };
}
