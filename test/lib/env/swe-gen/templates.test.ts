import t from 'tap';

import { SHADOWED_MODULES } from '../../../../lib/env/reward/python-modules.js';
import { BUG_KINDS, candidateBugs } from '../../../../lib/env/swe-gen/bugs.js';
import { sampleCases } from '../../../../lib/env/swe-gen/cases.js';
import { Draw } from '../../../../lib/env/swe-gen/draw.js';
import { docText, instantiate } from '../../../../lib/env/swe-gen/instance.js';
import { functionName, type Stmt } from '../../../../lib/env/swe-gen/program.js';
import { javascript } from '../../../../lib/env/swe-gen/render-javascript.js';
import { python } from '../../../../lib/env/swe-gen/render-python.js';
import { MODULES, TEMPLATES, type Template } from '../../../../lib/env/swe-gen/templates.js';

/** Names a body binds: its assignments and loop variables. */
function locals(body: readonly Stmt[]): string[] {
  return body.flatMap((s): string[] => {
    if (s.k === 'assign') return [s.name];
    if (s.k === 'range' || s.k === 'each') return [s.name, ...locals(s.body)];
    if (s.k === 'if') return locals(s.body);
    return [];
  });
}

/** Every combination of a template's parameter names. */
function* nameChoices(template: Template): Generator<Record<string, string>> {
  const roles = template.params.map((p) => p.role);
  const walk = function* (i: number, chosen: Record<string, string>): Generator<Record<string, string>> {
    if (i === roles.length) return yield { ...chosen };
    for (const name of template.params[i]!.names) yield* walk(i + 1, { ...chosen, [roles[i]!]: name });
  };
  yield* walk(0, {});
}

t.test('every template reads, and no parameter name it can draw clashes with its locals', async (t) => {
  for (const template of TEMPLATES) {
    const instance = instantiate(template, new Draw(1));
    const bound = new Set(locals(instance.def.body));
    let choices = 0;
    for (const choice of nameChoices(template)) {
      choices++;
      const names = Object.values(choice);
      if (new Set(names).size !== names.length) t.fail(`${template.id}: ${names.join(', ')} repeat a name`);
      const clash = names.filter((n) => bound.has(n));
      if (clash.length) t.fail(`${template.id}: parameter name(s) ${clash.join(', ')} are also locals`);
    }
    t.ok(choices > 0, `${template.id}: ${choices} choices of parameter names`);
    for (const renderer of [python, javascript]) t.notMatch(docText(instance, renderer), /[{}]/, `${template.id}: the doc's placeholders are all filled`);
  }
});

t.test('function names are unique across templates; file names shadow no Python module and no function', async (t) => {
  const names = TEMPLATES.flatMap((template) => template.names.map((words) => functionName(words, 'python')));
  t.equal(new Set(names).size, names.length, `${names.length} function names, all different`);
  t.same(MODULES.filter((m) => SHADOWED_MODULES.has(m)), [], 'no module name is a standard library or pytest module');
  t.same(MODULES.filter((m) => names.includes(m)), [], 'no module is named like a function');
  t.equal(new Set(MODULES).size, MODULES.length);
});

t.test('each language: every template can carry a bug, and every kind fits several templates', async (t) => {
  for (const renderer of [python, javascript]) {
    const templatesOfKind = new Map<string, string[]>(BUG_KINDS.map((k) => [k, []]));
    for (const template of TEMPLATES) {
      const instance = instantiate(template, new Draw(7));
      for (const kind of BUG_KINDS) {
        const shown = candidateBugs(instance.def, kind).some((body) => sampleCases(instance, { ...instance.def, body }, renderer, new Draw(3)).failing.length > 0);
        if (shown) templatesOfKind.get(kind)!.push(template.id);
      }
      t.ok(BUG_KINDS.some((kind) => templatesOfKind.get(kind)!.includes(template.id)), `${renderer.language}: ${template.id} carries some bug`);
    }
    for (const [kind, ids] of templatesOfKind) t.ok(ids.length >= 4, `${renderer.language}: ${kind} fits ${ids.length} templates (${ids.join(', ')})`);
  }
});

t.test('an equivalent change is no bug: only changes some input shows are kept', async (t) => {
  // clamp's `x < low: return low` as `x <= low` returns low for x = low either way
  const clamp = instantiate(TEMPLATES.find((x) => x.id === 'clamp')!, new Draw(1));
  const low = clamp.def.params[1]!.name;
  const comparisons = candidateBugs(clamp.def, 'comparison');
  const equivalent = comparisons.find((body) => python.source([{ ...clamp.def, body }]).includes(`<= ${low}: return ${low}`))!;
  t.ok(equivalent, 'the candidate exists');
  t.same(sampleCases(clamp, { ...clamp.def, body: equivalent }, python, new Draw(1)).failing, [], 'and no input shows it');
  // last's missing guard: Python raises IndexError on [], JavaScript's xs[-1] is undefined, as the guard returns
  const last = instantiate(TEMPLATES.find((x) => x.id === 'last')!, new Draw(1));
  const [unguarded] = candidateBugs(last.def, 'missing-case');
  t.match(sampleCases(last, { ...last.def, body: unguarded! }, python, new Draw(1)).failing[0], { got: { ok: false, error: 'IndexError' }, gotText: 'raises IndexError', expectedText: 'None' });
  t.same(sampleCases(last, { ...last.def, body: unguarded! }, javascript, new Draw(1)).failing, [], 'JavaScript: no bug');
});
