/**
 * Option objects are checked with ajv (one JSON schema per section) and fully defaulted before
 * anything crosses into C++. Errors name the field, what is wrong and what is allowed.
 */
import AjvModule, { type ErrorObject, type JSONSchemaType } from 'ajv';

import { SwerlError, invalidArg } from './errors.js';
import { assertJsonDepth } from './util/json-depth.js';
import { didYouMean } from './util/nearest.js';

const Ajv = AjvModule.default ?? AjvModule;
const ajv = new Ajv({ useDefaults: true, allErrors: false, strict: true, verbose: true });
// A number that is 0 (off, greedy) or at least the given value: sampling temperatures, where
// anything between makes z / T overflow float32.
ajv.addKeyword({ keyword: 'zeroOrAtLeast', type: 'number', schemaType: 'number', errors: false, validate: (min: number, x: number) => x === 0 || x >= min });

function describe(error: ErrorObject, field: string): { path: string; problem: string } {
  const path = field + error.instancePath.replace(/\//g, '.');
  switch (error.keyword) {
    case 'additionalProperties': {
      const known = Object.keys((error.parentSchema as { properties?: object })?.properties ?? {});
      const name = String(error.params.additionalProperty);
      return { path: `${path}.${name}`, problem: `is not a known option${didYouMean(name, known)}; known: ${known.join(', ')}` };
    }
    case 'enum': {
      const allowed = (error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v));
      return { path, problem: `must be one of ${allowed.join(', ')}` };
    }
    case 'required':
      return { path: `${path}.${error.params.missingProperty}`, problem: 'is required' };
    case 'type':
      return { path, problem: `must be ${error.params.type === 'number' ? 'a finite number' : `of type ${error.params.type}`}` };
    case 'zeroOrAtLeast':
      return { path, problem: `must be 0 or at least ${error.schema}` };
    default:
      return { path, problem: error.message ?? 'is invalid' };
  }
}

export type OptionsParser<T> = (value: unknown, field: string) => T;

/** An integer field between two bounds, with a default or without one (counts past the bounds can only be typos). */
export function integer(minimum: number, maximum: number): { type: 'integer'; minimum: number; maximum: number };
export function integer(minimum: number, maximum: number, dflt: number): { type: 'integer'; minimum: number; maximum: number; default: number };
export function integer(minimum: number, maximum: number, dflt?: number) {
  return { type: 'integer', minimum, maximum, ...(dflt !== undefined ? { default: dflt } : {}) };
}

/**
 * The value a schema admits once ajv has filled its defaults: the one declaration of an option
 * section is its schema, and its TypeScript type is read off it here (a property is present
 * when it is `required` or has a `default`, optional otherwise). Covers the keywords swerl's
 * schemas use: type (one or a list), const, enum, properties, required, additionalProperties,
 * items (one schema or a tuple), anyOf/oneOf, if/then/else.
 */
export type Infer<S> = Value<S, 'out'>;
/** What a caller may write for a schema: as Infer, but a property with a default may be left out. */
export type Input<S> = Value<S, 'in'>;

type Mode = 'in' | 'out';
type Value<S, M extends Mode> = S extends { const: infer C }
  ? C
  : S extends { enum: readonly (infer E)[] }
    ? E
    : S extends { anyOf: readonly (infer A)[] }
      ? Value<A, M>
      : S extends { oneOf: readonly (infer A)[] }
        ? Value<A, M>
        : S extends { then: infer A; else: infer B }
          ? Value<A, M> | Value<B, M>
          : S extends { type: infer T }
            ? OfType<T extends readonly (infer U)[] ? U : T, S, M>
            : S extends { properties: object }
              ? OfType<'object', S, M>
              : unknown;

type OfType<T, S, M extends Mode> = T extends 'string'
  ? string
  : T extends 'number' | 'integer'
    ? number
    : T extends 'boolean'
      ? boolean
      : T extends 'null'
        ? null
        : T extends 'array'
          ? ArrayOf<S, M>
          : T extends 'object'
            ? ObjectOf<S, M>
            : never;

type ArrayOf<S, M extends Mode> = S extends { items: infer I }
  ? I extends readonly unknown[]
    ? { -readonly [K in keyof I]: Value<I[K], M> }
    : Value<I, M>[]
  : unknown[];

type RequiredKeys<S> = S extends { required: readonly (infer R)[] } ? R : never;
/** Keys always present: required ones, and (once defaults are filled) those with a default. */
type Present<P, R, M extends Mode> = { [K in keyof P]: K extends R ? K : M extends 'out' ? (P[K] extends { default: unknown } ? K : never) : never }[keyof P];
type Expand<T> = { [K in keyof T]: T[K] } & {};
type Properties<S> = S extends { properties: infer P } ? P : {};
type Extra<S, M extends Mode> = S extends { additionalProperties: infer A }
  ? A extends true
    ? Record<string, unknown>
    : A extends false
      ? {}
      : Record<string, Value<A, M>>
  : {};
type ObjectOf<S, M extends Mode, P = Properties<S>, K extends keyof P = Present<P, RequiredKeys<S>, M>> = S extends { properties: object }
  ? Expand<{ -readonly [k in K]: Value<P[k], M> } & { -readonly [k in Exclude<keyof P, K>]?: Value<P[k], M> }> & Extra<S, M>
  : keyof Extra<S, M> extends never
    ? Record<string, unknown>
    : Extra<S, M>;

/**
 * A deep copy of option data. structuredClone and ajv recurse, so a value thousands of levels
 * deep would blow the stack: depth is measured first, without recursion (a cycle counts as too
 * deep). A function, a symbol or a getter that throws is refused by name too.
 */
function plainCopy(value: unknown, field: string): unknown {
  try {
    assertJsonDepth(value, field);
    return structuredClone(value);
  } catch (error) {
    if (error instanceof SwerlError) throw error;
    throw invalidArg(field, `holds something that is not plain data (${(error as Error)?.message ?? String(error)})`, 'pass numbers, strings, booleans, arrays and plain objects');
  }
}

/**
 * A parser for one options section: validates, fills defaults, returns a fresh object.
 * `retired` names options that moved elsewhere, each with where it went: an old config gets
 * that fix rather than "not a known option".
 */
export function optionsParser<const S extends object>(schema: S, retired: Readonly<Record<string, string>> = {}): OptionsParser<Infer<S>> {
  type T = Infer<S>;
  const validate = ajv.compile<T>(schema as JSONSchemaType<T>);
  return (value, field) => {
    if (typeof value === 'object' && value !== null) {
      const old = Object.keys(retired).find((key) => Object.hasOwn(value, key));
      if (old !== undefined) throw invalidArg(`${field}.${old}`, 'is no longer an option here', retired[old]);
    }
    const copy = value === undefined ? {} : plainCopy(value, field);
    if (!validate(copy)) {
      const { path, problem } = describe(validate.errors![0]!, field);
      throw invalidArg(path, problem);
    }
    return copy as T;
  };
}
