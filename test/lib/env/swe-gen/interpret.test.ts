/**
 * The interpreter against the real languages: every template, every bug of every kind that
 * can go in it, run on drawn inputs by the interpreter and by /usr/bin/python3 and node (the
 * renderers' source, the call as the tests write it). Expected values, the issue's "got" and
 * which inputs show a bug all rest on these agreeing.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import { BUG_KINDS, candidateBugs } from '../../../../lib/env/swe-gen/bugs.js';
import { Draw } from '../../../../lib/env/swe-gen/draw.js';
import { drawArgs, instantiate } from '../../../../lib/env/swe-gen/instance.js';
import { callFunction } from '../../../../lib/env/swe-gen/interpret.js';
import type { FunctionDef, Language } from '../../../../lib/env/swe-gen/program.js';
import { javascript } from '../../../../lib/env/swe-gen/render-javascript.js';
import { python } from '../../../../lib/env/swe-gen/render-python.js';
import { TEMPLATES } from '../../../../lib/env/swe-gen/templates.js';
import { Unportable, type Outcome, type Value } from '../../../../lib/env/swe-gen/values.js';

interface Call {
  fn: string;
  text: string;
  predicted: Outcome;
}

/** Every template twice (different names and constants), each with all its bugs: functions f0, f1, … */
function corpus(language: Language): { defs: FunctionDef[]; calls: Call[] } {
  const renderer = language === 'python' ? python : javascript;
  const defs: FunctionDef[] = [];
  const calls: Call[] = [];
  TEMPLATES.forEach((template, ti) => {
    for (const copy of [0, 1]) {
      const draw = new Draw(1000 * ti + copy);
      const instance = instantiate(template, draw);
      const bodies = [instance.def.body, ...BUG_KINDS.flatMap((kind) => candidateBugs(instance.def, kind))];
      for (const body of bodies) {
        const def: FunctionDef = { ...instance.def, words: ['f', String(defs.length)], body };
        defs.push(def);
        const fn = language === 'python' ? `f_${defs.length - 1}` : `f${defs.length - 1}`;
        for (let i = 0; i < 6; i++) {
          const args = drawArgs(instance, draw);
          try {
            calls.push({ fn, text: renderer.call(fn, args), predicted: callFunction(def, args, language) });
          } catch (error) {
            if (!(error instanceof Unportable)) throw error;
          }
        }
      }
    }
  });
  return { defs, calls };
}

const PY_DRIVER = `
import json, sys
sys.path.insert(0, sys.argv[1])
import generated
def enc(v):
    if v is None: return {"t": "none"}
    if isinstance(v, bool): return {"t": "bool", "v": v}
    if isinstance(v, int): return {"t": "num", "v": str(v), "float": False}
    if isinstance(v, float): return {"t": "num", "v": repr(v), "float": True}
    if isinstance(v, list): return {"t": "list", "v": [enc(x) for x in v]}
    return {"t": "other", "v": repr(v)}
for line in open(sys.argv[2]):
    try:
        out = {"ok": True, "value": enc(eval(line, vars(generated)))}
    except Exception as e:
        out = {"ok": False, "error": type(e).__name__}
    print(json.dumps(out))
`;

const JS_DRIVER = `
import { readFileSync } from 'node:fs';
const mod = await import(process.argv[2] + '/generated.js');
const enc = (v) => v === undefined ? { t: 'none' } : typeof v === 'boolean' ? { t: 'bool', v }
  : typeof v === 'number' ? { t: 'num', v: Object.is(v, -0) ? '-0' : String(v), float: false }
  : Array.isArray(v) ? { t: 'list', v: v.map(enc) } : { t: 'other', v: String(v) };
const run = new Function(...Object.keys(mod), 'line', 'return eval(line)');
for (const line of readFileSync(process.argv[3], 'utf8').split('\\n').filter(Boolean)) {
  let out;
  try { out = { ok: true, value: enc(run(...Object.values(mod), line)) }; }
  catch (e) { out = { ok: false, error: e.name }; }
  console.log(JSON.stringify(out));
}
`;

/** The interpreter's outcome in the drivers' encoding (numbers as the language prints them). */
function encode(outcome: Outcome, language: Language): unknown {
  if (!outcome.ok) return outcome;
  const value = (v: Value): unknown => {
    if (v.t === 'num') {
      if (language === 'javascript') return { t: 'num', v: Object.is(v.v, -0) ? '-0' : String(v.v), float: false };
      return { t: 'num', v: v.float ? (Number.isInteger(v.v) ? `${v.v}.0` : String(v.v)) : String(v.v), float: v.float };
    }
    if (v.t === 'list') return { t: 'list', v: v.v.map(value) };
    return v;
  };
  return { ok: true, value: value(outcome.value) };
}

for (const language of ['python', 'javascript'] as const) {
  t.test(`the interpreter agrees with ${language === 'python' ? '/usr/bin/python3' : 'node'} on every template and bug`, async (t) => {
    const dir = t.testdir();
    const { defs, calls } = corpus(language);
    const renderer = language === 'python' ? python : javascript;
    writeFileSync(path.join(dir, language === 'python' ? 'generated.py' : 'generated.js'), renderer.source(defs));
    writeFileSync(path.join(dir, 'calls.txt'), calls.map((c) => c.text).join('\n') + '\n');
    let output: string;
    if (language === 'python') {
      writeFileSync(path.join(dir, 'driver.py'), PY_DRIVER);
      output = execFileSync('/usr/bin/python3', [path.join(dir, 'driver.py'), dir, path.join(dir, 'calls.txt')], { encoding: 'utf8' });
    } else {
      writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}\n');
      writeFileSync(path.join(dir, 'driver.js'), JS_DRIVER);
      output = execFileSync(process.execPath, [path.join(dir, 'driver.js'), dir, path.join(dir, 'calls.txt')], { encoding: 'utf8' });
    }
    const actual = output.trim().split('\n').map((line) => JSON.parse(line) as unknown);
    t.equal(actual.length, calls.length, 'one result per call');
    const wrong = calls.filter((c, i) => JSON.stringify(encode(c.predicted, language)) !== JSON.stringify(actual[i]));
    t.same(
      wrong.slice(0, 5).map((c) => ({ call: c.text, predicted: encode(c.predicted, language), actual: actual[calls.indexOf(c)] })),
      [],
      `all ${calls.length} calls of ${defs.length} functions agree`,
    );
    const errors = new Set(calls.filter((c) => !c.predicted.ok).map((c) => (c.predicted as { error: string }).error));
    t.ok(calls.length > 1000, `${calls.length} calls`);
    // where Python raises, JavaScript computes NaN, Infinity or undefined (no template reads a property of undefined)
    t.same([...errors].sort(), language === 'python' ? ['IndexError', 'TypeError', 'ZeroDivisionError'] : [], 'the errors the language raises are among them');
    if (language === 'javascript') {
      const strange = new Set(calls.flatMap((c) => (c.predicted.ok && c.predicted.value.t === 'num' && !Number.isFinite(c.predicted.value.v) ? [String(c.predicted.value.v)] : [])));
      t.same([...strange].sort(), ['Infinity', 'NaN'], 'NaN and Infinity are among them');
      t.ok(calls.some((c) => c.predicted.ok && c.predicted.value.t === 'none'), 'and undefined');
    }
  });
}
