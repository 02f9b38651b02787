/**
 * The TTFT samples a chart shows: the snapshot carries the node's recent samples; the
 * page merges them by request id so a sample stays on the chart across snapshots, and
 * keeps a bounded window so a long session never grows the page's memory or the
 * chart's cost.
 */
import type { TtftSample } from '../../../shared/snapshot';
import { TTFT_WINDOW } from '../../../shared/stats';

/**
 * Merges new samples into the history, oldest first, at most `limit` long. Returns the
 * same array when nothing is new, so selectors see no change and nothing re-renders.
 */
export function mergeTtftSamples(history: readonly TtftSample[], incoming: readonly TtftSample[], limit = TTFT_WINDOW): TtftSample[] {
  const known = new Set(history.map((s) => s.requestId));
  const fresh = incoming.filter((s) => !known.has(s.requestId));
  if (fresh.length === 0 && history.length <= limit) return history as TtftSample[];
  const merged = [...history, ...fresh].sort((a, b) => a.at - b.at);
  return merged.length > limit ? merged.slice(merged.length - limit) : merged;
}
