/**
 * How well a verifier's scores separate resolved candidates from the rest: AUC (the chance a
 * random resolved candidate scores above a random unresolved one, ties counting half: the
 * Mann–Whitney U statistic over the product of the class sizes) and accuracy at a threshold.
 */
import { invalidArg } from '../../errors.js';

function checkAligned(scores: readonly number[], labels: readonly boolean[]): void {
  if (scores.length !== labels.length) throw invalidArg('scores', `has ${scores.length} entries for ${labels.length} labels`);
  const bad = scores.findIndex((s) => !Number.isFinite(s));
  if (bad >= 0) throw invalidArg(`scores[${bad}]`, `is ${scores[bad]}`, 'scores are finite numbers');
}

/** AUC by average ranks, O(n log n); NaN when either class is empty. */
export function rocAuc(scores: readonly number[], labels: readonly boolean[]): number {
  checkAligned(scores, labels);
  const positives = labels.filter(Boolean).length;
  const negatives = labels.length - positives;
  if (positives === 0 || negatives === 0) return NaN;
  const order = scores.map((_, i) => i).sort((a, b) => scores[a]! - scores[b]!);
  // Sum of the positives' ranks (1-based), tied scores sharing their average rank.
  let rankSum = 0;
  for (let start = 0; start < order.length; ) {
    let end = start;
    while (end + 1 < order.length && scores[order[end + 1]!] === scores[order[start]!]) end++;
    const averageRank = (start + end) / 2 + 1;
    for (let k = start; k <= end; k++) if (labels[order[k]!]) rankSum += averageRank;
    start = end + 1;
  }
  const u = rankSum - (positives * (positives + 1)) / 2;
  return u / (positives * negatives);
}

/** The share of candidates the threshold classifies right: YES when score > threshold. */
export function accuracyAt(scores: readonly number[], labels: readonly boolean[], threshold = 0.5): number {
  checkAligned(scores, labels);
  if (scores.length === 0) return NaN;
  return scores.filter((s, i) => s > threshold === labels[i]).length / scores.length;
}
