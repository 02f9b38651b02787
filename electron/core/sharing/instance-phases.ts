/**
 * What one instance's runner is doing on the GPU, kept over time: prefilling (a prompt
 * it admitted has no first token yet: the step holds the whole prefill), decoding
 * (only requests past their first token), or idle. The sharing statistics ask which
 * phase each neighbour was in while a model decoded; pacing (the fair-sharing policy)
 * asks the same live. Bounded: the last `capacity` intervals are kept.
 */
import { overlapMs, type Interval } from './intervals';

/** A runner's phase on the GPU; prefill dominates: a step that admits a prompt prefills it whole. */
export type GpuPhase = 'idle' | 'prefilling' | 'decoding';

/** The parts of a request the phase is derived from (NodeRequest and ProxiedRequest map onto it). */
export interface PhaseInput {
  /** The runner took it in (local: acknowledged; exo: first prefill progress or token). */
  admitted: boolean;
  /** It has its first token. */
  decoding: boolean;
}

/** The phase of a runner holding these live (not ended) requests. */
export function phaseOf(requests: Iterable<PhaseInput>): GpuPhase {
  let decoding = false;
  for (const r of requests) {
    if (r.admitted && !r.decoding) return 'prefilling';
    if (r.decoding) decoding = true;
  }
  return decoding ? 'decoding' : 'idle';
}

interface PhaseInterval extends Interval {
  phase: Exclude<GpuPhase, 'idle'>;
}

export class InstancePhases {
  private readonly intervals: PhaseInterval[] = [];
  private current: GpuPhase = 'idle';
  private since: number;
  private readonly listeners = new Set<(phase: GpuPhase, at: number) => void>();

  constructor(
    now: number,
    private readonly capacity = 2000,
  ) {
    this.since = now;
  }

  /** The phase now. */
  get phase(): GpuPhase {
    return this.current;
  }

  /** When the current phase began. */
  get phaseSince(): number {
    return this.since;
  }

  /** Hears every change of phase (after it is recorded). */
  onChange(listener: (phase: GpuPhase, at: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Moves to `phase` at `now`; a no-op when it is the current one. */
  set(phase: GpuPhase, now: number): void {
    if (phase === this.current) return;
    const open = this.intervals.at(-1);
    if (open && open.end === null) open.end = now;
    if (phase !== 'idle') {
      this.intervals.push({ phase, start: now, end: null });
      if (this.intervals.length > this.capacity) this.intervals.shift();
    }
    this.current = phase;
    this.since = now;
    for (const listener of this.listeners) listener(phase, now);
  }

  /** Milliseconds within [from, to] spent in `phase` (open intervals end at `now`). */
  msIn(phase: Exclude<GpuPhase, 'idle'>, from: number, to: number, now = to): number {
    // Asked once per token gap: scan back from the newest and stop at the first interval
    // that ended before `from` (intervals never overlap and are kept in order).
    const relevant: Interval[] = [];
    for (let k = this.intervals.length - 1; k >= 0; k--) {
      const i = this.intervals[k]!;
      if (i.end !== null && i.end < from) break;
      if (i.phase === phase) relevant.push(i);
    }
    return overlapMs(relevant, from, to, now);
  }

  /**
   * The phase that best describes [from, to]: prefilling when any of it was spent
   * prefilling (a prefill in a neighbour's step is what slows a decode step), else
   * decoding when any was spent decoding, else idle.
   */
  phaseDuring(from: number, to: number, now = to): GpuPhase {
    if (this.msIn('prefilling', from, to, now) > 0) return 'prefilling';
    if (this.msIn('decoding', from, to, now) > 0) return 'decoding';
    return 'idle';
  }

  /** The intervals kept, oldest first (copies); `end` null for the current one. */
  history(): Array<{ phase: Exclude<GpuPhase, 'idle'>; start: number; end: number | null }> {
    return this.intervals.map((i) => ({ ...i }));
  }
}
