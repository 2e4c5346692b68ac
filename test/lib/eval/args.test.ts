// swerl eval's flags: --select and the verifiers' flags checked against the policy before
// anything runs; --samples is --runs.
import t from 'tap';

import { parseEvalArgs, type EvalFlags } from '../../../lib/eval/args.js';

const base: EvalFlags = { tasks: 'tasks/swe-mini', policy: 'oracle' };

t.test('bad --select flags name the flag and the fix', async (t) => {
  const cases: [EvalFlags, RegExp][] = [
    [{ select: 'best' }, /^--select best is not a rule; use one or more of random, majority, execution, judge, hybrid, oracle/],
    [{ select: 'execution' }, /needs reproduction tests and --policy oracle cannot write them; pass --test-writer oracle/],
    [{ select: 'judge' }, /needs a judge and --policy oracle cannot score; pass --judge-model DIR or --judge-server URL/],
    [{ select: 'majority', keep: '2' }, /^--keep is the hybrid rule's/],
    [{ select: 'majority', judgeModel: 'x' }, /^--judge-model is for the judge: add judge or hybrid to --select/],
    [{ select: 'random', testWriter: 'oracle' }, /^--test-writer is for the reproduction tests/],
    [{ keep: '2' }, /^--keep only matters with --select RULES/],
    [{ judgeBudget: '100' }, /^--judge-budget only matters with --select RULES/],
    [{ select: 'execution', testWriter: 'oracle', reproductionCommand: 'pytest' }, /^--reproduction-command "pytest" has no \{files\}/],
    [{ select: 'execution', testWriter: 'someone' }, /^--test-writer is "someone"; use policy/],
    [{ runs: '2', samples: '3' }, /^--runs 2 and --samples 3 disagree/],
    [{ select: 'judge', judgeServer: 'http://127.0.0.1:1' }, /^--judge-server needs --judge-tokenizer DIR/],
    [{ select: 'judge', judgeModel: 'a', judgeServer: 'http://127.0.0.1:1' }, /^give one of --judge-model and --judge-server/],
    [{ select: 'hybrid', judgeModel: 'a', testWriter: 'oracle', keep: '0' }, /^--keep is "0"; give an integer >= 1/],
    [{ select: 'judge', judgeModel: 'a', judgeBudget: '10' }, /^--judge-budget is "10"; give an integer >= 64/],
    [{ policy: 'gold' }, /^--policy is "gold"; use oracle, noop, decoy/],
  ];
  for (const [flags, message] of cases) t.throws(() => parseEvalArgs({ ...base, ...flags }), { code: 'ERR_SWERL_INVALID_ARG', message }, JSON.stringify(flags));
});

t.test('good --select flags, fully defaulted', async (t) => {
  const args = parseEvalArgs({ ...base, policy: 'decoy', samples: '4', select: 'hybrid, majority', judgeModel: 'judge-dir', testWriter: 'oracle', keep: '2', reproductionCommand: 'tox -- {files}' });
  t.equal(args.runs, 4, '--samples sets the runs');
  t.same(args.ks, [1, 4]);
  t.same(args.selection, { rules: ['hybrid', 'majority'], keep: 2, testWriter: 'oracle', reproductionCommand: 'tox -- {files}', judge: { kind: 'model', dir: 'judge-dir' }, judgeBudget: 8192, testTimeoutMs: 300_000 });
  t.same(parseEvalArgs({ tasks: 'tasks/swe-mini', model: 'm', select: 'judge,execution' }).selection, { rules: ['judge', 'execution'], testWriter: 'policy', judge: 'policy', judgeBudget: 8192, testTimeoutMs: 300_000 }, 'a model judges and writes tests itself by default');
  t.same(parseEvalArgs({ ...base, select: 'judge', judgeServer: 'http://a,http://b', judgeTokenizer: 'tok', judgeProtocol: 'sglang' }).selection!.judge, { kind: 'server', servers: ['http://a', 'http://b'], protocol: 'sglang', tokenizer: 'tok' });
  t.equal(parseEvalArgs({ ...base, runs: '3', samples: '3' }).runs, 3, '--runs and --samples may both be given when they agree');
  t.equal(parseEvalArgs(base).selection, undefined);
});
