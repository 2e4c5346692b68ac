/**
 * What a run tells its caller, and the terminal view of it: on a terminal, two live lines (the
 * run: steps, elapsed, ETA; the step: episodes, episodes/s, tokens/s, reward) under a log of
 * finished steps and warnings; elsewhere plain lines only (a line per step, and a rollout line
 * at most every 30 s so a long SWE step still shows life in a log file).
 */
import type { RolloutProgress } from '../agent/rollout.js';
import { eta, formatDuration, formatRate, progressDisplay, textBar, type LiveLine, type ProgressDisplay } from '../util/progress.js';

export type TrainEvent =
  | { type: 'start'; step: number; steps: number; resumed: boolean; dir: string }
  | { type: 'warmup'; step: number; steps: number; nll: number }
  | { type: 'rollouts'; step: number; progress: RolloutProgress }
  | { type: 'eval'; step: number; success: number }
  | { type: 'step'; step: number; metrics: Record<string, unknown> }
  | { type: 'checkpoint'; step: number; dir: string }
  | { type: 'warning'; step: number; message: string }
  /** Something the run decided that a reader should know (a curriculum's advance). */
  | { type: 'note'; step: number; message: string }
  | { type: 'stopped'; step: number; reason: string }
  | { type: 'done'; step: number };

function fixed(value: unknown, digits = 3): string {
  return typeof value === 'number' && Number.isFinite(value) ? value.toFixed(digits) : '-';
}

const LINES_EVERY_MS = 30_000;

/** The run's clock: elapsed time, the ETA from the steps this process has done, and the current step's time. */
export class RunClock {
  private readonly started = performance.now();
  private stepStarted = performance.now();
  private firstStep = 0;
  private lastStep = 0;

  constructor(private readonly steps: number) {}

  begin(step: number): void {
    this.firstStep = this.lastStep = step;
    this.stepStarted = performance.now();
  }

  finished(step: number): void {
    this.lastStep = step;
    this.stepStarted = performance.now();
  }

  seconds(): number {
    return (performance.now() - this.started) / 1000;
  }

  /**
   * Since the last step ended (or the run began): the time the next step's rollouts have had.
   * Its rates count from there, not from its first report, which comes once an episode is done.
   */
  stepSeconds(): number {
    return (performance.now() - this.stepStarted) / 1000;
  }

  /** `elapsed 3m05s  ETA 14m02s`. */
  describe(): string {
    const done = this.lastStep - this.firstStep;
    return `elapsed ${formatDuration(this.seconds())}  ETA ${formatDuration(eta(done, this.steps - this.firstStep, this.seconds()))}`;
  }
}

/** A step's rollouts as one line: `step 3/45 ███░ 12/64 episodes  2.31 ep/s  1.2k tok/s  reward 0.31 …`. */
function rolloutLine(step: number, steps: number, p: RolloutProgress, seconds: number, width: number): string {
  return (
    `step ${step}/${steps} ${width ? `${textBar(p.done / p.total, width)} ` : ''}${p.done}/${p.total} episodes  ` +
    `${formatRate(p.done, seconds, 'ep')}  ${formatRate(p.sampledTokens, seconds, 'tok')}  ` +
    `reward ${fixed(p.done ? p.rewardSum / p.done : NaN, 2)}  solved ${p.solved}  running ${p.running}${p.retries ? `  retries ${p.retries}` : ''}`
  );
}

/** A finished step as one line. */
function stepLine(step: number, steps: number, metrics: Record<string, unknown>, clock: RunClock): string {
  const m = metrics as Record<string, Record<string, unknown>>;
  const time = m.time ?? {};
  return (
    `step ${step}/${steps}  reward ${fixed(m.reward?.mean)}  solved all/none/partial ${m.groups?.solveAll}/${m.groups?.solveNone}/${m.groups?.solvePartial}` +
    `  entropy ${fixed(m.loss?.entropy)}  gradNorm ${fixed(m.loss?.gradNorm)}  turns ${fixed(m.turns?.mean, 1)}` +
    (m.sampler ? `  sampler gap ${(m.sampler.gapMax as number).toExponential(1)} max` : '') +
    `  ${fixed(time.stepSeconds, 1)}s  ${fixed(time.episodesPerSecond, 2)} ep/s  ${fixed(time.sampledTokensPerSecond, 0)} tok/s  ${clock.describe()}`
  );
}

/** Prints a run's events to stderr: live lines on a terminal, plain lines otherwise. */
export function consoleReporter(mode: 'auto' | 'bar' | 'lines' | 'none', steps: number): (e: TrainEvent) => void {
  if (mode === 'none') return () => {};
  const live = mode === 'bar' || (mode === 'auto' && process.stderr.isTTY === true);
  const clock = new RunClock(steps);
  let display: ProgressDisplay | undefined;
  let runLine: LiveLine | undefined;
  let stepBar: LiveLine | undefined;
  // From the reporter's start, not the process's: a process that took 30 s to get here (a
  // loaded machine, a long setup) would print a rollout line at a step's first event.
  let lastLine = performance.now();
  const started = lastLine;
  const out = () => (display ??= progressDisplay(live));
  const stop = () => {
    display?.stop();
    display = runLine = stepBar = undefined;
  };
  const drawRun = (step: number) => runLine?.update(`run  ${textBar(step / steps, 24)} ${step}/${steps} steps  ${clock.describe()}`);
  return (e) => {
    switch (e.type) {
      case 'start':
        clock.begin(e.step);
        lastLine = performance.now();
        out().log(`swerl: ${e.resumed ? `resuming at step ${e.step + 1}` : 'training'} for ${steps} steps in ${e.dir}`);
        if (live) {
          runLine = out().line();
          stepBar = out().line();
          drawRun(e.step);
        }
        break;
      case 'warmup':
        if (e.step === e.steps || e.step % 5 === 0) out().log(`format warm-up ${e.step}/${e.steps}: answer NLL ${fixed(e.nll)}  (at ${fixed((performance.now() - started) / 1000, 1)} s)`);
        break;
      case 'rollouts': {
        const seconds = clock.stepSeconds();
        if (live) {
          stepBar?.update(rolloutLine(e.step, steps, e.progress, seconds, 24));
          drawRun(e.step - 1);
        } else if (performance.now() - lastLine >= LINES_EVERY_MS && e.progress.done < e.progress.total) {
          lastLine = performance.now();
          out().log(rolloutLine(e.step, steps, e.progress, seconds, 0));
        }
        break;
      }
      case 'eval':
        out().log(`eval after step ${e.step}: success ${fixed(e.success, 3)}`);
        break;
      case 'step':
        clock.finished(e.step);
        lastLine = performance.now();
        out().log(stepLine(e.step, steps, e.metrics, clock));
        stepBar?.update('');
        drawRun(e.step);
        break;
      case 'checkpoint':
        break;
      case 'warning':
        out().log(`swerl: warning at step ${e.step}: ${e.message}`);
        break;
      case 'note':
        out().log(`swerl: step ${e.step}: ${e.message}`);
        break;
      case 'stopped':
        out().log(`swerl: stopped after step ${e.step}: ${e.reason}`);
        stop();
        break;
      case 'done':
        stop();
        break;
    }
  };
}
