/** The arithmetic mean; NaN for no values (a metric with nothing to average is not 0). */
export function mean(values: readonly number[]): number {
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN;
}
