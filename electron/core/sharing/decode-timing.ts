/**
 * Per-request decode timing, defined once: decode tokens per second and inter-token
 * latency (ITL, the gap between consecutive tokens of one request) at p50 and p95 over
 * the request's tokens. Local requests (NodeRequest) and exo traffic proxied by exobar
 * (ExoTraffic) both measure with this class, so the snapshot's request entries, the
 * node's request records, the request log and the sharing statistics agree.
 *
 * Clock-agnostic: callers pass their own timestamps (monotonic ms locally, epoch ms for
 * exo), and only differences are used.
 */
import { percentile } from '../../../shared/stats';

/** What a request's decode looked like so far; every figure null until there are two tokens. */
export interface DecodeStats {
  /** Tokens after the first, over the time from the first token to the last, per second. */
  decodeTokensPerSecond: number | null;
  /** Median gap between consecutive tokens, ms. */
  itlP50Ms: number | null;
  /** 95th-percentile gap between consecutive tokens, ms. */
  itlP95Ms: number | null;
}

/** No decode measured (fewer than two tokens). */
export const NO_DECODE: DecodeStats = Object.freeze({ decodeTokensPerSecond: null, itlP50Ms: null, itlP95Ms: null });

/** One inter-token gap as it happened: it ended at `at` and lasted `gapMs`. */
export interface TokenGap {
  at: number;
  gapMs: number;
}

/**
 * Gaps kept for the percentiles. A request longer than this keeps its rate exact
 * (counted from first and last token) and its percentiles over the first gaps kept,
 * so memory per request stays bounded.
 */
const MAX_GAPS = 16_384;

export class DecodeTiming {
  private firstAt: number | null = null;
  private lastAt: number | null = null;
  private tokens = 0;
  private readonly gaps: number[] = [];
  private cached: DecodeStats | null = null;

  /** `onGap` hears each gap as it is measured (the per-model sharing statistics listen). */
  constructor(private readonly onGap?: (gap: TokenGap) => void) {}

  /**
   * `count` tokens arrived at `now`. Several tokens in one chunk count as one gap of the
   * time since the previous chunk and zero gaps for the rest: they did arrive together.
   */
  record(now: number, count = 1): void {
    if (count <= 0) return;
    this.cached = null;
    if (this.lastAt !== null) {
      const gap = Math.max(0, now - this.lastAt);
      this.push(gap);
      this.onGap?.({ at: now, gapMs: gap });
    }
    for (let i = 1; i < count; i++) this.push(0);
    this.firstAt ??= now;
    this.lastAt = now;
    this.tokens += count;
  }

  /** Every gap kept so far, ms, in the order they came (at most the first 16,384): the ITL histogram observes each. */
  gapsMs(): readonly number[] {
    return this.gaps;
  }

  /** Tokens recorded so far. */
  get count(): number {
    return this.tokens;
  }

  /** The figures so far (recomputed only when a token came since the last call). */
  stats(): DecodeStats {
    if (this.cached) return this.cached;
    if (this.tokens < 2 || this.firstAt === null || this.lastAt === null) return NO_DECODE;
    const span = this.lastAt - this.firstAt;
    const sorted = [...this.gaps].sort((a, b) => a - b);
    this.cached = {
      decodeTokensPerSecond: span > 0 ? ((this.tokens - 1) / span) * 1000 : null,
      itlP50Ms: percentile(sorted, 0.5),
      itlP95Ms: percentile(sorted, 0.95),
    };
    return this.cached;
  }

  private push(gap: number): void {
    if (this.gaps.length < MAX_GAPS) this.gaps.push(gap);
  }
}
