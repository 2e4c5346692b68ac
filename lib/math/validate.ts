/**
 * Checks for the numeric arrays the math core takes. Each accepts the typed array the core uses
 * (no copy) or any array-like of numbers (converted), and rejects NaN/Inf, wrong lengths and
 * out-of-range values with an error naming the field, the index and the fix.
 */
import { invalidArg } from '../errors.js';

export type Numbers = ArrayLike<number>;

/**
 * How far above 0 a logprob may come out of a sampler (native/src/loss/loss.h holds the
 * same): a sampler that rounds its logsumexp apart from the logit can land a near-certain
 * token half an ulp of the logsumexp above 0, 6e-5 at logits of 2000; nothing above 1e-4 is
 * rounding (p, -log p, a sign slip are all far past it).
 */
export const LOGPROB_SLACK = 1e-4;

/** The largest finite value of each operand dtype (bfloat16's: float32's, 8 mantissa bits). */
export const DTYPE_MAX = { float32: 3.4028234663852886e38, bfloat16: 3.3895313892515355e38, float16: 65504 } as const;

interface LengthRule {
  /** Required length, and the phrase explaining it (e.g. "T = targets.length"). */
  length?: number;
  lengthOf?: string;
}

function arrayLike(value: unknown, field: string): ArrayLike<unknown> {
  const ok =
    Array.isArray(value) || (ArrayBuffer.isView(value) && !(value instanceof DataView));
  if (!ok) throw invalidArg(field, 'must be a typed array or an array of numbers');
  return value as ArrayLike<unknown>;
}

function checkLength(array: ArrayLike<unknown>, field: string, rule: LengthRule): void {
  if (rule.length !== undefined && array.length !== rule.length) {
    throw invalidArg(
      field,
      `has ${array.length} elements but must have ${rule.length}${rule.lengthOf ? ` (${rule.lengthOf})` : ''}`,
    );
  }
}

export function float32Array(
  value: unknown,
  field: string,
  rule: LengthRule & { nonNegative?: boolean; logprob?: boolean; range?: { max: number; of: string; fix: string } } = {},
): Float32Array {
  const raw = arrayLike(value, field);
  checkLength(raw, field, rule);
  const array = raw instanceof Float32Array ? raw : Float32Array.from(raw as Numbers);
  for (let i = 0; i < array.length; i++) {
    const x = array[i]!;
    if (x - x !== 0) {
      throw invalidArg(`${field}[${i}]`, `is ${x}`, 'every value must be a finite number');
    }
    if (rule.nonNegative && x < 0) throw invalidArg(`${field}[${i}]`, `is ${x}`, 'values must be >= 0');
    if (rule.logprob && x > LOGPROB_SLACK) {
      throw invalidArg(`${field}[${i}]`, `is ${x}, which no log-probability can be`, 'logprobs are <= 0: pass log p, not p or -log p');
    }
    if (rule.range && Math.abs(x) > rule.range.max) {
      throw invalidArg(`${field}[${i}]`, `is ${x}, past ${rule.range.of}'s largest value ${rule.range.max}`, rule.range.fix);
    }
  }
  return array;
}

export function int32Array(
  value: unknown,
  field: string,
  rule: LengthRule & { min?: number; max?: number; rangeHint?: string } = {},
): Int32Array {
  const raw = arrayLike(value, field);
  checkLength(raw, field, rule);
  for (let i = 0; i < raw.length; i++) {
    const x = raw[i] as number;
    if (!Number.isInteger(x) || x < -2147483648 || x > 2147483647) {
      throw invalidArg(`${field}[${i}]`, `is ${x}`, 'values must be 32-bit integers');
    }
    if ((rule.min !== undefined && x < rule.min) || (rule.max !== undefined && x > rule.max)) {
      throw invalidArg(
        `${field}[${i}]`,
        `is ${x}`,
        `values must lie in [${rule.min ?? '-inf'}, ${rule.max ?? 'inf'}]${rule.rangeHint ? ` (${rule.rangeHint})` : ''}`,
      );
    }
  }
  return raw instanceof Int32Array ? raw : Int32Array.from(raw as Numbers);
}

/** A 0/1 mask: Uint8Array, booleans or numbers 0/1. */
export function maskArray(value: unknown, field: string, rule: LengthRule = {}): Uint8Array {
  const raw = arrayLike(value, field);
  checkLength(raw, field, rule);
  const mask = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const x = raw[i];
    if (x === 1 || x === true) mask[i] = 1;
    else if (x !== 0 && x !== false) throw invalidArg(`${field}[${i}]`, `is ${String(x)}`, 'a mask holds 0 or 1');
  }
  return mask;
}

/** An integer >= `least`, or an error naming `field`. */
export function integerAtLeast(value: unknown, field: string, least: number): number {
  if (!Number.isInteger(value) || (value as number) < least) {
    throw invalidArg(field, `is ${String(value)}`, `it must be an integer >= ${least}`);
  }
  return value as number;
}

export function positiveInteger(value: unknown, field: string): number {
  return integerAtLeast(value, field, 1);
}
