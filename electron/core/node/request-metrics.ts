/**
 * Request metrics, defined once: the parts of a time to first token, and when a runner
 * was busy. The instance (live TTFT samples, the timelines' "other runner busy"), the
 * diagnosis (its findings and their evidence), the timeline CSV and the benchmark
 * (through the TTFT samples) all measure with these functions.
 */
import { overlapMs, type Interval } from '../sharing/intervals';

/** The moments of one request, in monotonic milliseconds; null when it has not happened. */
export interface RequestMoments {
  arrivedAt: number;
  /**
   * Present when the request came while its model was loading: when the load ended (the
   * runner was ready), null while it goes on. Absent: it waited for no load.
   */
  loadedAt?: number | null;
  /** Written to the runner. */
  dispatchedAt: number | null;
  /** The runner acknowledged it (it reads and acknowledges tasks only between generation steps). */
  acknowledgedAt: number | null;
  /**
   * The runner began its prefill (its first prefill progress, the 0-token report a runner
   * sends when it admits the task); null or absent: not reported, taken as the acknowledgement.
   */
  prefillStartAt?: number | null;
  /** The last prefill progress chunk. */
  prefillEndAt: number | null;
  firstTokenAt: number | null;
}

/**
 * The parts of a time to first token; they add up to the time from arrival to
 * `until`. A part that has not begun is null; `loadMs` is null for a request that
 * waited for no model load.
 */
export interface TtftParts {
  /** Arrival until its model was loaded (a load on request, or one it joined). */
  loadMs: number | null;
  /** Arrival at the node (or the end of the load) until the task was written to the runner. */
  dispatchMs: number | null;
  /** Written until the runner acknowledged it (the runner reads tasks only between steps). */
  ackWaitMs: number | null;
  /**
   * Waiting in the runner: acknowledged until the runner began its prefill (its turn came,
   * behind the runner's earlier prompts). Zero for a runner that does not report the start.
   */
  runnerWaitMs: number | null;
  /** The start of its prefill until the last prefill progress (or the first token). */
  prefillMs: number | null;
  /** Last prefill progress until the first token. */
  firstTokenMs: number | null;
}

/** The parts of a request's wait so far, measured up to `until` (its first token, its end, or now). */
export function measureTtftParts(t: RequestMoments, until: number): TtftParts {
  const parts: TtftParts = { loadMs: null, dispatchMs: null, ackWaitMs: null, runnerWaitMs: null, prefillMs: null, firstTokenMs: null };
  let from = t.arrivedAt;
  if (t.loadedAt !== undefined) {
    const loaded = Math.min(t.loadedAt ?? until, until);
    parts.loadMs = Math.max(0, loaded - t.arrivedAt);
    if (t.loadedAt == null || t.loadedAt >= until) return parts;
    from = loaded;
  }
  const dispatchEnd = t.dispatchedAt ?? until;
  parts.dispatchMs = Math.max(0, dispatchEnd - from);
  if (t.dispatchedAt === null) return parts;
  const ack = t.acknowledgedAt ?? until;
  parts.ackWaitMs = ack - t.dispatchedAt;
  if (t.acknowledgedAt === null) return parts;
  // Acknowledged, a task waits in the runner's own queue until the runner admits it and
  // prefills it (inside the step that admits it); the runner reports that start.
  // A runner that does not report the start: its prefill began at the acknowledgement.
  const started = t.prefillStartAt ?? (t.prefillEndAt !== null || t.firstTokenAt !== null ? t.acknowledgedAt : null);
  parts.runnerWaitMs = Math.max(0, Math.min(started ?? until, until) - t.acknowledgedAt);
  if (started === null) return parts;
  const prefillFrom = Math.max(started, t.acknowledgedAt);
  const lastPrefill = t.prefillEndAt ?? (t.firstTokenAt !== null ? prefillFrom : until);
  parts.prefillMs = Math.max(0, Math.min(lastPrefill, until) - prefillFrom);
  if (t.firstTokenAt !== null) parts.firstTokenMs = Math.max(0, t.firstTokenAt - Math.max(lastPrefill, prefillFrom));
  return parts;
}

/**
 * When a runner was busy, from a request's moments: a runner is busy with a request
 * from its acknowledgement to its end (it holds the request in its batch meanwhile).
 */
export function busyIntervalOf(t: { acknowledgedAt: number | null; endedAt: number | null }): Interval | null {
  return t.acknowledgedAt === null ? null : { start: t.acknowledgedAt, end: t.endedAt };
}

/**
 * A runner's busy time kept live, as a bounded list of intervals: busy from the first
 * acknowledged request until none is left. The same definition as `busyIntervalOf`
 * over its requests, merged as they come; the timelines use it to tell which other
 * runners shared the GPU while a request waited or prefilled.
 */
export class BusyIntervals {
  private readonly intervals: Interval[] = [];

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

  /** Milliseconds the runner was busy within [from, to]. */
  overlapMs(from: number, to: number, now = performance.now()): number {
    return overlapMs(this.intervals, from, to, now);
  }
}
