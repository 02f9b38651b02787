/**
 * Generated tokens per second over a sliding window, kept in fixed time buckets so
 * memory stays constant however many streams run.
 */
export class TokenRate {
  private readonly buckets: Array<{ start: number; count: number }> = [];
  private seenAny = false;

  constructor(
    private readonly windowMs = 5000,
    private readonly bucketMs = 250,
  ) {}

  record(count = 1, now = performance.now()): void {
    this.seenAny = true;
    const start = now - (now % this.bucketMs);
    const last = this.buckets.at(-1);
    if (last && last.start === start) last.count += count;
    else this.buckets.push({ start, count });
    this.prune(now);
  }

  /** Tokens per second over the window; null when nothing was ever generated. */
  perSecond(now = performance.now()): number | null {
    if (!this.seenAny) return null;
    this.prune(now);
    const total = this.buckets.reduce((sum, b) => sum + b.count, 0);
    return total / (this.windowMs / 1000);
  }

  private prune(now: number): void {
    while (this.buckets.length > 0 && this.buckets[0]!.start < now - this.windowMs) this.buckets.shift();
  }
}
