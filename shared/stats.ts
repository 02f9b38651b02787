/**
 * The statistics every side computes over request timings, defined once so one TTFT
 * means one thing everywhere: the node's local instances, the exo proxy's, the
 * diagnosis, the sharing statistics and the page's chart.
 */

/**
 * Recent TTFT samples kept per instance: the node's and the exo proxy's snapshots
 * carry this many, their p50 and p95 are over the same samples, and the page's chart
 * shows this many, so its points and its p50/p95 lines come from one set.
 */
export const TTFT_WINDOW = 60;

/** Nearest-rank percentile of sorted values, `q` in 0..1 (0.95 for p95); null for no values. */
export function percentile(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

/** The median of `values` (any order; the mean of the middle two for an even count); null for none. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
