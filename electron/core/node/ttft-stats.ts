/** Recent time-to-first-token samples of one instance, with p50 and p95 over them. */
import type { TtftSample, TtftSnapshot } from '../../../shared/snapshot';
import { percentile, TTFT_WINDOW } from '../../../shared/stats';

export class TtftStats {
  private readonly samples: TtftSample[] = [];

  constructor(private readonly capacity = TTFT_WINDOW) {}

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
