// Line charts as inline SVG: one metric, a series per run, hover values. Series that coincide
// stay visible: every run has its own colour, dash pattern and marker shape, markers shrink
// with the run's index (a later run's marker sits inside an earlier one's), and the later
// run's dashed line leaves gaps through which the earlier one shows.
import { formatNumber, h, s } from './dom.js';
import { niceTicks } from './metrics.js';

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];
const DASHES = [undefined, '7 4', '2 3', '10 3 2 3', '4 2'];
const MARKERS = ['circle', 'square', 'triangle', 'diamond', 'cross'];

/** The look of run number `index` in every chart and legend. */
export function runStyle(index) {
  return {
    color: COLORS[index % COLORS.length],
    dash: DASHES[index % DASHES.length],
    marker: MARKERS[index % MARKERS.length],
    markerSize: Math.max(2.2, 5 - 0.9 * (index % 4)),
  };
}

export function marker(style, x, y) {
  const r = style.markerSize;
  const common = { stroke: style.color, 'stroke-width': 1.4, fill: '#fff', class: 'marker' };
  const poly = (pts) => s('polygon', { ...common, points: pts.map(([dx, dy]) => `${(x + dx).toFixed(1)},${(y + dy).toFixed(1)}`).join(' ') });
  switch (style.marker) {
    case 'square':
      return s('rect', { ...common, x: (x - r).toFixed(1), y: (y - r).toFixed(1), width: (2 * r).toFixed(1), height: (2 * r).toFixed(1) });
    case 'triangle':
      return poly([[0, -r * 1.2], [r * 1.1, r * 0.8], [-r * 1.1, r * 0.8]]);
    case 'diamond':
      return poly([[0, -r * 1.3], [r * 1.1, 0], [0, r * 1.3], [-r * 1.1, 0]]);
    case 'cross':
      return s('path', { ...common, fill: 'none', d: `M${x - r},${y - r}L${x + r},${y + r}M${x - r},${y + r}L${x + r},${y - r}` });
    default:
      return s('circle', { ...common, cx: x.toFixed(1), cy: y.toFixed(1), r: r.toFixed(1) });
  }
}

/** A short line with the run's dash and marker, for legends. */
export function swatch(style) {
  return s('svg', { class: 'swatch', width: 34, height: 14, viewBox: '0 0 34 14' },
    s('line', { x1: 1, y1: 7, x2: 33, y2: 7, stroke: style.color, 'stroke-width': 2, 'stroke-dasharray': style.dash }),
    marker(style, 17, 7));
}

const WIDTH = 380;
const HEIGHT = 220;
const MARGIN = { left: 52, right: 12, top: 10, bottom: 24 };
/** Past this many points a series shows every k-th marker (offset per run, so marks interleave). */
const MAX_MARKERS = 16;

function extent(values) {
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  // A range within rounding of its values (a smoothed constant) is drawn as flat.
  if (max - min <= 1e-9 * Math.max(Math.abs(min), Math.abs(max))) {
    const mid = (min + max) / 2;
    const pad = mid === 0 ? 1 : Math.abs(mid) * 0.1;
    return [mid - pad, mid + pad];
  }
  const pad = (max - min) * 0.05;
  return [min - pad, max + pad];
}

function nearest(points, x) {
  let best;
  for (const p of points) if (!best || Math.abs(p.x - x) < Math.abs(best.x - x)) best = p;
  return best;
}

/**
 * A chart panel. series: [{ label, style, points, raw? }]: points are drawn (smoothed when
 * smoothing is on), raw faintly behind them.
 */
export function lineChart(title, series) {
  const all = series.flatMap((one) => [...one.points, ...(one.raw ?? [])]);
  const [x0, x1] = extent(all.map((p) => p.x));
  const [y0, y1] = extent(all.map((p) => p.y));
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const px = (x) => MARGIN.left + ((x - x0) / (x1 - x0)) * plotW;
  const py = (y) => MARGIN.top + (1 - (y - y0) / (y1 - y0)) * plotH;
  const path = (points) => points.map((p, i) => `${i ? 'L' : 'M'}${px(p.x).toFixed(1)},${py(p.y).toFixed(1)}`).join('');

  const svg = s('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: 'plot', role: 'img', 'aria-label': title });
  const axes = s('g', { class: 'axes' });
  for (const t of niceTicks(y0, y1, 4)) {
    axes.append(s('line', { x1: MARGIN.left, x2: WIDTH - MARGIN.right, y1: py(t), y2: py(t), class: 'grid' }));
    axes.append(s('text', { x: MARGIN.left - 5, y: py(t) + 3.5, 'text-anchor': 'end' }, formatNumber(t)));
  }
  for (const t of niceTicks(x0, x1, 5).filter((t) => Number.isInteger(t))) {
    axes.append(s('line', { x1: px(t), x2: px(t), y1: MARGIN.top + plotH, y2: MARGIN.top + plotH + 4, class: 'tick' }));
    axes.append(s('text', { x: px(t), y: HEIGHT - 8, 'text-anchor': 'middle' }, String(t)));
  }
  axes.append(s('rect', { x: MARGIN.left, y: MARGIN.top, width: plotW, height: plotH, class: 'frame' }));
  svg.append(axes);

  series.forEach((one, i) => {
    const g = s('g', { class: 'series', 'data-series': one.label });
    if (one.raw) g.append(s('path', { d: path(one.raw), fill: 'none', stroke: one.style.color, 'stroke-width': 1, 'stroke-opacity': 0.25, class: 'raw' }));
    g.append(s('path', { d: path(one.points), fill: 'none', stroke: one.style.color, 'stroke-width': 1.8, 'stroke-dasharray': one.style.dash, class: 'line' }));
    const every = Math.ceil(one.points.length / MAX_MARKERS);
    one.points.forEach((p, k) => {
      if (k % every === i % every) g.append(marker(one.style, px(p.x), py(p.y)));
    });
    svg.append(g);
  });

  const guide = s('line', { y1: MARGIN.top, y2: MARGIN.top + plotH, class: 'guide', visibility: 'hidden' });
  svg.append(guide);
  const tooltip = h('div', { class: 'tooltip', hidden: true });
  const panel = h('div', { class: 'chart' }, h('div', { class: 'chart-title', title }, title), svg, tooltip);

  const overlay = s('rect', { x: MARGIN.left, y: MARGIN.top, width: plotW, height: plotH, class: 'overlay' });
  svg.append(overlay);
  overlay.addEventListener('mousemove', (event) => {
    const box = svg.getBoundingClientRect();
    const scale = WIDTH / box.width;
    const x = x0 + (((event.clientX - box.left) * scale - MARGIN.left) / plotW) * (x1 - x0);
    const hits = series.map((one) => ({ one, p: nearest(one.points, x), raw: one.raw ? nearest(one.raw, x) : undefined })).filter((hit) => hit.p);
    if (hits.length === 0) return;
    const step = nearest(hits.map((hit) => hit.p), x).x;
    guide.setAttribute('x1', px(step));
    guide.setAttribute('x2', px(step));
    guide.setAttribute('visibility', 'visible');
    tooltip.replaceChildren(
      h('div', { class: 'tooltip-step' }, `step ${step}`),
      ...hits.filter((hit) => hit.p.x === step).map((hit) =>
        h('div', { class: 'tooltip-row' }, swatch(hit.one.style), `${hit.one.label}: ${formatNumber(hit.p.y)}`, hit.raw && hit.raw.y !== hit.p.y ? h('span', { class: 'raw' }, ` (raw ${formatNumber(hit.raw.y)})`) : null)),
    );
    tooltip.hidden = false;
    const left = (px(step) / scale) + 12;
    tooltip.style.left = `${Math.min(left, box.width - 150)}px`;
    tooltip.style.top = `${(event.clientY - box.top) + 28}px`;
  });
  overlay.addEventListener('mouseleave', () => {
    tooltip.hidden = true;
    guide.setAttribute('visibility', 'hidden');
  });
  return panel;
}
