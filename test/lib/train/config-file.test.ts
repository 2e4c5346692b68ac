/** Config files as people write them: YAML or JSON, command-line overrides, paths from the file's folder. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import { applyOverrides, loadTrainConfig, parseConfigText } from '../../../lib/train/config-file.js';
import { resolveTrainConfig } from '../../../lib/train/config.js';
import { ROOT } from '../../support/child-process.js';

const YAML_CONFIG = `# a comment people keep
run: { dir: runs/a, steps: 3 }
model:
  preset: qwen3-tiny
tasks:
  kind: swe
  path: ../tasks/swe-mini     # beside the config's folder
rollout: { tasksPerStep: 2, samplesPerTask: 2 }
`;

t.test('YAML and JSON files give the same config', async (t) => {
  const dir = t.testdir({ configs: { 'a.yaml': YAML_CONFIG } });
  const json = {
    run: { dir: 'runs/a', steps: 3 },
    model: { preset: 'qwen3-tiny' },
    tasks: { kind: 'swe', path: '../tasks/swe-mini' },
    rollout: { tasksPerStep: 2, samplesPerTask: 2 },
  };
  writeFileSync(path.join(dir, 'configs', 'a.json'), JSON.stringify(json));
  const fromYaml = await loadTrainConfig(path.join(dir, 'configs', 'a.yaml'));
  const fromJson = await loadTrainConfig(path.join(dir, 'configs', 'a.json'));
  t.same(fromYaml.config, json);
  t.same(fromJson.config, json);
  t.equal(fromYaml.baseDir, path.join(dir, 'configs'), 'baseDir: the file\'s folder');
});

t.test('relative input paths are taken from the config file\'s folder, run.dir from the working directory', async (t) => {
  const dir = t.testdir({ project: { configs: { 'a.yaml': YAML_CONFIG } } });
  const { config, baseDir } = await loadTrainConfig(path.join(dir, 'project', 'configs', 'a.yaml'));
  const resolved = resolveTrainConfig(config, baseDir);
  t.equal(resolved.tasks.kind === 'swe' && resolved.tasks.path, path.join(dir, 'project', 'tasks', 'swe-mini'));
  t.equal(resolved.run.dir, path.resolve('runs/a'));
  // The shipped examples hold paths from their own folder, so they run from anywhere.
  const example = await loadTrainConfig(path.join(ROOT, 'examples', 'swe-bench-rows.yaml'));
  const rows = resolveTrainConfig(example.config, example.baseDir);
  t.equal(rows.tasks.kind === 'swe' && rows.tasks.path, path.join(ROOT, 'test/fixtures/swe-real/rows.jsonl'));
  t.equal(rows.tasks.kind === 'swe' && rows.tasks.repos, path.join(ROOT, 'test/fixtures/swe-real/repos'));
});

t.test('overrides: values read as YAML, nested sections made, ~ removes, paths from the working directory', async (t) => {
  const base = { run: { dir: 'runs/a', steps: 3 }, tasks: { kind: 'swe', path: 'x' }, eval: { every: 2 } };
  const out = applyOverrides(
    base,
    ['run.steps=10', 'optimizer.lr=5e-7', 'run.plots=false', 'algorithm.kl=null', 'tasks.trainSeeds=[0, 1, 2]', 'algorithm.turnPenalty={threshold: 5, maxTurns: 50}', 'tasks.testCommand=pytest -x', 'model.preset="1"', '~eval.every', '+rollout.topK=0', 'tasks.repos=clones', 'run.dir=/abs/run'],
    '/work/here',
  );
  t.same(out, {
    run: { dir: '/abs/run', steps: 10, plots: false },
    tasks: { kind: 'swe', path: 'x', trainSeeds: [0, 1, 2], testCommand: 'pytest -x', repos: '/work/here/clones' },
    eval: {},
    optimizer: { lr: 5e-7 },
    algorithm: { kl: null, turnPenalty: { threshold: 5, maxTurns: 50 } },
    model: { preset: '1' },
    rollout: { topK: 0 },
  });
  t.same(base, { run: { dir: 'runs/a', steps: 3 }, tasks: { kind: 'swe', path: 'x' }, eval: { every: 2 } }, 'the loaded config is not changed');
  t.equal(applyOverrides({}, ['run.dir=out'], '/w').run && (applyOverrides({}, ['run.dir=out'], '/w').run as { dir: string }).dir, '/w/out');
});

t.test('bad overrides and files: errors that name them', async (t) => {
  const bad = (overrides: string[], message: RegExp) => t.throws(() => applyOverrides({ run: { steps: 3 } }, overrides), { code: 'ERR_SWERL_INVALID_ARG', message }, overrides.join(' '));
  bad(['run.steps'], /override "run\.steps" is not key\.path=value \(or ~key\.path to remove a field\); e\.g\. run\.steps=3/);
  bad(['=3'], /is not key\.path=value/);
  bad(['run..steps=3'], /has an empty or reserved name/);
  bad(['__proto__.polluted=1'], /has an empty or reserved name/);
  bad(['run.steps.max=3'], /goes into config\.run\.steps, which is 3, not a section/);
  bad(['run.steps=[1, 2'], /has a value that does not parse/);
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype was touched');

  t.throws(() => parseConfigText('run: {dir: a\n', 'c.yaml'), { message: /^c\.yaml is not valid YAML/ });
  t.throws(() => parseConfigText('run: {dir: a}\nrun: {dir: b}\n', 'c.yaml'), { message: /^c\.yaml is not valid YAML: Map keys must be unique/ }, 'a key given twice is refused');
  t.throws(() => parseConfigText('{\n  "run": {"dir": "a",}\n}', 'c.json'), { message: /^c\.json is not valid JSON at line 2, column/ });
  t.throws(() => parseConfigText('- a\n- b\n', 'c.yaml'), { message: /^c\.yaml must hold an object of sections .*not a list/ });
  await t.rejects(loadTrainConfig('/nonexistent/c.yaml'), { code: 'ERR_SWERL_INVALID_ARG', message: /^the config \/nonexistent\/c\.yaml cannot be read: .*ENOENT.*; give a YAML or JSON file/ });
});

t.test('an unknown section or field names the nearest one and every known one', async (t) => {
  const config = (extra: object) => ({ run: { dir: 'r' }, model: { preset: 'qwen3-tiny' }, tasks: { kind: 'frozenlake' }, rollout: { tasksPerStep: 2, samplesPerTask: 2 }, ...extra });
  t.throws(() => resolveTrainConfig(config({ algoritm: {} })), { message: /^config\.algoritm is not a known section \(did you mean algorithm\?\); known: run, tracking, model, optimizer, tasks, algorithm, rollout, eval, sampler$/ });
  t.throws(() => resolveTrainConfig(config({ optimizer: { learningRate: 1e-5 } })), { message: /^config\.optimizer\.learningRate is not a known option; known: lr, / }, 'no suggestion when nothing is near');
  t.throws(() => resolveTrainConfig(config({ optimizer: { lR: 1e-5 } })), { message: /^config\.optimizer\.lR is not a known option \(did you mean lr\?\)/ });
  t.throws(() => resolveTrainConfig(config({ rollout: { tasksPerStep: 2, samplesPerTask: 2, maxTurn: 3 } })), { message: /^config\.rollout\.maxTurn is not a known option \(did you mean maxTurns\?\); known: tasksPerStep, samplesPerTask, .*maxTurns/ });
  t.throws(() => resolveTrainConfig(config({ run: { dir: 'r', stpes: 3 } })), { message: /^config\.run\.stpes is not a known option \(did you mean steps\?\)/ });
});
