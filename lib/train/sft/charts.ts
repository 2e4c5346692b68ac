/** The curves.svg panels of an SFT run: NLL (training batches, held out), greedy eval, gradient norm, learning rate, throughput. */
import { seriesOf, type Chart } from '../plots.js';

export function sftCharts(rows: readonly Record<string, unknown>[]): Chart[] {
  const s = (label: string, path: string) => seriesOf(rows, label, path);
  return [
    { title: 'NLL', xLabel: 'step', yLabel: 'nats/token', series: [s('training batch', 'loss.nll'), s('held out', 'heldOut.nll')] },
    { title: 'Eval', xLabel: 'step', yLabel: 'success', yMin: 0, yMax: 1, series: [s('eval success (greedy)', 'eval.success')] },
    { title: 'Gradient norm', xLabel: 'step', yLabel: 'norm (before clipping)', series: [s('grad norm', 'loss.gradNorm')] },
    { title: 'Learning rate', xLabel: 'step', yLabel: 'lr', series: [s('lr', 'loss.lr')] },
    { title: 'Throughput', xLabel: 'step', yLabel: 'tokens/s', series: [s('tokens/s', 'time.tokensPerSecond')] },
  ];
}
