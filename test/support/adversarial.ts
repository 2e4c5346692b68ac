/**
 * The adversarial suite's bookkeeping (test/adversarial/): each hostile case runs under a time
 * bound and ends one of three ways — accepted (it returned), a clean error (a SwerlError with a
 * code, or an HTTP 4xx the case itself checked), or a crash (anything else: a TypeError, a
 * RangeError from a blown stack, a 5xx, a timeout). The suite's claim is crashes = 0 within the
 * bound; each file prints one summary line with its counts:
 *
 *   # adversarial actions: 10000 cases, 812 clean errors, 0 crashes, longest 3.1 ms CPU (…), slowest 5.2 ms wall
 *
 * The bound is on the CPU time this process spends in the case (clock 'cpu'), which another job
 * on the cores does not stretch as it stretches the wall clock: a case that is slow by its nature
 * (a backtracking pattern, a quadratic loop) is slow in CPU time too. Where the work happens in
 * another process (a server, a sandbox), there is only the wall clock, and the bound there is a
 * hang guard, set far past any slowness load can cause (clock 'wall').
 */
import type { Test } from 'tap';

import { SwerlError } from '../../lib/errors.js';

export type Outcome = 'accepted' | 'clean-error';

export interface CaseResult {
  name: string;
  outcome: Outcome | 'crash';
  /** What the bound is held to: CPU ms of this process (clock 'cpu') or wall ms (clock 'wall'). */
  ms: number;
  wallMs: number;
  detail?: string;
  /** It was cut off by its own time bound (an AbortSignal.timeout): slow, so retried like one. */
  timedOut?: boolean;
}

export type Clock = 'cpu' | 'wall';

export class AdversarialTally {
  readonly area: string;
  readonly clock: Clock;
  readonly results: CaseResult[] = [];

  constructor(area: string, options: { clock: Clock }) {
    this.area = area;
    this.clock = options.clock;
  }

  /**
   * Runs one case. `run` returns normally ('accepted' by default, or the Outcome it returns
   * when it judged a refusal itself, e.g. a 400 from a server) or throws: a SwerlError is a
   * clean error, anything else a crash. Taking longer than `boundMs` (on the tally's clock) three
   * times running is a crash too.
   */
  async case(name: string, run: () => Outcome | void | Promise<Outcome | void>, boundMs: number): Promise<CaseResult> {
    let result = await this.#once(name, run);
    // Over the bound once may be the machine (a GC, a wall clock stretched by another job); a
    // case that is slow by its nature is slow every time. So a slow case runs twice more and
    // keeps its fastest time: it is a crash when all three are over.
    // A case its own timeout cut off counts as slow, not as a crash, until its retries say so.
    const slow = (r: CaseResult): boolean => r.timedOut === true || (r.outcome !== 'crash' && r.ms > boundMs);
    for (let retry = 0; retry < 2 && slow(result); retry++) {
      const again = await this.#once(name, run);
      if ((again.outcome === 'crash' && !again.timedOut) || again.ms < result.ms) result = again;
    }
    if (result.timedOut) {
      result = { ...result, detail: `cut off by its timeout three times running (fastest ${result.ms.toFixed(1)} ms): ${result.detail}` };
    } else if (result.outcome !== 'crash' && result.ms > boundMs) {
      result = { ...result, outcome: 'crash', detail: `took ${result.ms.toFixed(1)} ms ${this.clock === 'cpu' ? 'of CPU' : 'of wall clock'} (fastest of 3), bound ${boundMs} ms` };
    }
    this.results.push(result);
    return result;
  }

  async #once(name: string, run: () => Outcome | void | Promise<Outcome | void>): Promise<CaseResult> {
    const wallStart = performance.now();
    const cpuStart = process.cpuUsage();
    const times = () => {
      const cpu = process.cpuUsage(cpuStart);
      const wallMs = performance.now() - wallStart;
      return { ms: this.clock === 'cpu' ? (cpu.user + cpu.system) / 1000 : wallMs, wallMs };
    };
    try {
      const outcome = (await run()) ?? 'accepted';
      return { name, outcome, ...times() };
    } catch (error) {
      const spent = times();
      return error instanceof SwerlError && typeof error.code === 'string'
        ? { name, outcome: 'clean-error', ...spent, detail: error.message }
        : { name, outcome: 'crash', ...spent, detail: String((error as Error)?.stack ?? error), timedOut: isTimeout(error) };
    }
  }

  get counts(): { cases: number; cleanErrors: number; crashes: number; longestMs: number; slowestWallMs: number } {
    return {
      cases: this.results.length,
      cleanErrors: this.results.filter((r) => r.outcome === 'clean-error').length,
      crashes: this.results.filter((r) => r.outcome === 'crash').length,
      longestMs: Math.max(0, ...this.results.map((r) => r.ms)),
      slowestWallMs: Math.max(0, ...this.results.map((r) => r.wallMs)),
    };
  }

  summary(): string {
    const { cases, cleanErrors, crashes, longestMs, slowestWallMs } = this.counts;
    const longest = this.results.find((r) => r.ms === longestMs);
    const named = longest ? ` (${longest.name})` : '';
    const wall = this.clock === 'cpu' ? `, slowest ${slowestWallMs.toFixed(1)} ms wall` : '';
    return tapLine(`adversarial ${this.area}: ${cases} cases, ${cleanErrors} clean errors, ${crashes} crashes, longest ${longestMs.toFixed(1)} ms ${this.clock === 'cpu' ? 'CPU' : 'wall'}${named}${wall}`);
  }

  /** Prints the summary line and fails the test on any crash, naming the first few. */
  report(t: Test): void {
    t.comment(this.summary());
    const crashes = this.results.filter((r) => r.outcome === 'crash');
    for (const crash of crashes.slice(0, 5)) t.comment(tapLine(`crash: ${crash.name}: ${crash.detail}`));
    // The names go in the assertion's own message too: a CI log's tail shows the failing line,
    // not the comments before it.
    const named = crashes.slice(0, 3).map((c) => `${c.name}: ${(c.detail ?? '').split('\n')[0]!.slice(0, 200)}`).join('; ');
    t.equal(crashes.length, 0, tapLine(`${this.area}: no case crashed or ran past its bound${named ? ` (${named})` : ''}`));
  }
}

/**
 * A case's name quotes hostile text, and tap's parser reads a line as /^.*\r?\n/, whose `.` stops
 * at \r, U+2028 and U+2029 (JSON.stringify leaves the last two raw): one in a comment hides the
 * lines after it, and the subtest fails for a plan it never saw. Written as escapes instead.
 */
export function tapLine(text: string): string {
  return text.replace(/[\r\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** An AbortSignal.timeout firing (fetch rejects with a TimeoutError, or the AbortError it wraps). */
function isTimeout(error: unknown): boolean {
  const name = (error as Error | undefined)?.name;
  const cause = ((error as { cause?: Error } | undefined)?.cause)?.name;
  return name === 'TimeoutError' || cause === 'TimeoutError';
}
