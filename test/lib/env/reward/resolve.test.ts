import t from 'tap';

import { r2eGymResolution, sweBenchResolution } from '../../../../lib/env/reward/resolve.js';
import type { TestStatuses } from '../../../../lib/env/reward/test-log.js';

const statuses: TestStatuses = new Map([
  ['t.py::test_fixed', 'PASSED'],
  ['t.py::test_kept', 'PASSED'],
  ['t.py::test_known_bad', 'XFAIL'],
  ['t.py::test_broken', 'FAILED'],
  ['t.py::TestA::test_b', 'ERROR'],
]);

t.test('SWE-bench: every F2P and P2P passes (PASSED or XFAIL); missing counts as failed', async (t) => {
  t.same(sweBenchResolution(statuses, ['t.py::test_fixed'], ['t.py::test_kept', 't.py::test_known_bad']), { resolved: true });
  t.same(sweBenchResolution(statuses, ['t.py::test_fixed'], []), { resolved: true }, 'unlisted failures do not matter');
  t.same(sweBenchResolution(statuses, ['t.py::test_broken'], ['t.py::test_kept']), {
    resolved: false,
    reason: '1 required test(s) not passing: t.py::test_broken (FAILED)',
  });
  t.same(sweBenchResolution(statuses, ['t.py::test_gone'], []), {
    resolved: false,
    reason: '1 required test(s) not passing: t.py::test_gone (missing)',
  });
  t.equal(sweBenchResolution(new Map(), [], []).resolved, true, 'nothing required: vacuously resolved');
});

t.test('R2E-Gym: the Class.test map equals expected_output_json exactly', async (t) => {
  const r2e: TestStatuses = new Map([
    ['test_fixed', 'PASSED'],
    ['test_kept', 'PASSED'],
    ['test_broken', 'FAILED'],
    ['TestA.test_b', 'ERROR'],
  ]);
  const expected = { test_fixed: 'PASSED', test_kept: 'PASSED', test_broken: 'FAILED', 'TestA.test_b': 'ERROR' };
  t.same(r2eGymResolution(r2e, expected), { resolved: true });
  t.same(r2eGymResolution(r2e, { ...expected, test_broken: 'PASSED' }), {
    resolved: false,
    reason: '1 mismatch(es): test_broken: expected PASSED, got FAILED',
  });
  const { test_kept: _dropped, ...fewer } = expected;
  t.same(r2eGymResolution(r2e, fewer), { resolved: false, reason: '1 mismatch(es): test_kept: not expected' }, 'an extra test fails it');
  t.same(r2eGymResolution(new Map(), { test_fixed: 'PASSED' }), { resolved: false, reason: '1 mismatch(es): test_fixed: expected PASSED, got missing' });
  // Its reward cuts both sides' keys at " - " and drops colour codes before comparing.
  t.same(r2eGymResolution(r2e, { ...fewer, 'test_kept - flaky': 'PASSED' }), { resolved: true }, 'an expected key cut at " - "');
  t.same(r2eGymResolution(r2e, { ...fewer, '\u001b[1mtest_kept\u001b[0m': 'PASSED' }), { resolved: true }, 'colour codes dropped');
});
