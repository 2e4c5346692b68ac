// metrics.jsonl rows as series: nested objects flattened to 'reward/mean', 'loss/entropy', ...;
// pure functions (the tests import them in node).

/** The finite numbers of a row by flattened key, step left out. */
export function flattenRow(row, prefix = '', out = new Map()) {
  for (const [key, value] of Object.entries(row ?? {})) {
    const name = prefix ? `${prefix}/${key}` : key;
    if (!prefix && key === 'step') continue;
    if (typeof value === 'number' && Number.isFinite(value)) out.set(name, value);
    else if (value !== null && typeof value === 'object' && !Array.isArray(value)) flattenRow(value, name, out);
  }
  return out;
}

/** Key -> points [{x: step, y}] over the rows, in step order. */
export function metricSeries(rows) {
  const series = new Map();
  for (const row of rows) {
    if (typeof row.step !== 'number') continue;
    for (const [key, y] of flattenRow(row)) {
      if (!series.has(key)) series.set(key, []);
      series.get(key).push({ x: row.step, y });
    }
  }
  for (const points of series.values()) points.sort((a, b) => a.x - b.x);
  return series;
}

/** Where a metric's panel goes: rewards and evals first, time last. */
const GROUP_ORDER = ['reward', 'eval', 'groups', 'loss', 'length', 'turns', 'terminations', 'sampler'];

export function groupOf(key) {
  return key.includes('/') ? key.slice(0, key.indexOf('/')) : 'other';
}

export function sortMetricKeys(keys) {
  const rank = (key) => {
    const i = GROUP_ORDER.indexOf(groupOf(key));
    if (groupOf(key) === 'time') return GROUP_ORDER.length + 1;
    return i < 0 ? GROUP_ORDER.length : i;
  };
  return [...keys].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

/**
 * Exponential moving average as TensorBoard smooths (weight 0: the raw points; near 1:
 * flat), debiased so that the first points are not pulled towards 0.
 */
export function ema(points, weight) {
  if (!(weight > 0)) return points.map((p) => ({ ...p }));
  let last = 0;
  let debias = 1;
  return points.map((p) => {
    last = last * weight + (1 - weight) * p.y;
    debias *= weight;
    return { x: p.x, y: last / (1 - debias) };
  });
}

/** A few round values across [min, max] for axis ticks. */
export function niceTicks(min, max, count = 5) {
  if (!(max > min)) return [min];
  const raw = (max - min) / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((m) => m >= raw) ?? raw;
  const ticks = [];
  // Multiples of the step, each computed afresh: summing steps would drift (5.6e-17, not 0).
  // Bounded: far from 0 a float k + 1 can equal k, and the loop would never end.
  const first = Math.ceil(min / step);
  for (let i = 0; i <= 2 * count + 1; i++) {
    const v = (first + i) * step;
    if (v > max + step * 1e-9) break;
    ticks.push(Number(v.toPrecision(12)) + 0);
  }
  return ticks;
}
