/**
 * A sparse histogram on geometric buckets (each 10% wider than the one before): small
 * to store per minute, and merged exactly by adding counts, so an hour's (or a week's)
 * percentile comes from its minutes without keeping a single sample. A percentile is
 * the upper edge of its bucket: at most 10% above the true value.
 */

const GROWTH = 1.1;
const LOG_GROWTH = Math.log(GROWTH);

/** Bucket index -> count. */
export type LogHistogram = Record<string, number>;

/** The bucket of a positive value (values under 1 share bucket 0). */
function bucketOf(value: number): number {
  return value <= 1 ? 0 : Math.ceil(Math.log(value) / LOG_GROWTH);
}

export function addTo(histogram: LogHistogram, value: number): void {
  if (!Number.isFinite(value) || value < 0) return;
  const key = String(bucketOf(value));
  histogram[key] = (histogram[key] ?? 0) + 1;
}

export function mergeInto(target: LogHistogram, source: LogHistogram): void {
  for (const [key, n] of Object.entries(source)) target[key] = (target[key] ?? 0) + n;
}

export function countOf(histogram: LogHistogram): number {
  let n = 0;
  for (const count of Object.values(histogram)) n += count;
  return n;
}

/** The value at quantile q (0..1); null when empty. */
export function quantile(histogram: LogHistogram, q: number): number | null {
  const entries = Object.entries(histogram)
    .map(([k, n]) => [Number(k), n] as const)
    .sort((a, b) => a[0] - b[0]);
  const total = entries.reduce((a, [, n]) => a + n, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (const [bucket, n] of entries) {
    seen += n;
    if (seen >= rank) return bucket === 0 ? 1 : GROWTH ** bucket;
  }
  return null;
}
