// The whole token sequence as the loss saw it: pieces the policy sampled (mask 1, trained on)
// highlighted, the context (prompt, observations, template tokens) plain.
import { formatNumber, h } from './dom.js';

function describe(piece) {
  const last = piece.start + piece.ids.length - 1;
  const where = last > piece.start ? `tokens ${piece.start}–${last}` : `token ${piece.start}`;
  const what = piece.sampled ? `sampled, logprob ${formatNumber(piece.logprob)} (p ${formatNumber(Math.exp(piece.logprob))})` : 'context (not in the loss)';
  return `${where} · id ${piece.ids.join(' ')} · ${what}`;
}

export function renderTokens(t) {
  if (!t.pieces) return h('p', { class: 'note' }, `The tokens cannot be shown: ${t.tokenizer}`);
  const sampled = t.pieces.filter((p) => p.sampled).reduce((n, p) => n + p.ids.length, 0);
  const info = h('div', { class: 'token-info' }, 'Hover a token for its id and logprob.');
  const stream = h('pre', { class: 'tokens' }, t.pieces.map((piece, i) => h('span', {
    class: `tok ${piece.sampled ? 'sampled' : 'context'}${piece.special ? ' special' : ''}${piece.sampled && piece.logprob < -4 ? ' unlikely' : ''}`,
    'data-i': i,
  }, piece.text)));
  stream.addEventListener('mouseover', (event) => {
    const i = event.target?.dataset?.i;
    if (i !== undefined) info.textContent = describe(t.pieces[Number(i)]);
  });
  return h('div', { class: 'token-view' },
    h('div', { class: 'token-legend' },
      h('span', { class: 'tok sampled' }, 'sampled: in the loss'), ' ',
      h('span', { class: 'tok context' }, 'context: masked out'), ' ',
      h('span', { class: 'tok sampled unlikely' }, 'sampled at p < 2%'), ' ',
      `${sampled} of ${t.tokenCount} tokens sampled · tokenizer ${t.tokenizer}`),
    info,
    stream);
}
