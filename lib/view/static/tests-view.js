// SWE grading's per-test statuses as a table, the test infrastructure grading reverted,
// tampering with the test runner grading's guard saw, and the patch's flagged lines.
import { h } from './dom.js';

const STATUS_CLASS = { PASSED: 'pass', XFAIL: 'pass', FAILED: 'fail', ERROR: 'fail', XPASS: 'fail', SKIPPED: 'skip' };

export function renderTests(tests, reverted, tampering, patchFlags) {
  const parts = [];
  if (!tests || Object.keys(tests).length === 0) parts.push(h('p', { class: 'note' }, 'No test results: the episode was not graded by tests, or its grading ran none.'));
  else {
    const entries = Object.entries(tests).sort(([a], [b]) => a.localeCompare(b));
    const counts = {};
    for (const [, status] of entries) counts[status] = (counts[status] ?? 0) + 1;
    parts.push(h('p', { class: 'test-counts' }, Object.entries(counts).map(([status, n]) => h('span', { class: `status ${STATUS_CLASS[status] ?? 'other'}` }, `${status} ${n}`))));
    parts.push(h('table', { class: 'tests' },
      h('thead', {}, h('tr', {}, h('th', {}, 'test'), h('th', {}, 'status'))),
      h('tbody', {}, entries.map(([name, status]) => h('tr', {}, h('td', { class: 'test-name' }, name), h('td', { class: `status ${STATUS_CLASS[status] ?? 'other'}` }, status))))));
  }
  if (reverted?.length) {
    parts.push(h('div', { class: 'reverted' }, h('strong', {}, 'Test infrastructure the patch changed, reverted before grading: '), reverted.join(', ')));
  }
  if (tampering?.length) {
    parts.push(h('div', { class: 'reverted' }, h('strong', {}, 'The code under test tampered with the test runner (reward 0): '), tampering.join('; ')));
  }
  if (patchFlags?.length) {
    parts.push(h('div', { class: 'flags' },
      h('strong', {}, 'Lines the patch adds to source that reach for the runner or the grader (information, not a zero):'),
      h('table', { class: 'tests' }, h('tbody', {}, patchFlags.map((f) => h('tr', {}, h('td', { class: 'test-name' }, `${f.file}:${f.line}`), h('td', {}, h('code', {}, f.text)), h('td', {}, f.reason)))))));
  }
  return h('div', { class: 'tests-view' }, parts);
}
