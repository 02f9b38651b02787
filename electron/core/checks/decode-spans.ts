/**
 * Experiment 2's arithmetic: B's inter-token gaps split into before, during and after
 * A's prefill (by when each gap ended), with decode tokens/s and ITL p50/p95 per span.
 */
import type { DecodeSpan } from '../../../shared/sharing-check';
import { percentile } from '../../../shared/stats';

export interface Gap {
  at: number;
  gapMs: number;
}

export function gapsOf(tokenTimes: readonly number[]): Gap[] {
  const gaps: Gap[] = [];
  for (let i = 1; i < tokenTimes.length; i++) gaps.push({ at: tokenTimes[i]!, gapMs: tokenTimes[i]! - tokenTimes[i - 1]! });
  return gaps;
}

/** Figures over these gaps: rate is 1000 over the mean gap (the stream's tokens/s in the span). */
export function spanOf(gaps: readonly Gap[]): DecodeSpan {
  const sorted = gaps.map((g) => g.gapMs).sort((a, b) => a - b);
  const total = sorted.reduce((s, g) => s + g, 0);
  return {
    tokens: sorted.length,
    decodeTokensPerSecond: total > 0 ? (sorted.length / total) * 1000 : null,
    itlP50Ms: percentile(sorted, 0.5),
    itlP95Ms: percentile(sorted, 0.95),
  };
}

/** Splits gaps at [start, end]: a gap belongs to the span it ended in. */
export function splitSpans(gaps: readonly Gap[], start: number, end: number): { before: DecodeSpan; during: DecodeSpan; after: DecodeSpan } {
  return {
    before: spanOf(gaps.filter((g) => g.at <= start)),
    during: spanOf(gaps.filter((g) => g.at > start && g.at <= end)),
    after: spanOf(gaps.filter((g) => g.at > end)),
  };
}

export const ratioOf = (a: number | null, b: number | null): number | null => (a !== null && b !== null && b > 0 ? a / b : null);
