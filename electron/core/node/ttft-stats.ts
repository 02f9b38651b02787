/** Recent time-to-first-token samples of one instance, with p50 and p95 over them. */
import type { TtftSample, TtftSnapshot } from '../../../shared/snapshot';

export class TtftStats {
  private readonly samples: TtftSample[] = [];

  constructor(private readonly capacity = 120) {}

  add(sample: TtftSample): void {
    this.samples.push(sample);
    if (this.samples.length > this.capacity) this.samples.shift();
  }

  snapshot(): TtftSnapshot {
    const sorted = this.samples.map((s) => s.totalMs).sort((a, b) => a - b);
    return {
      samples: [...this.samples],
      p50Ms: percentile(sorted, 0.5),
      p95Ms: percentile(sorted, 0.95),
      latest: this.samples.at(-1) ?? null,
    };
  }
}

/** Nearest-rank percentile of sorted values; null for no values. */
export function percentile(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}
