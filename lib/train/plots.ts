/**
 * Dependency-free training curves: `trainingCharts` turns metrics.jsonl rows into charts,
 * `renderChartsSvg` draws them as one standalone SVG (a grid of panels), and `asciiChart`
 * prints a series plot for terminals. Everything here is pure string building, so the
 * trainer can rewrite curves.svg after every step.
 */

export interface Point {
  x: number;
  y: number;
}

export interface Series {
  label: string;
  points: Point[];
}

export interface Chart {
  title: string;
  xLabel: string;
  yLabel?: string;
  series: Series[];
  /** Fixed y range; widened if data falls outside it (so no point is ever drawn off-panel). */
  yMin?: number;
  yMax?: number;
  /** What an empty panel says (default "no data yet"). */
  empty?: string;
}

export interface SvgOptions {
  /** Panels per row (default 2, at most the number of charts). */
  columns?: number;
  /** Size of one panel in px (defaults 440 x 280). */
  width?: number;
  height?: number;
}

export interface AsciiOptions {
  /** Plot columns (default 60) and rows (default 13), axis labels not counted. */
  width?: number;
  height?: number;
  yMin?: number;
  yMax?: number;
}

/** Series colours (SVG) and marks (terminal), assigned by series index within a chart. */
export const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'] as const;
export const MARKS = ['*', 'o', '+', 'x', '#', '@', '%', '&'] as const;
/** Dash patterns by series index: equal series drawn over each other stay visible. */
export const DASHES = ['', '7 4', '2 3', '10 3 2 3', '4 4', '1 2', '12 4', '6 2 2 2'] as const;
const dash = (i: number): string => (DASHES[i % DASHES.length] ? ` stroke-dasharray="${DASHES[i % DASHES.length]}"` : '');

// ---------------------------------------------------------------------------------------
// Metrics rows -> charts

/** The finite number at a dotted path of a nested row (`field(row, 'reward.mean')`), else undefined. */
export function field(row: unknown, path: string): number | undefined {
  let value: unknown = row;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** One series from a row field: x = row.step; rows without a finite step or value are skipped; sorted by x. */
export function seriesOf(rows: readonly Record<string, unknown>[], label: string, path: string): Series {
  const points: Point[] = [];
  for (const row of rows) {
    const x = field(row, 'step');
    const y = field(row, path);
    if (x !== undefined && y !== undefined) points.push({ x, y });
  }
  points.sort((a, b) => a.x - b.x); // stable: duplicate steps keep file order
  return { label, points };
}

function scaled(series: Series, factor: number): Series {
  return { label: series.label, points: series.points.map((p) => ({ x: p.x, y: p.y * factor })) };
}

/** Every termination reason the rows count, in order of first appearance. */
function terminationReasons(rows: readonly Record<string, unknown>[]): string[] {
  const reasons = new Set<string>();
  for (const row of rows) {
    const counts = row.terminations;
    if (counts && typeof counts === 'object') for (const reason of Object.keys(counts)) reasons.add(reason);
  }
  return [...reasons];
}

/**
 * The standard panels for a training run: reward, groups, entropy, loss, clipping and KL,
 * gradient norm, learning rate, lengths, turns, terminations, throughput. A panel whose
 * metric was logged but never finite (entropy when no token reached the loss) says so.
 */
export function trainingCharts(rows: readonly Record<string, unknown>[]): Chart[] {
  const s = (label: string, path: string): Series => seriesOf(rows, label, path);
  const steps = rows.filter((r) => typeof r.step === 'number' && r.step > 0).length;
  const empty = steps > 0 ? `no finite value in ${steps} step(s)` : undefined;
  const charts: Chart[] = [
    { title: 'Reward', xLabel: 'step', yLabel: 'reward / success', yMin: 0, yMax: 1, series: [s('train reward', 'reward.mean'), s('eval success (greedy)', 'eval.success')] },
    { title: 'Groups', xLabel: 'step', yLabel: 'groups', series: [s('solve all', 'groups.solveAll'), s('solve none', 'groups.solveNone'), s('solve partial', 'groups.solvePartial')] },
    { title: 'Entropy', xLabel: 'step', yLabel: 'nats/token', series: [s('entropy', 'loss.entropy')] },
    { title: 'Loss', xLabel: 'step', yLabel: 'loss', series: [s('loss', 'loss.value')] },
    { title: 'Clipping and KL', xLabel: 'step', yLabel: 'fraction / nats', series: [s('clip low', 'loss.clipFracLow'), s('clip high', 'loss.clipFracHigh'), s('approx KL', 'loss.approxKl')] },
    { title: 'Gradient norm', xLabel: 'step', yLabel: 'norm (before clipping)', series: [s('grad norm', 'loss.gradNorm')] },
    { title: 'Learning rate', xLabel: 'step', yLabel: 'lr', series: [s('lr', 'loss.lr')] },
    { title: 'Response length', xLabel: 'step', yLabel: 'tokens', series: [s('mean', 'length.responseMean'), s('max', 'length.responseMax')] },
    { title: 'Turns', xLabel: 'step', yLabel: 'turns', series: [s('mean turns', 'turns.mean')] },
    { title: 'Terminations', xLabel: 'step', yLabel: 'trajectories', series: terminationReasons(rows).map((reason) => s(reason, `terminations.${reason}`)) },
    // Tokens/s is two orders above episodes/s: drawn in hundreds so both read on one axis.
    { title: 'Throughput', xLabel: 'step', yLabel: 'per second', series: [s('episodes/s', 'time.episodesPerSecond'), scaled(s('sampled tokens/s (hundreds)', 'time.sampledTokensPerSecond'), 1 / 100)] },
  ];
  return empty ? charts.map((c) => ({ ...c, empty })) : charts;
}

// ---------------------------------------------------------------------------------------
// Numbers, ranges and ticks

/** Compact number text: at most 4 significant digits, no float noise, no "-0". */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (value === 0) return '0';
  const abs = Math.abs(value);
  if (abs >= 1e6 || abs < 1e-4) {
    const [mantissa, exponent] = value.toExponential(2).split('e');
    return `${String(Number(mantissa))}e${exponent.replace('+', '')}`;
  }
  const text = String(Number(value.toPrecision(4)));
  return text === '-0' ? '0' : text;
}

/** A coordinate: two decimals at most. */
function coord(value: number): string {
  const rounded = Math.round(value * 100) / 100;
  return rounded === 0 ? '0' : String(rounded);
}

/** The 1/2/5 x 10^k step nearest above `rough`. */
export function niceStep(rough: number): number {
  if (!(rough > 0) || !Number.isFinite(rough)) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const fraction = rough / magnitude;
  const nice = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10;
  return nice * magnitude;
}

/** Ticks every `step` within [lo, hi], snapped so they print cleanly. */
export function ticks(lo: number, hi: number, step: number): number[] {
  const out: number[] = [];
  const first = Math.ceil(lo / step - 1e-9);
  const last = Math.floor(hi / step + 1e-9);
  for (let i = first; i <= last && out.length < 100; i++) out.push(Number((i * step).toPrecision(12)));
  return out;
}

interface Axis {
  lo: number;
  hi: number;
  ticks: number[];
}

/** A data range made non-degenerate: a constant value gets a margin on both sides. */
function spread(lo: number, hi: number): [number, number] {
  if (hi > lo) return [lo, hi];
  const pad = Math.abs(lo) * 0.1 || 1;
  return [lo - pad, hi + pad];
}

/**
 * An axis over data [lo, hi]: fixed ends where given (widened to the data), otherwise
 * expanded to the nice tick step; `integer` keeps the step >= 1 (training steps).
 */
function axis(lo: number, hi: number, fixedLo: number | undefined, fixedHi: number | undefined, integer: boolean, target = 5): Axis {
  const min = fixedLo !== undefined && Number.isFinite(fixedLo) ? Math.min(fixedLo, lo) : lo;
  const max = fixedHi !== undefined && Number.isFinite(fixedHi) ? Math.max(fixedHi, hi) : hi;
  let [a, b] = spread(min, max);
  if (integer && fixedLo === undefined && fixedHi === undefined && min === max) [a, b] = [min, min + 1];
  let step = niceStep((b - a) / target);
  if (integer) step = Math.max(1, step);
  if (fixedLo === undefined || min < fixedLo) a = Math.floor(a / step + 1e-9) * step;
  if (fixedHi === undefined || max > fixedHi) b = Math.ceil(b / step - 1e-9) * step;
  if (!(b > a)) b = a + step;
  return { lo: a, hi: b, ticks: ticks(a, b, step) };
}

function finitePoints(series: Series): Point[] {
  return series.points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
}

function extent(values: number[]): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return [lo, hi];
}

// ---------------------------------------------------------------------------------------
// SVG

/** Text safe for XML element content and attribute values. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

const CHAR_WIDTH = 6.2; // rough px per character at font-size 11, for legend layout
const INSET = 6;

/** One standalone SVG with the charts in a grid of panels (`columns` per row). */
export function renderChartsSvg(charts: readonly Chart[], options: SvgOptions = {}): string {
  const panelWidth = Math.max(160, Math.floor(options.width ?? 440));
  const panelHeight = Math.max(120, Math.floor(options.height ?? 280));
  const columns = Math.max(1, Math.min(Math.floor(options.columns ?? 2), charts.length || 1));
  const rows = Math.max(1, Math.ceil(charts.length / columns));
  const width = panelWidth * columns;
  const height = panelHeight * rows;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="11">`,
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`,
  ];
  if (charts.length === 0) {
    parts.push(`<text x="${coord(width / 2)}" y="${coord(height / 2)}" text-anchor="middle" fill="#888888">no data yet</text>`);
  }
  charts.forEach((chart, i) => {
    const x0 = (i % columns) * panelWidth;
    const y0 = Math.floor(i / columns) * panelHeight;
    parts.push(`<g class="panel" transform="translate(${x0},${y0})">`, ...panel(chart, panelWidth, panelHeight), '</g>');
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

/** Legend rows: items laid out left to right, wrapping at `maxWidth`. */
function legendLayout(labels: string[], maxWidth: number): { x: number; row: number }[] {
  const out: { x: number; row: number }[] = [];
  let x = 0;
  let row = 0;
  for (const label of labels) {
    const itemWidth = 22 + label.length * CHAR_WIDTH + 12;
    if (x > 0 && x + itemWidth > maxWidth) {
      x = 0;
      row++;
    }
    out.push({ x, row });
    x += itemWidth;
  }
  return out;
}

function panel(chart: Chart, width: number, height: number): string[] {
  const out: string[] = [];
  const left = 58;
  const right = 14;
  const legend = legendLayout(chart.series.map((s) => s.label), width - left - right);
  const legendRows = legend.length ? legend[legend.length - 1].row + 1 : 0;
  const top = 28 + legendRows * 15;
  const bottom = 36;
  const plotWidth = Math.max(10, width - left - right);
  const plotHeight = Math.max(10, height - top - bottom);

  out.push(`<text x="${coord(width / 2)}" y="17" text-anchor="middle" font-size="13" font-weight="bold">${escapeXml(chart.title)}</text>`);
  chart.series.forEach((series, i) => {
    const { x, row } = legend[i];
    const lx = left + x;
    const ly = 32 + row * 15;
    const color = COLORS[i % COLORS.length];
    out.push(
      `<line x1="${coord(lx)}" y1="${ly - 4}" x2="${coord(lx + 16)}" y2="${ly - 4}" stroke="${color}" stroke-width="2"${dash(i)}/>`,
      `<text x="${coord(lx + 20)}" y="${ly}">${escapeXml(series.label)}</text>`,
    );
  });

  const data = chart.series.map(finitePoints);
  const all = data.flat();
  out.push(`<rect x="${left}" y="${top}" width="${plotWidth}" height="${plotHeight}" fill="none" stroke="#cccccc"/>`);
  if (all.length === 0) {
    out.push(`<text x="${coord(left + plotWidth / 2)}" y="${coord(top + plotHeight / 2)}" text-anchor="middle" fill="#888888">${escapeXml(chart.empty ?? 'no data yet')}</text>`);
    return out;
  }

  const [xLo, xHi] = extent(all.map((p) => p.x));
  const [yLo, yHi] = extent(all.map((p) => p.y));
  const xAxis = axis(xLo, xHi, undefined, undefined, all.every((p) => Number.isInteger(p.x)), 6);
  const yAxis = axis(yLo, yHi, chart.yMin, chart.yMax, false, 5);
  // Data and ticks map into the frame inset by INSET px, so points never sit on the axis lines.
  const px = (x: number): number => left + INSET + ((x - xAxis.lo) / (xAxis.hi - xAxis.lo)) * (plotWidth - 2 * INSET);
  const py = (y: number): number => top + plotHeight - INSET - ((y - yAxis.lo) / (yAxis.hi - yAxis.lo)) * (plotHeight - 2 * INSET);
  const axisY = top + plotHeight;

  for (const t of yAxis.ticks) {
    const y = coord(py(t));
    out.push(
      `<line x1="${left}" y1="${y}" x2="${left + plotWidth}" y2="${y}" stroke="#eeeeee"/>`,
      `<text x="${left - 5}" y="${y}" dy="0.32em" text-anchor="end" fill="#444444">${formatNumber(t)}</text>`,
    );
  }
  for (const t of xAxis.ticks) {
    const x = coord(px(t));
    out.push(
      `<line x1="${x}" y1="${axisY}" x2="${x}" y2="${axisY + 4}" stroke="#444444"/>`,
      `<text x="${x}" y="${axisY + 15}" text-anchor="middle" fill="#444444">${formatNumber(t)}</text>`,
    );
  }
  out.push(
    `<line x1="${left}" y1="${axisY}" x2="${left + plotWidth}" y2="${axisY}" stroke="#444444"/>`,
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${axisY}" stroke="#444444"/>`,
    `<text x="${coord(left + plotWidth / 2)}" y="${height - 6}" text-anchor="middle" fill="#444444">${escapeXml(chart.xLabel)}</text>`,
  );
  if (chart.yLabel) {
    const cy = coord(top + plotHeight / 2);
    out.push(`<text x="12" y="${cy}" transform="rotate(-90 12 ${cy})" text-anchor="middle" fill="#444444">${escapeXml(chart.yLabel)}</text>`);
  }

  data.forEach((points, i) => {
    if (points.length === 0) return;
    const color = COLORS[i % COLORS.length];
    const label = escapeXml(chart.series[i].label);
    if (points.length > 1) {
      const path = points.map((p) => `${coord(px(p.x))},${coord(py(p.y))}`).join(' ');
      out.push(`<polyline data-series="${label}" fill="none" stroke="${color}" stroke-width="1.8" stroke-linejoin="round"${dash(i)} points="${path}"/>`);
    }
    if (points.length <= 60) {
      for (const p of points) out.push(`<circle cx="${coord(px(p.x))}" cy="${coord(py(p.y))}" r="2.5" fill="${color}"/>`);
    }
  });
  return out;
}

// ---------------------------------------------------------------------------------------
// Terminal

/**
 * A plain-text plot: y labels on the left, one mark per series (`*`, `o`, `+`, ...; a later
 * series overwrites an earlier one in a shared cell), x range below, legend line last.
 */
export function asciiChart(series: readonly Series[], options: AsciiOptions = {}): string {
  const width = Math.max(2, Math.floor(options.width ?? 60));
  const height = Math.max(2, Math.floor(options.height ?? 13));
  const data = series.map(finitePoints);
  const all = data.flat();
  const legend = series.map((s, i) => `${MARKS[i % MARKS.length]} ${s.label}`).join('   ');
  if (all.length === 0) return legend ? `(no data yet)\n${legend}` : '(no data yet)';

  const [xLo, xHi] = extent(all.map((p) => p.x));
  let [yLo, yHi] = extent(all.map((p) => p.y));
  if (options.yMin !== undefined && Number.isFinite(options.yMin)) yLo = Math.min(yLo, options.yMin);
  if (options.yMax !== undefined && Number.isFinite(options.yMax)) yHi = Math.max(yHi, options.yMax);
  [yLo, yHi] = spread(yLo, yHi);

  const grid: string[][] = Array.from({ length: height }, () => Array<string>(width).fill(' '));
  data.forEach((points, i) => {
    for (const p of points) {
      const col = xHi > xLo ? Math.round(((p.x - xLo) / (xHi - xLo)) * (width - 1)) : Math.floor((width - 1) / 2);
      const row = Math.round(((yHi - p.y) / (yHi - yLo)) * (height - 1));
      grid[row][col] = MARKS[i % MARKS.length];
    }
  });

  const labelAt = (row: number): number => yHi - (row / (height - 1)) * (yHi - yLo);
  // Top and bottom rows always; quarter/half rows only where they fall exactly on a row.
  const labelled = new Set([0, height - 1]);
  for (const parts of [2, 4]) if ((height - 1) % parts === 0) for (let k = 1; k < parts; k++) labelled.add(((height - 1) / parts) * k);
  const labels = grid.map((_, row) => (labelled.has(row) ? formatNumber(labelAt(row)) : ''));
  const pad = Math.max(...labels.map((l) => l.length));
  const lines = grid.map((cells, row) => `${labels[row].padStart(pad)} |${cells.join('').trimEnd()}`);
  lines.push(`${' '.repeat(pad)} +${'-'.repeat(width)}`);
  const first = formatNumber(xLo);
  const last = formatNumber(xHi);
  const xLine = xHi > xLo ? first + last.padStart(Math.max(last.length, width - first.length)) : first.padStart(Math.floor((width - 1) / 2) + first.length);
  lines.push(`${' '.repeat(pad + 2)}${xLine}`);
  if (legend) lines.push(`${' '.repeat(pad + 2)}${legend}`);
  return lines.join('\n');
}
