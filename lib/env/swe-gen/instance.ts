/** A template made concrete by a seed: its name, parameter names and constants drawn. */
import type { Draw } from './draw.js';
import { parseBody } from './parse.js';
import type { FunctionDef } from './program.js';
import type { Renderer } from './renderer.js';
import type { ParamSpec, Template } from './templates.js';
import { int, type Value } from './values.js';
import { internalError } from '../../errors.js';

export interface FunctionInstance {
  template: Template;
  /** The function as it should be (bugs are made from it). */
  def: FunctionDef;
  /** Each parameter role's drawn name. */
  names: Record<string, string>;
  consts: Record<string, number>;
}

const IDENTIFIER = /\b[A-Za-z_]\w*\b/g;

export function instantiate(template: Template, draw: Draw): FunctionInstance {
  const words = [...draw.pick(template.names)];
  const names: Record<string, string> = {};
  const chosen: Record<string, number> = {};
  for (const p of template.params) {
    chosen[p.role] = p.pairedWith !== undefined ? chosen[p.pairedWith]! : draw.int(0, p.names.length - 1);
    names[p.role] = p.names[chosen[p.role]!]!;
  }
  const consts: Record<string, number> = {};
  for (const [name, [min, max]] of Object.entries(template.consts ?? {})) consts[name] = draw.int(min, max);
  // one pass, so a drawn name is never renamed again
  const text = template.body.replace(/\{(\w+)\}/g, (_, c: string) => String(consts[c])).replace(IDENTIFIER, (w) => names[w] ?? w);
  const def: FunctionDef = {
    words,
    params: template.params.map((p) => ({ name: names[p.role]!, type: p.type, optional: p.optional ?? false })),
    body: parseBody(text),
  };
  return { template, def, names, consts };
}

function drawParam(spec: ParamSpec, draw: Draw): Value {
  if (spec.type === 'num') return int(draw.int(spec.min, spec.max));
  const length = draw.int(spec.minLength ?? 0, spec.maxLength ?? 5);
  return { t: 'list', v: Array.from({ length }, () => int(draw.int(spec.min, spec.max))) };
}

/** Arguments for one call; an optional last parameter is left out a third of the time. */
export function drawArgs(instance: FunctionInstance, draw: Draw): Value[] {
  const args = instance.template.params.map((p) => drawParam(p, draw));
  const last = instance.template.params[args.length - 1];
  if (last?.optional && draw.chance(1 / 3)) args.pop();
  return args;
}

/** What the function should do, in the renderer's words ("add up the numbers in `xs` ..."). */
export function docText(instance: FunctionInstance, renderer: Renderer): string {
  return instance.template.doc.replace(/\{(\w+)\}/g, (_, key: string) => {
    if (key === 'list') return renderer.listWord;
    if (key === 'none') return `\`${renderer.noneWord}\``;
    if (key in instance.consts) return String(instance.consts[key]);
    const name = instance.names[key];
    if (name === undefined) throw internalError(`swe-gen: template ${instance.template.id}'s doc names {${key}}, which it does not have`);
    return `\`${name}\``;
  });
}
