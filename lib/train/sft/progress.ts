/**
 * An SFT run on the console: what data it trains on, a line per step (every step up to 100
 * steps, then about a hundred lines in all, plus every step with a held-out NLL), eval results,
 * warnings; on a terminal also a live line with the run's progress and ETA.
 */
import { eta, formatDuration, progressDisplay, textBar, type LiveLine, type ProgressDisplay } from '../../util/progress.js';
import type { TrainEvent } from '../progress.js';
import type { SftDataSummary } from './dataset.js';
import type { SftStepRow } from './core.js';

const fixed = (value: unknown, digits = 3): string => (typeof value === 'number' && Number.isFinite(value) ? value.toFixed(digits) : '-');

function count(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e4 ? `${(n / 1e3).toFixed(0)}k` : String(n);
}

/** `12 examples (2 held out), 5.3k tokens (2.1k trained); an epoch is 3 steps`. */
export function describeData(data: SftDataSummary, sequencesPerStep: number): string {
  const cut = data.dropped + data.truncated > 0 ? `; over maxLength: ${data.dropped} dropped, ${data.truncated} truncated` : '';
  return (
    `${data.train} training examples${data.heldOut ? ` (${data.heldOut} held out)` : ''} from ${data.files.length} file(s), ` +
    `${count(data.tokens)} tokens (${count(data.trainedTokens)} trained); an epoch is ${fixed(data.train / sequencesPerStep, 1)} steps${cut}`
  );
}

function stepLine(row: SftStepRow, steps: number, clock: string): string {
  return (
    `step ${row.step}/${steps}  epoch ${fixed(row.epoch, 2)}  nll ${fixed(row.loss.nll)}` +
    (row.heldOut ? `  held-out nll ${fixed(row.heldOut.nll)}` : '') +
    `  gradNorm ${fixed(row.loss.gradNorm)}  lr ${row.loss.lr.toExponential(2)}  ${fixed(row.time.tokensPerSecond, 0)} tok/s  ${fixed(row.time.stepSeconds, 2)}s  ${clock}`
  );
}

/** Prints an SFT run's events to stderr ('none': nothing). */
export function sftConsoleReporter(mode: 'auto' | 'bar' | 'lines' | 'none', steps: number, data: SftDataSummary, sequencesPerStep: number): (e: TrainEvent) => void {
  if (mode === 'none') return () => {};
  const live = mode === 'bar' || (mode === 'auto' && process.stderr.isTTY === true);
  const every = steps <= 100 ? 1 : Math.ceil(steps / 100);
  const started = performance.now();
  let first = 0;
  let display: ProgressDisplay | undefined;
  let runLine: LiveLine | undefined;
  const out = () => (display ??= progressDisplay(live));
  const clock = (step: number) => {
    const seconds = (performance.now() - started) / 1000;
    return `elapsed ${formatDuration(seconds)}  ETA ${formatDuration(eta(step - first, steps - first, seconds))}`;
  };
  const stop = () => {
    display?.stop();
    display = runLine = undefined;
  };
  return (e) => {
    switch (e.type) {
      case 'start':
        first = e.step;
        out().log(`swerl sft: ${e.resumed ? `resuming at step ${e.step + 1}` : 'training'} for ${steps} steps in ${e.dir}`);
        out().log(`swerl sft: ${describeData(data, sequencesPerStep)}`);
        if (live) runLine = out().line();
        break;
      case 'step': {
        const row = e.metrics as SftStepRow;
        if (e.step % every === 0 || e.step === steps || e.step === first + 1 || row.heldOut) out().log(stepLine(row, steps, clock(e.step)));
        runLine?.update(`sft  ${textBar(e.step / steps, 24)} ${e.step}/${steps} steps  nll ${fixed(row.loss.nll)}  ${clock(e.step)}`);
        break;
      }
      case 'eval':
        out().log(`eval after step ${e.step}: success ${fixed(e.success)}`);
        break;
      case 'warning':
        out().log(`swerl sft: warning${e.step > 0 ? ` at step ${e.step}` : ''}: ${e.message}`);
        break;
      case 'stopped':
        out().log(`swerl sft: stopped after step ${e.step}: ${e.reason}`);
        stop();
        break;
      case 'done':
        stop();
        break;
      default:
        break;
    }
  };
}
