/**
 * The package installs (issue 19): what a new user does, from the packed tarball.
 *
 *   npm pack (of this checkout, prepare included) → a fresh project in the tmpdir (npm init -y,
 *   type module) → npm install <the tarball>, which builds the addon from source (the package's
 *   install script: cmake-js compile) → npx swerl --help, a one-step swerl train on the bundled
 *   swe-mini tasks, and the programs of the README and of the guide pages (docs/), run as written.
 *
 * The README's programs are the ```ts / ```js blocks right after a `<!-- program -->` line
 * (anything may follow the word: `<!-- program: runs as written in test/package -->`). Each
 * is a whole ES module run from the project's root with `swerl` installed: it is type-checked
 * against the installed package's declarations, then run, and must exit 0.
 *
 * The addon build is the cost: with ccache (scripts/setup-debian.sh installs it, CMakeLists.txt
 * uses it) the objects of `npm ci` in the checkout serve the install here.
 *
 * Nothing here may lean on the checkout: the project lives in the tmpdir (no node_modules
 * above it), the install is a copy from the tarball (no link), the commands run with the
 * checkout's npm and PATH entries removed, and the addon's CMake cache must not name it.
 * Only the test's own tools come from the checkout: npm's cache, and TypeScript with
 * @types/node to check the README's programs.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import t from 'tap';
import ts from 'typescript';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

t.setTimeout(30 * 60_000); // a cold addon build on a busy 2-core machine; with ccache about a minute

/** The environment of a user's shell: none of npm's or tap's variables, no PATH into the checkout. */
function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_|INIT_CWD$|NODE_OPTIONS$|NODE_V8_COVERAGE$|TAP|_TAPJS)/i.test(key)) continue;
    env[key] = value;
  }
  env.PATH = (process.env.PATH ?? '').split(path.delimiter).filter((dir) => dir && !path.resolve(dir).startsWith(ROOT + path.sep)).join(path.delimiter);
  return env;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  seconds: number;
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = userEnv()): Promise<Run> {
  const started = performance.now();
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => {
    child.on('error', (error) => resolve({ code: -1, stdout, stderr: stderr + error.message, seconds: 0 }));
    child.on('close', (code) => resolve({ code, stdout, stderr, seconds: (performance.now() - started) / 1000 }));
  });
}

const NPM_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund'];
const tail = (text: string, lines = 40) => text.trimEnd().split('\n').slice(-lines).join('\n');
const timings: string[] = [];

const work = mkdtempSync(path.join(os.tmpdir(), 'swerl-package-'));
t.teardown(() => rmSync(work, { recursive: true, force: true }));
const staging = path.join(work, 'checkout');
const project = path.join(work, 'project');
const installed = path.join(project, 'node_modules/swerl');

/**
 * npm pack, as in the checkout but without writing to it (other tests read its files while
 * this one runs): the checkout's files as a fresh clone has them, uncommitted changes included,
 * its node_modules linked in for the prepare script (tsc), and npm pack there.
 */
async function pack(): Promise<string> {
  const listed = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], ROOT);
  if (listed.code !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  for (const file of new Set(listed.stdout.split('\0').filter((f) => f && f.split('/')[0] !== 'node_modules'))) {
    const from = path.join(ROOT, file);
    if (!existsSync(from) && !lstatSync(from, { throwIfNoEntry: false })) continue; // deleted, not yet committed
    const to = path.join(staging, file);
    mkdirSync(path.dirname(to), { recursive: true });
    if (lstatSync(from).isSymbolicLink()) symlinkSync(readlinkSync(from), to);
    else copyFileSync(from, to);
  }
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(staging, 'node_modules'));
  const r = await run('npm', ['pack', '--json', '--pack-destination', work], staging);
  if (r.code !== 0) throw new Error(`npm pack failed (${r.code}):\n${tail(r.stderr)}`);
  timings.push(`npm pack (prepare: tsc) ${r.seconds.toFixed(1)} s`);
  const [{ filename }] = JSON.parse(r.stdout.slice(r.stdout.indexOf('['))) as { filename: string }[];
  return path.join(work, filename);
}

let tarball = '';
let install: Run | undefined;

t.before(async () => {
  tarball = await pack();
  mkdirSync(project);
  for (const args of [['init', '-y'], ['pkg', 'set', 'type=module']]) {
    const r = await run('npm', args, project);
    if (r.code !== 0) throw new Error(`npm ${args.join(' ')} failed: ${r.stderr}`);
  }
  install = await run('npm', ['install', tarball, ...NPM_FLAGS], project);
  timings.push(`npm install <tarball> (the addon's build from source) ${install.seconds.toFixed(1)} s`);
});

t.teardown(() => {
  // The numbers this test exists to keep small, in the log of every run.
  if (timings.length) t.comment(timings.join('; '));
});

t.test('npm install <the tarball> builds the addon into a copy that needs nothing of the checkout', (t) => {
  t.equal(install!.code, 0, 'npm install exits 0', { stderr: tail(install!.stderr, 80) });
  t.notOk(lstatSync(installed).isSymbolicLink(), 'node_modules/swerl is a copy, not a link');
  t.equal(realpathSync(installed), path.join(realpathSync(project), 'node_modules/swerl'));
  t.match(JSON.parse(readFileSync(path.join(project, 'package.json'), 'utf8')).dependencies, { swerl: /^file:.*\.tgz$/ });
  t.ok(existsSync(path.join(installed, 'build/Release/swerl_native.node')), 'the addon was built in the installed package');
  const cmakeCache = readFileSync(path.join(installed, 'build/CMakeCache.txt'), 'utf8');
  t.notOk(cmakeCache.includes(ROOT), 'the addon build names no path of the checkout');
  for (const shipped of ['tasks/swe-mini', 'examples/swe-mini.json', 'examples/frozenlake.json', 'dist/lib/index.js', 'dist/lib/index.d.ts', 'dist/lib/env/sandbox/spawner-helper.mjs', 'dist/lib/env/sandbox/start-child.mjs', 'models/swe-reader/model.safetensors', 'models/swe-reader/tokenizer.json', 'models/swe-agent/model.safetensors', 'models/swe-agent/tokenizer.json', 'README.md', 'docs/training.md', 'lib/env/reward/guard/pytest_guard.py', 'lib/env/reward/guard/node_guard.mjs'])
    t.ok(existsSync(path.join(installed, shipped)), `the package ships ${shipped}`);
  t.end();
});

t.test('npx swerl --help', async (t) => {
  const r = await run('npx', ['swerl', '--help'], project);
  timings.push(`npx swerl --help ${r.seconds.toFixed(1)} s`);
  t.equal(r.code, 0, 'exits 0', { stderr: r.stderr });
  t.match(r.stdout, /usage/i, 'prints the usage');
  t.match(r.stdout, /\btrain\b/, 'which names the train command');
});

/** The README's programs (see the top of this file), from the README that ships. */
function readmePrograms(readme: string): { lang: string; code: string; line: number }[] {
  const found: { lang: string; code: string; line: number }[] = [];
  const pattern = /^<!--\s*program\b[^\n]*?-->[ \t]*\n```(ts|js|typescript|javascript)[ \t]*\n([\s\S]*?)^```[ \t]*$/gm;
  for (let m; (m = pattern.exec(readme)); ) found.push({ lang: m[1]!.startsWith('t') ? 'ts' : 'js', code: m[2]!, line: readme.slice(0, m.index).split('\n').length + 2 });
  return found;
}

/** Type-checks the programs as a TypeScript user's project would, against the installed declarations. */
function typecheck(files: string[]): string[] {
  const program = ts.createProgram(files, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    allowJs: true,
    checkJs: false,
    types: ['node'],
    typeRoots: [path.join(ROOT, 'node_modules/@types')],
  });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file && d.start !== undefined ? `${path.basename(d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}: ` : '';
    return where + ts.flattenDiagnosticMessageText(d.messageText, '\n');
  });
}

t.test('swerl train: one step on the bundled swe-mini tasks, and the README\'s programs, as written', async (t) => {
  // The config a user makes from the shipped example: one step, no eval, small rollouts.
  const example = JSON.parse(readFileSync(path.join(installed, 'examples/swe-mini.json'), 'utf8'));
  const config = {
    ...example,
    run: { ...example.run, dir: 'runs/one-step', steps: 1, progress: 'none' },
    tasks: { ...example.tasks, path: 'node_modules/swerl/tasks/swe-mini' },
    rollout: { ...example.rollout, tasksPerStep: 1, samplesPerTask: 2, concurrency: 2, maxTurns: 1, maxTokensPerTurn: 16 },
    eval: { every: 0 },
  };
  writeFileSync(path.join(project, 'one-step.json'), JSON.stringify(config, null, 2));
  const training = run('npx', ['swerl', 'train', 'one-step.json'], project);

  // The README's programs and the guide pages' (docs/*.md), from the package as it ships.
  const pages = ['README.md', ...readdirSync(path.join(installed, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)];
  const programs = pages.flatMap((page) => readmePrograms(readFileSync(path.join(installed, page), 'utf8')).map((p) => ({ ...p, page })));
  t.ok(programs.filter((p) => p.page === 'README.md').length > 0, 'the README marks its programs (a "<!-- program -->" line right before a ```ts block)');
  const files = programs.map((p, i) => {
    const file = path.join(project, `readme-${i + 1}.${p.lang === 'ts' ? 'mts' : 'mjs'}`);
    writeFileSync(file, p.code);
    return file;
  });
  const diagnostics = files.length ? typecheck(files) : [];
  t.same(diagnostics, [], 'the programs type-check against the installed package');
  const runs = await Promise.all(
    programs.map((p, i) => {
      const source = ts.transpileModule(p.code, { compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext } }).outputText;
      const file = path.join(project, `readme-${i + 1}.mjs`);
      writeFileSync(file, source);
      return run(process.execPath, [file], project);
    }),
  );
  runs.forEach((r, i) => {
    timings.push(`${programs[i]!.page} program at line ${programs[i]!.line} ${r.seconds.toFixed(1)} s`);
    t.equal(r.code, 0, `${programs[i]!.page}'s program at line ${programs[i]!.line} runs as written`, { stdout: tail(r.stdout), stderr: tail(r.stderr) });
  });

  const r = await training;
  timings.push(`swerl train (1 step) ${r.seconds.toFixed(1)} s`);
  t.equal(r.code, 0, 'swerl train exits 0', { stdout: tail(r.stdout), stderr: tail(r.stderr) });
  const dir = path.join(project, 'runs/one-step');
  const steps = existsSync(path.join(dir, 'metrics.jsonl'))
    ? readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line).step)
    : [];
  t.ok(steps.includes(1), 'metrics.jsonl has step 1', { steps });
  t.ok(existsSync(path.join(dir, 'checkpoints/step-1')), 'the step was checkpointed');
});
