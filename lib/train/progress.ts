/** What a run tells its caller, and the terminal view of it. */
import type { RolloutProgress } from '../agent/rollout.js';

export type TrainEvent =
  | { type: 'start'; step: number; steps: number; resumed: boolean; dir: string }
  | { type: 'warmup'; step: number; steps: number; nll: number }
  | { type: 'rollouts'; step: number; progress: RolloutProgress }
  | { type: 'eval'; step: number; success: number }
  | { type: 'step'; step: number; metrics: Record<string, unknown> }
  | { type: 'checkpoint'; step: number; dir: string }
  | { type: 'warning'; step: number; message: string }
  | { type: 'stopped'; step: number; reason: string }
  | { type: 'done'; step: number };

function bar(fraction: number, width: number): string {
  const full = Math.round(Math.max(0, Math.min(1, fraction)) * width);
  return `${'█'.repeat(full)}${'░'.repeat(width - full)}`;
}

function fixed(value: unknown, digits = 3): string {
  return typeof value === 'number' && Number.isFinite(value) ? value.toFixed(digits) : '-';
}

/** Prints a run's events to stderr: a live bar on a terminal, or a line per step. */
export function consoleReporter(mode: 'auto' | 'bar' | 'lines' | 'none', steps: number): (e: TrainEvent) => void {
  if (mode === 'none') return () => {};
  const live = mode === 'bar' || (mode === 'auto' && process.stderr.isTTY === true);
  const out = (line: string) => process.stderr.write(line);
  let barShown = false;
  const clear = () => {
    if (barShown) out('\r\x1b[2K');
    barShown = false;
  };
  return (e) => {
    switch (e.type) {
      case 'start':
        out(`swerl: ${e.resumed ? `resuming at step ${e.step + 1}` : 'training'} for ${steps} steps in ${e.dir}\n`);
        break;
      case 'warmup':
        if (e.step === e.steps || e.step % 5 === 0) out(`format warm-up ${e.step}/${e.steps}: answer NLL ${fixed(e.nll)}\n`);
        break;
      case 'rollouts': {
        if (!live) break;
        const p = e.progress;
        out(
          `\r\x1b[2Kstep ${e.step}/${steps} ${bar(p.done / p.total, 24)} ${p.done}/${p.total} rollouts  ` +
            `reward ${fixed(p.done ? p.rewardSum / p.done : NaN, 2)}  solved ${p.solved}  running ${p.running}${p.retries ? `  retries ${p.retries}` : ''}`,
        );
        barShown = true;
        break;
      }
      case 'eval':
        clear();
        out(`eval after step ${e.step}: success ${fixed(e.success, 3)}\n`);
        break;
      case 'step': {
        clear();
        const m = e.metrics as Record<string, Record<string, unknown>>;
        out(
          `step ${e.step}/${steps}  reward ${fixed(m.reward?.mean)}  solved all/none/partial ${m.groups?.solveAll}/${m.groups?.solveNone}/${m.groups?.solvePartial}` +
            `  entropy ${fixed(m.loss?.entropy)}  gradNorm ${fixed(m.loss?.gradNorm)}  turns ${fixed(m.turns?.mean, 1)}` +
            (m.sampler ? `  sampler gap ${(m.sampler.gapMax as number).toExponential(1)} max` : '') +
            `  ${fixed(m.time?.stepSeconds, 1)}s\n`,
        );
        break;
      }
      case 'checkpoint':
        break;
      case 'warning':
        clear();
        out(`swerl: warning at step ${e.step}: ${e.message}\n`);
        break;
      case 'stopped':
        clear();
        out(`swerl: stopped after step ${e.step}: ${e.reason}\n`);
        break;
      case 'done':
        clear();
        break;
    }
  };
}
