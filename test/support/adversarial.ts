/**
 * The adversarial suite's bookkeeping (test/adversarial/): each hostile case runs under a time
 * bound and ends one of three ways — accepted (it returned), a clean error (a SwerlError with a
 * code, or an HTTP 4xx the case itself checked), or a crash (anything else: a TypeError, a
 * RangeError from a blown stack, a 5xx, a timeout). The suite's claim is crashes = 0 within the
 * bound; each file prints one summary line with its counts:
 *
 *   # adversarial actions: 10000 cases, 812 clean errors, 0 crashes, longest 3.1 ms
 */
import type { Test } from 'tap';

import { SwerlError } from '../../lib/errors.js';

export type Outcome = 'accepted' | 'clean-error';

export interface CaseResult {
  name: string;
  outcome: Outcome | 'crash';
  ms: number;
  detail?: string;
}

export class AdversarialTally {
  readonly area: string;
  readonly results: CaseResult[] = [];

  constructor(area: string) {
    this.area = area;
  }

  /**
   * Runs one case. `run` returns normally ('accepted' by default, or the Outcome it returns
   * when it judged a refusal itself, e.g. a 400 from a server) or throws: a SwerlError is a
   * clean error, anything else a crash. Taking longer than `boundMs` is a crash too.
   */
  async case(name: string, run: () => Outcome | void | Promise<Outcome | void>, boundMs: number): Promise<CaseResult> {
    const start = performance.now();
    let result: CaseResult;
    try {
      const outcome = (await run()) ?? 'accepted';
      result = { name, outcome, ms: performance.now() - start };
    } catch (error) {
      const ms = performance.now() - start;
      result = error instanceof SwerlError && typeof error.code === 'string'
        ? { name, outcome: 'clean-error', ms, detail: error.message }
        : { name, outcome: 'crash', ms, detail: String((error as Error)?.stack ?? error) };
    }
    if (result.outcome !== 'crash' && result.ms > boundMs) {
      result = { ...result, outcome: 'crash', detail: `took ${result.ms.toFixed(1)} ms, bound ${boundMs} ms` };
    }
    this.results.push(result);
    return result;
  }

  get counts(): { cases: number; cleanErrors: number; crashes: number; longestMs: number } {
    return {
      cases: this.results.length,
      cleanErrors: this.results.filter((r) => r.outcome === 'clean-error').length,
      crashes: this.results.filter((r) => r.outcome === 'crash').length,
      longestMs: Math.max(0, ...this.results.map((r) => r.ms)),
    };
  }

  summary(): string {
    const { cases, cleanErrors, crashes, longestMs } = this.counts;
    return `adversarial ${this.area}: ${cases} cases, ${cleanErrors} clean errors, ${crashes} crashes, longest ${longestMs.toFixed(1)} ms`;
  }

  /** Prints the summary line and fails the test on any crash, naming the first few. */
  report(t: Test): void {
    t.comment(this.summary());
    const crashes = this.results.filter((r) => r.outcome === 'crash');
    for (const crash of crashes.slice(0, 5)) t.comment(`crash: ${crash.name}: ${crash.detail}`);
    t.equal(crashes.length, 0, `${this.area}: no case crashed or ran past its bound`);
  }
}
