/**
 * When a runner was busy (had acknowledged work), as a bounded list of intervals. The
 * timelines use it to tell which other runners shared the GPU while a request waited
 * or prefilled: the evidence for a "GPU shared with another busy runner" diagnosis.
 */
interface BusyInterval {
  start: number;
  /** null: still busy. */
  end: number | null;
}

export class BusyIntervals {
  private readonly intervals: BusyInterval[] = [];

  constructor(private readonly capacity = 500) {}

  /** The runner has acknowledged work from `now` on (no-op while already busy). */
  markBusy(now: number): void {
    const last = this.intervals.at(-1);
    if (last && last.end === null) return;
    this.intervals.push({ start: now, end: null });
    if (this.intervals.length > this.capacity) this.intervals.shift();
  }

  /** The runner has no acknowledged work left at `now`. */
  markIdle(now: number): void {
    const last = this.intervals.at(-1);
    if (last && last.end === null) last.end = now;
  }

  /** Whether the runner was busy at any moment in [from, to]. */
  overlaps(from: number, to: number): boolean {
    return this.intervals.some((b) => b.start <= to && (b.end === null || b.end >= from));
  }
}
