import t from 'tap';

import {
  asciiChart,
  escapeXml,
  field,
  formatNumber,
  niceStep,
  renderChartsSvg,
  ticks,
  trainingCharts,
  type Chart,
  type Series,
} from '../../../lib/train/plots.js';

// ---------------------------------------------------------------------------------------
// A tiny XML well-formedness checker (elements, attributes, text, entities; no DTD/CDATA).

interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const ENTITY = /^&(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);/;

function checkText(text: string, where: string): string {
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '<') throw new Error(`raw '<' in ${where}`);
    if (text[i] === '&' && !ENTITY.test(text.slice(i))) throw new Error(`bad entity in ${where}: ${text.slice(i, i + 10)}`);
  }
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
}

function parseXml(xml: string): XmlElement {
  const NAME = /^[A-Za-z_][\w.:-]*/;
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let i = 0;
  while (i < xml.length) {
    if (xml[i] !== '<') {
      const end = xml.indexOf('<', i);
      const text = xml.slice(i, end === -1 ? xml.length : end);
      const decoded = checkText(text, 'text');
      if (stack.length === 0) {
        if (text.trim() !== '') throw new Error(`text outside the root element: ${text.slice(0, 20)}`);
      } else stack[stack.length - 1].text += decoded;
      i = end === -1 ? xml.length : end;
      continue;
    }
    if (xml.startsWith('</', i)) {
      const m = NAME.exec(xml.slice(i + 2));
      if (!m) throw new Error(`bad closing tag at ${i}`);
      const close = xml.indexOf('>', i);
      if (xml.slice(i + 2 + m[0].length, close).trim() !== '') throw new Error(`junk in closing tag at ${i}`);
      const open = stack.pop();
      if (!open || open.name !== m[0]) throw new Error(`</${m[0]}> closes <${open?.name ?? 'nothing'}>`);
      i = close + 1;
      continue;
    }
    const m = NAME.exec(xml.slice(i + 1));
    if (!m) throw new Error(`bad tag at ${i}: ${xml.slice(i, i + 20)}`);
    if (root && stack.length === 0) throw new Error('second root element');
    const element: XmlElement = { name: m[0], attrs: {}, children: [], text: '' };
    let j = i + 1 + m[0].length;
    for (;;) {
      const ws = /^\s*/.exec(xml.slice(j))![0].length;
      j += ws;
      if (xml.startsWith('/>', j) || xml[j] === '>') break;
      if (ws === 0) throw new Error(`no space before attribute in <${element.name}>`);
      const attr = /^([A-Za-z_][\w.:-]*)="([^"]*)"/.exec(xml.slice(j));
      if (!attr) throw new Error(`bad attribute in <${element.name}>: ${xml.slice(j, j + 20)}`);
      if (attr[1] in element.attrs) throw new Error(`duplicate attribute ${attr[1]}`);
      element.attrs[attr[1]] = checkText(attr[2], `attribute ${attr[1]}`);
      j += attr[0].length;
    }
    if (stack.length) stack[stack.length - 1].children.push(element);
    else root = element;
    if (xml.startsWith('/>', j)) i = j + 2;
    else {
      stack.push(element);
      i = j + 1;
    }
  }
  if (stack.length) throw new Error(`unclosed <${stack[stack.length - 1].name}>`);
  if (!root) throw new Error('no root element');
  return root;
}

function all(element: XmlElement, name: string): XmlElement[] {
  const out: XmlElement[] = [];
  const walk = (e: XmlElement): void => {
    if (e.name === name) out.push(e);
    e.children.forEach(walk);
  };
  walk(element);
  return out;
}

function points(polyline: XmlElement): { x: number; y: number }[] {
  return polyline.attrs.points.split(' ').map((pair) => {
    const [x, y] = pair.split(',').map(Number);
    return { x, y };
  });
}

/** Panel groups with their offset and the plot frame (the first rect) in panel coordinates. */
function panels(svg: XmlElement): { group: XmlElement; dx: number; dy: number; frame: { x: number; y: number; w: number; h: number } }[] {
  return all(svg, 'g').map((group) => {
    const m = /^translate\(([-\d.]+),([-\d.]+)\)$/.exec(group.attrs.transform);
    if (!m) throw new Error(`panel transform ${group.attrs.transform}`);
    const rect = group.children.find((c) => c.name === 'rect')!;
    return { group, dx: Number(m[1]), dy: Number(m[2]), frame: { x: Number(rect.attrs.x), y: Number(rect.attrs.y), w: Number(rect.attrs.width), h: Number(rect.attrs.height) } };
  });
}

const series = (label: string, ys: number[], xs?: number[]): Series => ({ label, points: ys.map((y, i) => ({ x: xs ? xs[i] : i, y })) });

t.test('the XML checker itself rejects malformed input', async (t) => {
  t.throws(() => parseXml('<a><b></a></b>'));
  t.throws(() => parseXml('<a>x < y</a>'));
  t.throws(() => parseXml('<a>x & y</a>'));
  t.throws(() => parseXml('<a t="1"t="2"/>'));
  t.throws(() => parseXml('<a/><b/>'));
  t.throws(() => parseXml('<a>'));
  t.equal(parseXml('<a k="&lt;&amp;"><b/>x &gt; y</a>').attrs.k, '<&');
});

// ---------------------------------------------------------------------------------------

t.test('field reads finite numbers at dotted paths', async (t) => {
  const row = { step: 3, reward: { mean: 0.25, std: Number.NaN }, loss: { entropy: Infinity }, s: '1', n: null, deep: { a: { b: -2 } } };
  t.equal(field(row, 'step'), 3);
  t.equal(field(row, 'reward.mean'), 0.25);
  t.equal(field(row, 'deep.a.b'), -2);
  t.equal(field(row, 'reward.std'), undefined, 'NaN skipped');
  t.equal(field(row, 'loss.entropy'), undefined, 'Infinity skipped');
  t.equal(field(row, 's'), undefined, 'strings are not numbers');
  t.equal(field(row, 'n.x'), undefined);
  t.equal(field(row, 'reward'), undefined, 'objects are not numbers');
  t.equal(field(row, 'reward.mean.x'), undefined);
  t.equal(field(row, 'missing.path'), undefined);
  t.equal(field(undefined, 'a'), undefined);
});

t.test('trainingCharts picks values from nested rows', async (t) => {
  const rows: Record<string, unknown>[] = [
    { step: 0, eval: { success: 0.1 } },
    {
      step: 1,
      reward: { mean: 0.2, std: 0.1, shapedMean: 0.15 },
      groups: { solveAll: 1, solveNone: 5, solvePartial: 2, rounds: 1 },
      loss: { entropy: 1.5, approxKl: 0.01 },
      length: { responseMean: 120, responseMax: 400, promptMean: 50 },
      turns: { mean: 2.5, max: 4 },
      time: { stepSeconds: 3, episodesPerSecond: 2.5, sampledTokensPerSecond: 1250 },
      terminations: { submitted: 6, max_context: 2 },
    },
    { step: 2, reward: { mean: Number.NaN }, groups: { solveAll: 2, solveNone: 4, solvePartial: 2 }, loss: { entropy: 1.25 }, length: { responseMean: 130 }, turns: {}, eval: { success: 0.5 } },
    { reward: { mean: 0.9 } }, // no step: skipped
    { step: 3, reward: { mean: 0.4 }, loss: { entropy: Number.POSITIVE_INFINITY }, length: { responseMean: 140, responseMax: 500 }, turns: { mean: 3 }, terminations: { submitted: 8 } },
  ];
  const charts = trainingCharts(rows);
  t.same(charts.map((c) => c.title), ['Reward', 'Groups', 'Entropy', 'Loss', 'Clipping and KL', 'Gradient norm', 'Learning rate', 'Response length', 'Turns', 'Terminations', 'Throughput']);
  const byTitle = Object.fromEntries(charts.map((c) => [c.title, c]));
  const ys = (c: Chart): Record<string, [number, number][]> => Object.fromEntries(c.series.map((s) => [s.label, s.points.map((p) => [p.x, p.y] as [number, number])]));

  t.equal(byTitle.Reward.yMin, 0);
  t.equal(byTitle.Reward.yMax, 1);
  t.same(ys(byTitle.Reward), { 'train reward': [[1, 0.2], [3, 0.4]], 'eval success (greedy)': [[0, 0.1], [2, 0.5]] });
  t.same(ys(byTitle.Groups), { 'solve all': [[1, 1], [2, 2]], 'solve none': [[1, 5], [2, 4]], 'solve partial': [[1, 2], [2, 2]] });
  t.same(ys(byTitle.Entropy), { entropy: [[1, 1.5], [2, 1.25]] });
  t.same(ys(byTitle['Response length']), { mean: [[1, 120], [2, 130], [3, 140]], max: [[1, 400], [3, 500]] });
  t.same(ys(byTitle.Turns), { 'mean turns': [[1, 2.5], [3, 3]] });
  t.same(ys(byTitle['Clipping and KL']), { 'clip low': [], 'clip high': [], 'approx KL': [[1, 0.01]] });
  t.same(ys(byTitle.Terminations), { submitted: [[1, 6], [3, 8]], max_context: [[1, 2]] }, 'a series per termination reason the rows count');
  t.same(ys(byTitle.Throughput), { 'episodes/s': [[1, 2.5]], 'sampled tokens/s (hundreds)': [[1, 12.5]] }, 'tokens/s drawn in hundreds');
  t.equal(byTitle.Loss!.empty, 'no finite value in 3 step(s)', 'an empty panel of a run with steps says so (not "no data yet")');
  for (const chart of charts) t.equal(chart.xLabel, 'step');

  const stepZero = trainingCharts([{ step: 0, eval: { success: 0.1 } }]);
  t.same(stepZero[0].series.map((s) => s.points), [[], [{ x: 0, y: 0.1 }]], 'step-0 eval-only row');
  t.ok(stepZero.slice(1).every((c) => c.series.every((s) => s.points.length === 0)));
  t.ok(trainingCharts([]).every((c) => c.series.every((s) => s.points.length === 0) && c.empty === undefined), 'no rows: every panel empty, "no data yet"');
});

t.test('trainingCharts orders points by step', async (t) => {
  const charts = trainingCharts([{ step: 2, loss: { entropy: 2 } }, { step: 1, loss: { entropy: 1 } }, { step: 3, loss: { entropy: 3 } }]);
  t.same(charts[2].series[0].points.map((p) => p.x), [1, 2, 3]);
});

// ---------------------------------------------------------------------------------------

t.test('numbers and ticks', async (t) => {
  t.equal(formatNumber(0.1 + 0.2), '0.3');
  t.equal(formatNumber(0), '0');
  t.equal(formatNumber(-0), '0');
  t.equal(formatNumber(1234), '1234');
  t.equal(formatNumber(-2.5), '-2.5');
  t.equal(formatNumber(1 / 3), '0.3333');
  t.equal(formatNumber(2.5e7), '2.5e7');
  t.equal(formatNumber(1.5e-6), '1.5e-6');
  t.equal(niceStep(0.23), 0.5);
  t.equal(niceStep(0.2), 0.2);
  t.equal(niceStep(13), 20);
  t.equal(niceStep(70), 100);
  t.equal(niceStep(0), 1);
  t.same(ticks(0, 1, 0.2), [0, 0.2, 0.4, 0.6, 0.8, 1]);
  t.same(ticks(0.05, 0.95, 0.1), [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]);
  t.same(ticks(-3, 7, 5), [0, 5]);
});

t.test('escapeXml', async (t) => {
  t.equal(escapeXml(`a<&>"b'`), 'a&lt;&amp;&gt;&quot;b&#39;');
});

t.test('SVG: well-formed, one polyline per multi-point series, inside the panel, ordered by x', async (t) => {
  const rows: Record<string, unknown>[] = Array.from({ length: 12 }, (_, step) => ({
    step,
    reward: { mean: step / 12 },
    groups: { solveAll: step, solveNone: 12 - step, solvePartial: 3 },
    loss: { entropy: 2 - step * 0.1 },
    length: { responseMean: 100 + 7 * step, responseMax: 900 },
    turns: { mean: 3 },
    eval: step % 4 === 0 ? { success: 0.1 + step / 20 } : undefined,
  }));
  const charts = trainingCharts(rows);
  const text = renderChartsSvg(charts, { columns: 3, width: 400, height: 250 });
  t.notMatch(text, /NaN|Infinity|undefined/);
  t.notMatch(text, /\d\.\d{5,}/, 'no float noise in numbers');
  const svg = parseXml(text);
  t.equal(svg.name, 'svg');
  t.equal(svg.attrs.xmlns, 'http://www.w3.org/2000/svg');
  t.equal(svg.attrs.width, '1200', '3 columns x 400');
  t.equal(svg.attrs.height, '1000', '4 rows x 250');

  const ps = panels(svg);
  t.equal(ps.length, charts.length);
  t.same(ps.map((p) => [p.dx, p.dy]), charts.map((_, i) => [(i % 3) * 400, Math.floor(i / 3) * 250]));
  const multiPoint = charts.flatMap((c) => c.series).filter((s) => s.points.length > 1).length;
  t.equal(multiPoint, 9);
  const dashes = all(svg, 'polyline').map((l) => l.attrs['stroke-dasharray'] ?? '');
  t.same(new Set(dashes.slice(2, 5)).size, 3, 'the three group series: three dash patterns (equal series stay visible)');
  t.equal(all(svg, 'polyline').length, multiPoint);

  ps.forEach(({ group, frame }, i) => {
    const title = group.children.find((c) => c.name === 'text')!;
    t.equal(title.text, charts[i].title);
    const lines = all(group, 'polyline');
    t.equal(lines.length, charts[i].series.filter((s) => s.points.length > 1).length, `${charts[i].title}: polylines`);
    t.ok(frame.w > 0 && frame.h > 0 && frame.x + frame.w <= 400 && frame.y + frame.h <= 250, 'frame inside the panel');
    const colours = new Set(lines.map((l) => l.attrs.stroke));
    t.equal(colours.size, lines.length, `${charts[i].title}: distinct colours`);
    for (const line of lines) {
      const pts = points(line);
      for (const p of pts) {
        t.ok(p.x >= frame.x && p.x <= frame.x + frame.w && p.y >= frame.y && p.y <= frame.y + frame.h, `${charts[i].title}: (${p.x},${p.y}) inside the frame`);
      }
      for (let k = 1; k < pts.length; k++) t.ok(pts[k].x > pts[k - 1].x, 'ordered by x');
    }
    // every series appears in the legend
    const texts = all(group, 'text').map((e) => e.text);
    for (const s of charts[i].series) t.ok(texts.includes(s.label), `legend has ${s.label}`);
  });

  // Fixed Reward range: the frame spans 0..1 even though train reward only reaches 11/12
  const rewardTicks = all(ps[0].group, 'text').map((e) => e.text);
  t.ok(rewardTicks.includes('0') && rewardTicks.includes('1') && rewardTicks.includes('0.2'), 'reward ticks 0..1');
});

t.test('SVG: higher y maps to a smaller pixel y; x increases left to right', async (t) => {
  const ys = [5, 1, 9, 3, 7];
  const svg = parseXml(renderChartsSvg([{ title: 't', xLabel: 'x', series: [series('s', ys, [10, 20, 30, 40, 50])] }]));
  const [line] = all(svg, 'polyline');
  const pts = points(line);
  t.equal(pts.length, ys.length);
  for (let a = 0; a < ys.length; a++) {
    for (let b = 0; b < ys.length; b++) {
      if (ys[a] > ys[b]) t.ok(pts[a].y < pts[b].y, `y=${ys[a]} above y=${ys[b]}`);
    }
  }
  // linear mapping: equal data steps give equal pixel steps
  const dx = pts.slice(1).map((p, i) => p.x - pts[i].x);
  for (const d of dx) t.ok(Math.abs(d - dx[0]) < 0.02);
  const perUnit = (pts[0].y - pts[2].y) / (9 - 5);
  t.ok(Math.abs((pts[1].y - pts[3].y) / (3 - 1) - perUnit) < 0.02);
  // one circle per point
  t.equal(all(svg, 'circle').length, ys.length);
  // y tick labels are nice 1/2/5 x 10^k multiples
  const tickLabels = all(svg, 'text').map((e) => e.text).filter((s) => /^-?[\d.]+$/.test(s)).map(Number);
  t.ok(tickLabels.includes(0) || tickLabels.includes(2), 'ticks at multiples of 2');
  for (const v of tickLabels) t.ok(Number.isInteger(v / 2) || Number.isInteger(v / 10), `nice tick ${v}`);
});

t.test('SVG: text is escaped', async (t) => {
  const text = renderChartsSvg([{ title: 'T <&> "q"', xLabel: `x's`, yLabel: 'y<1', series: [series('a<&>b', [1, 2])] }]);
  t.match(text, 'a&lt;&amp;&gt;b');
  t.match(text, 'T &lt;&amp;&gt; &quot;q&quot;');
  t.match(text, 'x&#39;s');
  t.notMatch(text, 'a<&>b');
  t.notMatch(text, '<1');
  const svg = parseXml(text);
  const texts = all(svg, 'text').map((e) => e.text);
  t.ok(texts.includes('a<&>b'), 'decodes back to the label');
  t.ok(texts.includes('T <&> "q"'));
  t.equal(all(svg, 'polyline')[0].attrs['data-series'], 'a<&>b');
});

t.test('SVG: empty, single-point and constant series', async (t) => {
  const charts: Chart[] = [
    { title: 'empty', xLabel: 'step', series: [series('nothing', [])] },
    { title: 'no series', xLabel: 'step', series: [] },
    { title: 'single', xLabel: 'step', series: [series('one', [0.5], [0])] },
    { title: 'constant', xLabel: 'step', series: [series('flat', [3, 3, 3, 3])] },
    { title: 'zeros', xLabel: 'step', series: [series('zero', [0, 0, 0])] },
    { title: 'same x', xLabel: 'step', series: [series('col', [1, 2], [4, 4])] },
    { title: 'non-finite', xLabel: 'step', series: [series('bad', [Number.NaN, Infinity, 2], [0, 1, 2])] },
    { title: 'fixed', xLabel: 'step', yMin: 0, yMax: 1, series: [series('out of range', [-0.5, 2])] },
  ];
  const text = renderChartsSvg(charts);
  t.notMatch(text, /NaN|Infinity|undefined/);
  const svg = parseXml(text);
  const ps = panels(svg);
  t.equal(ps.length, charts.length);
  const noData = (i: number): boolean => all(ps[i].group, 'text').some((e) => e.text === 'no data yet');
  t.ok(noData(0) && noData(1), 'empty panels say so');
  t.notOk(noData(2) || noData(3), 'others do not');

  const circles = (i: number): XmlElement[] => all(ps[i].group, 'circle');
  const lines = (i: number): XmlElement[] => all(ps[i].group, 'polyline');
  t.equal(lines(2).length, 0);
  t.equal(circles(2).length, 1, 'single point gets a marker');
  for (const i of [2, 3, 4, 5, 6, 7]) {
    const { frame } = ps[i];
    for (const c of circles(i)) {
      const x = Number(c.attrs.cx);
      const y = Number(c.attrs.cy);
      t.ok(x >= frame.x && x <= frame.x + frame.w && y >= frame.y && y <= frame.y + frame.h, `${charts[i].title}: marker inside the frame`);
    }
  }
  const flat = points(lines(3)[0]);
  t.equal(new Set(flat.map((p) => p.y)).size, 1, 'constant series is a flat line');
  t.equal(points(lines(4)[0]).length, 3);
  t.equal(circles(6).length, 1, 'non-finite points dropped');
  t.equal(lines(6).length, 0);

  const none = renderChartsSvg([]);
  t.match(parseXml(none).name, 'svg');
  t.match(none, 'no data yet');
});

t.test('SVG: many points drop the markers but keep the line', async (t) => {
  const svg = parseXml(renderChartsSvg([{ title: 'long', xLabel: 'step', series: [series('s', Array.from({ length: 500 }, (_, i) => Math.sin(i / 20)))] }]));
  t.equal(all(svg, 'polyline').length, 1);
  t.equal(points(all(svg, 'polyline')[0]).length, 500);
  t.equal(all(svg, 'circle').length, 0);
});

t.test('SVG: a long legend wraps and pushes the plot down', async (t) => {
  const labels = ['a fairly long series label', 'another long series label', 'third'];
  const one = panels(parseXml(renderChartsSvg([{ title: 'w', xLabel: 'x', series: [series('short', [1, 2])] }], { width: 240 })))[0];
  const svg = parseXml(renderChartsSvg([{ title: 'w', xLabel: 'x', series: labels.map((l, i) => series(l, [i, i + 1])) }], { width: 240, columns: 4 }));
  t.equal(svg.attrs.width, '240', 'columns clamp to the number of charts');
  const [panel] = panels(svg);
  const legendY = all(panel.group, 'text').filter((e) => labels.includes(e.text)).map((e) => Number(e.attrs.y));
  t.equal(legendY.length, 3);
  t.ok(new Set(legendY).size >= 2, 'legend uses more than one row');
  t.ok(Math.max(...legendY) < panel.frame.y, 'legend above the plot frame');
  t.ok(panel.frame.y > one.frame.y, 'frame moved down');
});

// ---------------------------------------------------------------------------------------

/** The plot rows of an ascii chart: [label, cells] for each line with a '|' axis. */
function plotRows(text: string): { label: string; cells: string }[] {
  return text
    .split('\n')
    .filter((l) => l.includes('|'))
    .map((l) => {
      const at = l.indexOf('|');
      return { label: l.slice(0, at).trim(), cells: l.slice(at + 1) };
    });
}

t.test('asciiChart: max on the top row, min on the bottom row', async (t) => {
  const text = asciiChart([series('success', [0.2, 0.9, 0.5, 0.1, 0.6])], { width: 21, height: 9 });
  const rows = plotRows(text);
  t.equal(rows.length, 9);
  t.equal(rows[0].cells.indexOf('*'), 5, 'max (x=1 of 0..4) on the top row at column 5');
  t.equal(rows[8].cells.indexOf('*'), 15, 'min (x=3) on the bottom row at column 15');
  t.equal(rows[0].cells.replace(/ /g, ''), '*');
  t.equal(rows[0].label, '0.9');
  t.equal(rows[8].label, '0.1');
  t.equal(rows[4].label, '0.5');
  const marks = rows.map((r) => r.cells).join('').replace(/ /g, '');
  t.equal(marks, '*****', 'one mark per point');
  const lines = text.split('\n');
  t.match(lines[lines.length - 1], /\* success/);
  t.match(lines[lines.length - 2], /^\s+0\s+4$/, 'x range under the axis');
  t.equal(asciiChart([series('success', [0.2, 0.9, 0.5, 0.1, 0.6])], { width: 21, height: 9 }), text, 'deterministic');
});

t.test('asciiChart: several series, fixed range, single points, empty input', async (t) => {
  const text = asciiChart([series('train', [0, 0.5]), series('eval', [1], [1])], { width: 11, height: 5, yMin: 0, yMax: 1 });
  const rows = plotRows(text);
  t.same(
    rows.map((r) => [r.label, r.cells.trimEnd()]),
    [
      ['1', '          o'],
      ['0.75', ''],
      ['0.5', '          *'],
      ['0.25', ''],
      ['0', '*'],
    ],
  );
  t.match(text.split('\n').at(-1)!, /\* train\s+o eval/);

  // the fixed range widens to data outside it
  const wide = plotRows(asciiChart([series('s', [-1, 2])], { width: 5, height: 4, yMin: 0, yMax: 1 }));
  t.equal(wide[0].label, '2');
  t.equal(wide[3].label, '-1');

  const single = asciiChart([series('one', [0.3], [7])], { width: 9, height: 3 });
  t.notMatch(single, /NaN|Infinity/);
  const singleRows = plotRows(single);
  t.equal(singleRows.length, 3);
  t.equal(singleRows[1].cells.indexOf('*'), 4, 'a lone point sits mid-row, mid-column');
  t.match(single, /\b7\b/);

  const constant = plotRows(asciiChart([series('c', [2, 2, 2])], { width: 3, height: 3 }));
  t.same(constant.map((r) => r.cells), ['', '***', ''], 'constant series on the middle row');
  t.equal(constant[1].label, '2');

  t.equal(asciiChart([]), '(no data yet)');
  t.equal(asciiChart([]), asciiChart([]));
  t.equal(asciiChart([series('a', [])]), '(no data yet)\n* a');
  t.equal(asciiChart([series('a', [Number.NaN])], { width: 0, height: -3 }), '(no data yet)\n* a');
  t.doesNotThrow(() => asciiChart([series('a', [1, 2])], { width: 0, height: 0 }));
});
