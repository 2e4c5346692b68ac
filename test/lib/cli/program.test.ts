/**
 * The command line as a person meets it: --help on every verb and sub-verb, --version, a
 * mistyped verb or flag answered with the usage and a suggestion (exit 2). Most cases run the
 * program in process (what it prints and the exit code it resolves with); the last runs the
 * real `swerl` process, as a shell does.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import { ROOT, runSwerl } from '../../support/child-process.js';
import { cliInProcess as cli } from '../../support/cli-in-process.js';

const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;


const VERBS: [string[], RegExp][] = [
  [[], /Usage: swerl \[options\] \[command\]/],
  [['train'], /Usage: swerl train \[options\] <config> \[overrides\.\.\.\]/],
  [['eval'], /Usage: swerl eval \[options\][\s\S]*--tasks <path>/],
  [['serve'], /Usage: swerl serve \[options\] <model-dir>[\s\S]*--port <n>/],
  [['view'], /Usage: swerl view \[options\] <dirs\.\.\.>[\s\S]*--port <n>/],
  [['tasks'], /Usage: swerl tasks \[options\] \[command\][\s\S]*validate[\s\S]*filter/],
  [['tasks', 'validate'], /Usage: swerl tasks validate \[options\] <path>[\s\S]*--runs <n>/],
  [['tasks', 'filter'], /Usage: swerl tasks filter \[options\] <rows>[\s\S]*--out <file>/],
  [['sandbox'], /Usage: swerl sandbox \[options\] \[command\][\s\S]*reap/],
  [['sandbox', 'reap'], /Usage: swerl sandbox reap \[options\][\s\S]*--label <label>/],
];

t.test('--help and -h on every verb and sub-verb: exit 0 with its usage', async (t) => {
  for (const [verb, usage] of VERBS) {
    for (const flag of ['--help', '-h']) {
      const r = await cli(...verb, flag);
      t.equal(r.code, 0, `swerl ${[...verb, flag].join(' ')} exits 0`);
      t.match(r.stdout, usage, `swerl ${[...verb, flag].join(' ')} prints its usage`);
      t.equal(r.stderr, '', 'nothing on stderr');
    }
  }
  const bare = await cli();
  t.equal(bare.code, 0, 'swerl alone prints the usage');
  t.match(bare.stdout, /Commands:[\s\S]*train[\s\S]*eval[\s\S]*serve[\s\S]*view[\s\S]*tasks[\s\S]*sandbox/);
  const help = await cli('help', 'train');
  t.equal(help.code, 0);
  t.match(help.stdout, /Usage: swerl train/, 'swerl help train');
});

t.test('--version and -V print the package version', async (t) => {
  for (const flag of ['--version', '-V']) {
    const r = await cli(flag);
    t.equal(r.code, 0);
    t.equal(r.stdout.trim(), VERSION);
  }
});

t.test('a mistyped flag or verb: exit 2, the verb\'s usage and a suggestion', async (t) => {
  const flag = await cli('train', 'config.yaml', '--stpes', '3');
  t.equal(flag.code, 2);
  t.match(flag.stderr, /^swerl: unknown option '--stpes'\n\(Did you mean --steps\?\)/);
  t.match(flag.stderr, /Usage: swerl train \[options\] <config>/, 'the verb\'s usage follows');
  const evalFlag = await cli('eval', '--taks', 'x');
  t.equal(evalFlag.code, 2);
  t.match(evalFlag.stderr, /Did you mean --tasks\?/);
  const sub = await cli('tasks', 'validate', 'x', '--rusn', '2');
  t.equal(sub.code, 2);
  t.match(sub.stderr, /Did you mean --runs\?[\s\S]*Usage: swerl tasks validate/);
  const verb = await cli('trian', 'x.yaml');
  t.equal(verb.code, 2);
  t.match(verb.stderr, /unknown command 'trian'\n\(Did you mean train\?\)/);
  const subVerb = await cli('tasks', 'validat', 'x');
  t.equal(subVerb.code, 2);
  t.match(subVerb.stderr, /Did you mean validate\?/);
});

t.test('bad values and missing arguments: exit 2 naming the flag', async (t) => {
  const runs = await cli('tasks', 'validate', 'x', '--runs', 'two');
  t.equal(runs.code, 2);
  t.match(runs.stderr, /--runs is "two"; give a positive integer/);
  const sandbox = await cli('tasks', 'validate', 'x', '--sandbox', 'vm');
  t.equal(sandbox.code, 2);
  t.match(sandbox.stderr, /argument 'vm' is invalid\. Allowed choices are local, docker/);
  const missing = await cli('train');
  t.equal(missing.code, 2);
  t.match(missing.stderr, /missing required argument 'config'/);
  const extra = await cli('sandbox', 'reap', 'everything');
  t.equal(extra.code, 2);
  t.match(extra.stderr, /too many arguments/);
  const port = await cli('serve', 'model', '--port', '-1');
  t.equal(port.code, 2);
  t.match(port.stderr, /--port is "-1"; give an integer >= 0/);
  const out = await cli('tasks', 'filter', 'rows.jsonl');
  t.equal(out.code, 2);
  t.match(out.stderr, /required option '--out <file>' not specified/);
});

t.test('an error of a verb\'s arguments found after parsing points at its --help', async (t) => {
  const r = await cli('eval', '--tasks', 'tasks/swe-mini');
  t.equal(r.code, 2);
  t.match(r.stderr, /^swerl: give exactly one of --policy, --model, --server and --predictions\n\(swerl eval --help shows its usage\)/);
  const config = await cli('train', path.join(ROOT, 'examples/frozenlake.json'), 'rollout.samplesPerTsk=3', '--print-config');
  t.equal(config.code, 2);
  t.match(config.stderr, /config\.rollout\.samplesPerTsk is not a known option \(did you mean samplesPerTask\?\); known: tasksPerStep, samplesPerTask/);
});

t.test('the real process: exit codes and streams as a shell sees them', async (t) => {
  const version = await runSwerl(['--version']);
  t.equal(version.code, 0);
  t.equal(version.stdout.trim(), VERSION);
  const typo = await runSwerl(['train', 'x.yaml', '--stpes', '3']);
  t.equal(typo.code, 2, 'a usage error exits 2');
  t.match(typo.stderr, /Did you mean --steps\?/);
  t.equal(typo.stdout, '', 'errors go to stderr');
  const help = await runSwerl(['tasks', 'filter', '--help']);
  t.equal(help.code, 0);
  t.match(help.stdout, /--max-solve-rate <x>/);
});

t.test('swerl view: serves the page on loopback until Ctrl-C', async (t) => {
  const { spawnTs, waitForExit, waitForLine } = await import('../../support/child-process.js');
  const run = t.testdir({ 'metrics.jsonl': `${JSON.stringify({ step: 1, reward: { mean: 0.5 } })}\n`, 'config.json': '{}' });
  const child = spawnTs(path.join(ROOT, 'lib/cli.ts'), {}, ['view', run, '--port', '0']);
  const [, url] = await waitForLine(child, /swerl view: (http:\/\/127\.0\.0\.1:\d+\/) \(Ctrl-C stops\)/);
  const page = await fetch(url!);
  t.equal(page.status, 200);
  t.match(await page.text(), /<html/i);
  child.kill('SIGINT');
  t.match(await waitForExit(child), { code: 0 }, 'Ctrl-C: exit 0');
  const missing = await cli('view', path.join(run, 'nope'));
  t.equal(missing.code, 2, 'a folder that is not there: a usage error');
});
