/**
 * Spans of time and how much of a window they cover: what "another runner was busy
 * during this request" is measured with, by the sharing stats, the node's request
 * metrics and the diagnosis alike.
 */

/** A span of time; `end` null: still open (measured up to the caller's `now`). */
export interface Interval {
  start: number;
  end: number | null;
}

/**
 * Milliseconds of [from, to] covered by the union of `intervals` (open ones end at
 * `now`). "Another runner was busy during this request" means this is above zero.
 */
export function overlapMs(intervals: Iterable<Interval>, from: number, to: number, now = to): number {
  const clipped = [...intervals]
    .map((i) => [Math.max(from, i.start), Math.min(to, i.end ?? now)] as const)
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  let total = 0;
  let reach = from;
  for (const [a, b] of clipped) {
    if (b <= reach) continue;
    total += b - Math.max(a, reach);
    reach = b;
  }
  return total;
}
