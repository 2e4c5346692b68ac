// A trajectory's conversation turn by turn: the opening messages, then each assistant turn
// (its thinking, text and tool calls, parsed from the decoded response) and the observation
// the environment answered with.
import { formatDuration, formatNumber, h } from './dom.js';

const SEGMENT = /<think>([\s\S]*?)(?:<\/think>|$)|<tool_call>([\s\S]*?)(?:<\/tool_call>|$)|<function=([^>\n]*)>([\s\S]*?)(?:<\/function>|$)/g;
const PARAMETER = /<parameter=([^>\n]*)>\n?([\s\S]*?)\n?(?:<\/parameter>|$)/g;

/**
 * An assistant response as segments: { kind: 'text' | 'think', text } and
 * { kind: 'call', name, params: [{ name, value }], text } for <function=...> calls and
 * <tool_call>{json}</tool_call> blocks (text: the call as written).
 */
export function responseSegments(response) {
  const segments = [];
  let at = 0;
  const text = (until) => {
    const plain = response.slice(at, until);
    if (plain.trim() !== '') segments.push({ kind: 'text', text: plain });
  };
  for (const m of response.matchAll(SEGMENT)) {
    text(m.index);
    at = m.index + m[0].length;
    if (m[1] !== undefined) {
      segments.push({ kind: 'think', text: m[1] });
    } else if (m[2] !== undefined) {
      segments.push(jsonCall(m[2]));
    } else {
      const params = [...m[4].matchAll(PARAMETER)].map((p) => ({ name: p[1], value: p[2] }));
      segments.push({ kind: 'call', name: m[3], params, text: m[0] });
    }
  }
  text(response.length);
  return segments;
}

function jsonCall(body) {
  try {
    const call = JSON.parse(body);
    const args = typeof call.arguments === 'string' ? JSON.parse(call.arguments) : call.arguments ?? {};
    return { kind: 'call', name: String(call.name), params: Object.entries(args).map(([name, value]) => ({ name, value: typeof value === 'string' ? value : JSON.stringify(value, null, 2) })), text: body };
  } catch {
    return { kind: 'call', name: '(unparsed tool call)', params: [], text: body };
  }
}

function renderSegment(segment) {
  switch (segment.kind) {
    case 'think':
      return h('details', { class: 'think', open: true }, h('summary', {}, 'thinking'), h('pre', {}, segment.text.trim() === '' ? '(empty)' : segment.text));
    case 'call':
      return h('div', { class: 'call' },
        h('div', { class: 'call-name' }, `call ${segment.name}`),
        segment.params.length === 0 && segment.text ? h('pre', {}, segment.text) : null,
        segment.params.map((p) => h('div', { class: 'param' }, h('span', { class: 'param-name' }, p.name), h('pre', {}, p.value))));
    default:
      return h('pre', { class: 'text' }, segment.text);
  }
}

function message(role, body, meta, open = true) {
  return h('details', { class: `message role-${role.replace(/[^a-z]/g, '')}`, open },
    h('summary', {}, h('span', { class: 'role' }, role), meta ? h('span', { class: 'meta' }, meta) : null),
    body);
}

export function renderConversation(t) {
  const items = [];
  if (t.messages.length === 0) items.push(h('p', { class: 'note' }, 'The opening prompt is not available: the trajectory has no messages and the run\'s tokenizer could not be loaded.'));
  for (const m of t.messages) {
    const meta = t.messagesSource === 'decoded' ? 'decoded from the prompt tokens' : null;
    items.push(message(m.role, h('pre', {}, m.content), meta, m.role !== 'system'));
  }
  t.turns.forEach((turn, i) => {
    const meta = [
      `turn ${i + 1}`,
      `${turn.responseTokens} tokens sampled at context ${turn.contextTokens}`,
      `finish ${turn.finishReason}`,
      turn.tool ? `tool ${turn.tool}` : null,
      `${formatDuration(turn.generateMs)} generating`,
    ].filter(Boolean).join(' · ');
    const segments = responseSegments(turn.response);
    items.push(message('assistant', h('div', { class: 'segments' }, segments.length ? segments.map(renderSegment) : h('p', { class: 'note' }, '(empty response)')), meta));
    if (turn.observation !== '' || i < t.turns.length - 1) {
      const obsMeta = `${turn.observationTokens} tokens · ${formatDuration(turn.stepMs)} in the env`;
      items.push(message('observation', h('pre', {}, turn.observation), obsMeta));
    }
  });
  items.push(h('div', { class: 'ending' },
    h('span', { class: `badge term-${String(t.termination).replace(/[^a-z_]/g, '')}` }, `ended: ${t.termination}`),
    h('span', {}, `reward ${formatNumber(t.reward)}: ${t.rewardReason}`),
    t.error ? h('span', { class: 'error' }, `error: ${t.error}`) : null));
  return h('div', { class: 'conversation' }, items);
}
