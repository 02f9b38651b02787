/**
 * Ages, time-left estimates and the token rate move with the clock, not with events:
 * while any is shown, a new snapshot version each second keeps a read at most a second
 * behind the clock. A stalled load makes no event of its own: the clock says when it
 * passes its threshold, and how long since. An idle countdown ("unloads in 12 min") is
 * said in minutes: a new version each 30 s is enough.
 */
import type { Instance } from './instance';

/** How often a snapshot with live ages is renewed when no event renews it. */
const CLOCK_REFRESH_MS = 1000;
const COUNTDOWN_REFRESH_MS = 30_000;

export interface SnapshotClockDeps {
  instances(): Instance[];
  /** Whether a stalled load is shown or may be now. */
  stalled(): boolean;
  changed(): void;
}

/** Starts the clock; returns its stop. */
export function startSnapshotClock(deps: SnapshotClockDeps): () => void {
  /** When the clock last renewed the snapshot for an idle countdown (minutes move slowly). */
  let countdownRenewedAt = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    const instances = deps.instances();
    if (instances.some((i) => i.showsTimeDependentState)) deps.changed();
    else if (deps.stalled()) deps.changed();
    else if (now - countdownRenewedAt >= COUNTDOWN_REFRESH_MS && instances.some((i) => i.residency.unloadsAt(i.load, i.ready) !== null)) {
      countdownRenewedAt = now;
      deps.changed();
    }
  }, CLOCK_REFRESH_MS);
  timer.unref();
  return () => clearInterval(timer);
}
