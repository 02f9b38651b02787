/**
 * A virtual clock for simulated work. Timers are coarse (about 1 ms, later on a busy
 * machine), while at small time scales a decode step is a fraction of a millisecond. The
 * pacer keeps a target time and sleeps only when it is at least a millisecond ahead, so
 * many tiny durations add up to the right total and small timer overshoots are paid back
 * by the next wait instead of accumulating.
 */
import { setImmediate as yieldToEventLoop, setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';

/** Lag beyond which the pacer gives up catching up (the process was starved, not idle). */
const MAX_CATCH_UP_MS = 50;

export class Pacer {
  private target = performance.now();

  /** Forget the past: call after waiting for input, so idle time is not spent as credit. */
  resync(): void {
    this.target = performance.now();
  }

  /**
   * Waits `ms` of simulated work measured from the end of the previous wait. Always
   * yields to the event loop at least once, so stdin lines keep being buffered.
   */
  async wait(ms: number): Promise<void> {
    const now = performance.now();
    if (now - this.target > MAX_CATCH_UP_MS) this.target = now;
    this.target += Math.max(0, ms);
    const ahead = this.target - performance.now();
    if (ahead >= 1) await sleep(ahead);
    else await yieldToEventLoop();
  }
}
