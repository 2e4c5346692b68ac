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
export function optionsParser<T>(schema: JSONSchemaType<T> | object, retired: Readonly<Record<string, string>> = {}): OptionsParser<T> {
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
