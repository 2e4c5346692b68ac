// DOM building without markup strings: every text is a text node, so model output (hostile
// by assumption) is shown as text and never parsed as HTML.

const SVG_NS = 'http://www.w3.org/2000/svg';

function setProps(el, props) {
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') el.setAttribute('class', value);
    else if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'value' || key === 'checked' || key === 'selected') el[key] = value;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
}

export function append(el, ...children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** An HTML element: h('td', { class: 'num' }, 'text', otherNode). */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  setProps(el, props);
  return append(el, ...children);
}

/** An SVG element; attributes as given (numbers are written as they are). */
export function s(tag, props, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setProps(el, props);
  return append(el, ...children);
}

export function clear(el) {
  el.replaceChildren();
  return el;
}

/** A number for people: 4 significant digits, no exponent for everyday sizes. */
export function formatNumber(x) {
  if (typeof x !== 'number' || !Number.isFinite(x)) return String(x);
  if (x === 0) return '0';
  const abs = Math.abs(x);
  if (abs >= 1e6 || abs < 1e-3) return x.toExponential(3);
  if (Number.isInteger(x)) return String(x);
  return String(Number(x.toPrecision(4)));
}

/** A duration for people: '0.21 ms', '48 ms', '3.2 s', '2 min 5 s'. */
export function formatDuration(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return String(ms);
  if (ms < 10) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}
