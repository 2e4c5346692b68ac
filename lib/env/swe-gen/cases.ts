/**
 * Inputs for a function, run through the interpreter: those on which the buggy function
 * differs from the fixed one (the issue's example and the fail-to-pass test) and those on which
 * it does not (the tests that pass at the base state), judged as the tests' own assertions
 * judge them. A bug no input shows is no bug.
 */
import type { Draw } from './draw.js';
import { drawArgs, type FunctionInstance } from './instance.js';
import { callFunction } from './interpret.js';
import { functionName, type FunctionDef } from './program.js';
import type { Check, Renderer } from './renderer.js';
import { Unportable, assertionHolds, isProperValue, literal, type Outcome } from './values.js';

/** An input the bug shows on: what the call gave, and what it should have. */
export interface Failure extends Check {
  call: string;
  got: Outcome;
  /** What it gave, as the user writes it (`3.0`, `NaN`, `raises IndexError`). */
  gotText: string;
  /** What it should give, as the test writes it. */
  expectedText: string;
}

export interface Cases {
  /** Shortest call first. */
  failing: Failure[];
  /** In the order drawn. */
  passing: Check[];
}

/** Calls tried per function: enough to meet the edge cases (an empty list is 1 in 6). */
const SAMPLES = 120;
/** Longer calls are left out of tests: every byte is read by a small model. */
const MAX_CALL_CHARS = 40;

function attempt<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch (error) {
    if (error instanceof Unportable) return undefined;
    throw error;
  }
}

export function sampleCases(instance: FunctionInstance, buggy: FunctionDef | null, renderer: Renderer, draw: Draw): Cases {
  const { language } = renderer;
  const name = functionName(instance.def.words, language);
  const seen = new Set<string>();
  const failing: Failure[] = [];
  const passing: Check[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const args = drawArgs(instance, draw);
    const call = renderer.call(name, args);
    if (seen.has(call) || call.length > MAX_CALL_CHARS) continue;
    seen.add(call);
    const fixed = attempt(() => callFunction(instance.def, args, language));
    if (!fixed?.ok || !isProperValue(fixed.value)) continue;
    const expected = fixed.value;
    const expectedText = attempt(() => literal(expected, language));
    if (expectedText === undefined) continue;
    const got = buggy ? attempt(() => callFunction(buggy, args, language)) : fixed;
    if (got === undefined) continue;
    if (assertionHolds(language, expected, got)) {
      passing.push({ args, expected });
      continue;
    }
    const gotText = got.ok ? attempt(() => literal(got.value, language)) : renderer.raised(got.error);
    if (gotText !== undefined) failing.push({ args, expected, call, got, gotText, expectedText });
  }
  failing.sort((a, b) => a.call.length - b.call.length);
  return { failing, passing };
}
