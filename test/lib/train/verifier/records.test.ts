/** The verifier's labeled records from eval candidates and saved trajectories: labels, issues, folders, and errors that name the file and the fix. */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

import t from 'tap';

import { loadVerifierData } from '../../../../lib/train/verifier/records.js';
import { jsonl, savedTrajectory, separableCandidates } from './fixtures.js';

t.test('eval candidates and run trajectories, labeled by reward > 0', async (t) => {
  const dir = t.testdir();
  const evalDir = path.join(dir, 'eval');
  mkdirSync(evalDir);
  writeFileSync(path.join(evalDir, 'candidates.jsonl'), jsonl(separableCandidates(2, 1)));
  writeFileSync(path.join(evalDir, 'report.json'), '{}');
  const run = path.join(dir, 'run');
  mkdirSync(path.join(run, 'trajectories'), { recursive: true });
  writeFileSync(path.join(run, 'trajectories', 'step-2.jsonl.gz'), gzipSync(jsonl([savedTrajectory('a', 1), savedTrajectory('b', 0), savedTrajectory('c', 0, { termination: 'error' })])));
  writeFileSync(path.join(run, 'trajectories', 'step-10.jsonl.gz'), gzipSync(jsonl([savedTrajectory('a', 0.5)])));

  const data = await loadVerifierData({ paths: [evalDir, run], issues: new Map([['b', 'Issue of b, from the task file.']]) });
  t.same(data.records.map((r) => [r.taskId, r.resolved]), [['task-0', true], ['task-0', false], ['task-1', true], ['task-1', false], ['a', true], ['b', false], ['a', true]]);
  t.same(data.issueFrom, { record: 4, tasks: 1, firstUserMessage: 2 });
  t.equal(data.records[4]!.issue, 'Issue of a.', 'the <issue> block of the first user message');
  t.equal(data.records[5]!.issue, 'Issue of b, from the task file.');
  t.same(data.records[4]!.messages.slice(2), [
    { role: 'assistant', content: 'Look.\n<function=execute_bash>\n<parameter=command>ls</parameter>\n</function>' },
    { role: 'user', content: 'a.py' },
  ], 'the turns after the opening');
  t.same(data.files.map((f) => [path.basename(f.file), f.records, f.candidates, f.trajectories, f.skipped]), [
    ['candidates.jsonl', 4, 4, 0, 0],
    ['step-2.jsonl.gz', 2, 0, 2, 1],
    ['step-10.jsonl.gz', 1, 0, 1, 0],
  ], 'candidates.jsonl of an eval folder (not report.json), a run\'s trajectories step-2 before step-10, an errored episode skipped');
});

t.test('bad input: the file, the field and the fix', async (t) => {
  const dir = t.testdir();
  const write = (name: string, text: string) => {
    writeFileSync(path.join(dir, name), text);
    return path.join(dir, name);
  };
  await t.rejects(loadVerifierData({ paths: [path.join(dir, 'nope.jsonl')] }), /--data\[0\] names .*nope\.jsonl, which does not exist/);
  await t.rejects(loadVerifierData({ paths: [write('empty.jsonl', '\n')] }), /empty\.jsonl holds no labeled record \(it is empty\); remove it from --data/);
  await t.rejects(loadVerifierData({ paths: [write('errors.jsonl', jsonl([savedTrajectory('a', 0, { termination: 'error' })]))] }), /holds no labeled record: all 1 ended in an infrastructure error/);
  await t.rejects(loadVerifierData({ paths: [write('chat.jsonl', jsonl([{ messages: [{ role: 'user', content: 'hi' }] }]))] }), /chat\.jsonl:1 is neither a candidate of swerl eval .* nor a saved trajectory/);
  await t.rejects(loadVerifierData({ paths: [write('reward.jsonl', jsonl([{ ...(separableCandidates(1, 1)[0] as object), reward: 'yes' }]))] }), /reward\.jsonl:1 reward is "yes"; the label is the reward \(> 0: resolved\): a finite number/);
  await t.rejects(loadVerifierData({ paths: [write('task.jsonl', jsonl([{ ...(separableCandidates(1, 1)[0] as object), taskId: '' }]))] }), /task\.jsonl:1 taskId is ""/);
  await t.rejects(loadVerifierData({ paths: [write('lake.jsonl', jsonl([{ ...savedTrajectory('a', 1), patch: undefined }]))] }), /lake\.jsonl has no record with a patch: these are not SWE episodes/);
  await t.rejects(loadVerifierData({ paths: [write('noissue.jsonl', jsonl([{ ...savedTrajectory('a', 1), messages: [], turns: [] }]))] }), /noissue\.jsonl:1 has no problem statement: .*give the task file with --tasks/);
  mkdirSync(path.join(dir, 'void'));
  await t.rejects(loadVerifierData({ paths: [path.join(dir, 'void')] }), /holds no candidates\.jsonl, trajectories\/ or \.jsonl\(\.gz\) file/);
});
