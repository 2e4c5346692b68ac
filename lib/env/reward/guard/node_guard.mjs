// swerl's grading guard for node's test runner (lib/env/reward/guard.ts installs it; docs/swe-env.md).
//
// Preloaded at grading only (NODE_OPTIONS=--import <this file, outside the work tree>) into every
// node process of the test command; it acts in each process where tests and the code under test
// run: `node --test`'s test processes (one a file, NODE_TEST_CONTEXT set), or a test file run
// directly (`node --test-reporter=tap file`, swe-gen's command: one process, half the CPU), and
// not in `node --test`'s own runner, which only starts and reads the others. There it wraps
// node:test's test/it/describe/suite before any test file is loaded, records each test's outcome
// from the call itself (whether its function threw or rejected), and checks at exit that
// node:test's exports and node:assert's functions are the ones it saw, noting process.exit,
// process.abort and module.register called from the repository's non-test source.
//
// Each record line is JSON after an HMAC-SHA256 of it under a key given in the environment (taken
// out of process.env at load), so lines the code under test appends to the record are told apart.
// This raises the bar for code in the same process; it is not a wall against code that goes
// looking for the guard (swerl's static look at the patch flags such code).
import { createHmac } from 'node:crypto';
import { openSync, realpathSync, writeSync } from 'node:fs';
import module, { createRequire, syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const key = process.env.SWERL_GUARD_KEY;
const recordPath = process.env.SWERL_GUARD_RECORD;
const root = process.env.SWERL_GUARD_ROOT;

const TEST_DIRS = new Set(['test', 'tests', 'testing', '__tests__']);
const isTestFile = (rel) => /(^|[./_-])(test|spec)\.[cm]?[jt]s$/.test(path.basename(rel)) || /^test[._-]/.test(path.basename(rel)) || rel.split(path.sep).some((part) => TEST_DIRS.has(part));

/**
 * A test file of the repository run directly (`node --test-reporter=tap test/x.test.js`): its
 * one process runs the tests. Not a wrapper (npm, a repository script) that starts a runner:
 * installed there, the guard would take its key out of the environment the test processes get.
 */
function directTestRun() {
  const main = process.argv[1];
  if (!main || process.execArgv.includes('--test')) return false;
  try {
    const [realRoot, realMain] = [realpathSync(root), realpathSync(main)];
    return realMain.startsWith(realRoot + path.sep) && isTestFile(path.relative(realRoot, realMain));
  } catch {
    return false;
  }
}

if (key && recordPath && root && (process.env.NODE_TEST_CONTEXT !== undefined || directTestRun())) install();

function install() {
  for (const name of ['SWERL_GUARD_KEY', 'SWERL_GUARD_RECORD', 'SWERL_GUARD_ROOT']) delete process.env[name];
  const require = createRequire(import.meta.url);
  const here = fileURLToPath(import.meta.url);
  const realRoot = realpathSync(root);
  const fd = openSync(recordPath, 'a', 0o600);
  // Bound now: later patches of JSON, crypto or fs do not reach the guard's writes.
  const [stringify, makeHmac, writeText] = [JSON.stringify, createHmac, writeSync];
  const hmac = (body) => makeHmac('sha256', key).update(body).digest('hex');
  const write = (text) => writeText(fd, text);
  const emit = (kind, fields = {}) => {
    const body = stringify(Object.fromEntries(Object.entries({ ...fields, kind }).sort(([a], [b]) => (a < b ? -1 : 1))));
    write(`${hmac(body)} ${body}\n`);
  };
  const tampered = new Set();
  const tamper = (what) => {
    if (tampered.has(what)) return;
    tampered.add(what);
    emit('tamper', { what });
  };

  /** 'file:line' when the direct caller (past this file) is the repository's non-test source. */
  const calledFromSource = () => {
    const frames = (new Error().stack ?? '').split('\n').slice(1);
    for (const frame of frames) {
      const m = /\(?((?:file:\/\/)?\/[^():]+):(\d+):\d+\)?\s*$/.exec(frame);
      if (!m) continue;
      const file = m[1].startsWith('file://') ? fileURLToPath(m[1]) : m[1];
      if (file === here) continue;
      let real;
      try {
        real = realpathSync(file);
      } catch {
        real = file;
      }
      if (!(real === realRoot || real.startsWith(realRoot + path.sep))) return null;
      const rel = path.relative(realRoot, real);
      return isTestFile(rel) ? null : `${rel}:${m[2]}`;
    }
    return null;
  };

  // -- node:test, wrapped: each test's function records how it ended ----------------------------
  const nodeTest = require('node:test');
  const suites = [];
  let counted = 0;
  const record = (id, verdict) => {
    counted++;
    emit('test', { id, verdict });
  };
  /** fn, recording its outcome under `id`; a callback-style fn (done) keeps its arity. */
  const recorded = (fn, id) => {
    const wrapped = function (t, ...rest) {
      if (t && typeof t.test === 'function') wrapContext(t, id);
      if (fn.length >= 2 && typeof rest[0] === 'function') {
        const done = rest[0];
        rest[0] = (error, ...more) => {
          record(id, error ? 'failed' : 'passed');
          return done(error, ...more);
        };
      }
      let result;
      try {
        result = fn.call(this, t, ...rest);
      } catch (error) {
        record(id, 'failed');
        throw error;
      }
      if (fn.length >= 2) return result;
      if (result && typeof result.then === 'function') {
        return result.then(
          (value) => (record(id, 'passed'), value),
          (error) => {
            record(id, 'failed');
            throw error;
          },
        );
      }
      record(id, 'passed');
      return result;
    };
    Object.defineProperty(wrapped, 'length', { value: fn.length });
    return wrapped;
  };
  /** The name node gives a test: its name argument, else its function's name. */
  const nameOf = (args) => (typeof args[0] === 'string' ? args[0] : args.find((a) => typeof a === 'function')?.name || '<anonymous>');
  const registerTest = (orig, prefix) =>
    function (...args) {
      const id = [...prefix(), nameOf(args)].join(' > ');
      return orig.apply(this, args.map((a) => (typeof a === 'function' ? recorded(a, id) : a)));
    };
  // A suite's body only declares its tests: it is recorded as passed when the body returns (the
  // log calls a suite passing only when its tests pass, and those are held to their own records).
  const registerSuite = (orig) =>
    function (...args) {
      const name = nameOf(args);
      const id = [...suites, name].join(' > ');
      return orig.apply(this, args.map((a) => {
        if (typeof a !== 'function') return a;
        const body = a;
        return function (...inner) {
          suites.push(name);
          let popped = false;
          const end = (verdict) => {
            if (!popped) suites.splice(suites.lastIndexOf(name), 1);
            popped = true;
            record(id, verdict);
          };
          try {
            const result = body.apply(this, inner);
            if (result && typeof result.then === 'function') return result.then((value) => (end('passed'), value), (error) => (end('failed'), Promise.reject(error)));
            end('passed');
            return result;
          } catch (error) {
            end('failed');
            throw error;
          }
        };
      }));
    };
  const withVariants = (wrapped, orig, wrapVariant) => {
    for (const variant of ['skip', 'todo', 'only']) if (typeof orig[variant] === 'function') wrapped[variant] = wrapVariant(orig[variant]);
    return wrapped;
  };
  const wrapContext = (t, parentId) => {
    const orig = t.test;
    t.test = registerTest(orig.bind(t), () => [parentId]);
  };
  const top = () => [...suites];
  for (const name of ['test', 'it']) {
    const orig = nodeTest[name];
    if (typeof orig === 'function') nodeTest[name] = withVariants(registerTest(orig, top), orig, (v) => registerTest(v, top));
  }
  for (const name of ['describe', 'suite']) {
    const orig = nodeTest[name];
    if (typeof orig === 'function') nodeTest[name] = withVariants(registerSuite(orig), orig, (v) => registerSuite(v));
  }
  syncBuiltinESMExports();

  // -- exits and loader hooks from source -------------------------------------------------------
  // (process.reallyExit is node's own to replace; called directly it skips 'exit', and the
  // missing end of this process's record gives it away.)
  for (const name of ['exit', 'abort']) {
    const orig = process[name];
    if (typeof orig !== 'function') continue;
    process[name] = function (...args) {
      const where = calledFromSource();
      if (where) tamper(`process.${name} called from ${where}`);
      return orig.apply(this, args);
    };
  }
  if (typeof module.register === 'function') {
    const origRegister = module.register;
    module.register = function (...args) {
      const where = calledFromSource();
      if (where) tamper(`module.register called from ${where}`);
      return origRegister.apply(this, args);
    };
  }

  // -- the snapshot, checked at exit --------------------------------------------------------------
  const watched = { 'node:test': nodeTest, 'node:assert': require('node:assert'), 'node:assert/strict': require('node:assert/strict') };
  const snapshot = new Map();
  for (const [name, exports] of Object.entries(watched)) {
    for (const prop of Object.getOwnPropertyNames(exports)) snapshot.set(`${name}.${prop}`, [exports, prop, exports[prop]]);
  }
  const watchedExits = { exit: process.exit, abort: process.abort };
  emit('start', { pid: process.pid, runner: 'node', version: process.version });
  process.on('exit', () => {
    const changed = [...snapshot].filter(([, [exports, prop, value]]) => exports[prop] !== value).map(([what]) => what);
    for (const [name, value] of Object.entries(watchedExits)) if (process[name] !== value) changed.push(`process.${name}`);
    for (const what of changed.slice(0, 5)) tamper(`the runner was changed: ${what}`);
    emit('end', { pid: process.pid, tests: counted });
  });
}
