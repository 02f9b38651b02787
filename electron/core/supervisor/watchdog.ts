/**
 * Detects a stuck runner from missing progress. A runner wedged on the GPU stays
 * alive, so "is the process alive" never fires; what does show is silence while work
 * is in progress. The limit depends on the phase: one prefill chunk of the slowest
 * model is the longest legitimate gap between events.
 */
export type WatchdogPhase = 'lifecycle' | 'prefill' | 'decode';

export interface WatchdogLimits {
  /** Longest silence while loading or warming up (a layer of a large model). */
  lifecycleMs: number;
  /** Longest silence while any task waits for its first token (one prefill chunk). */
  prefillMs: number;
  /** Longest silence while every task is decoding. */
  decodeMs: number;
}

export const DEFAULT_WATCHDOG_LIMITS: WatchdogLimits = {
  lifecycleMs: 120_000,
  prefillMs: 60_000,
  decodeMs: 30_000,
};

export class Watchdog {
  private lastEventAt = performance.now();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly limits: WatchdogLimits,
    private readonly phase: () => WatchdogPhase | null,
    private readonly onStuck: (phase: WatchdogPhase, silentMs: number) => void,
  ) {}

  /** Any event from the runner, or new work handed to it, restarts the clock. */
  touch(): void {
    this.lastEventAt = performance.now();
  }

  start(): void {
    this.stop();
    this.touch();
    const shortest = Math.min(this.limits.lifecycleMs, this.limits.prefillMs, this.limits.decodeMs);
    const interval = Math.max(20, Math.min(1000, Math.floor(shortest / 5)));
    this.timer = setInterval(() => this.check(), interval);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private check(): void {
    const phase = this.phase();
    if (phase === null) {
      // Nothing in progress: silence is normal, and the clock starts when work arrives.
      this.touch();
      return;
    }
    const silentMs = performance.now() - this.lastEventAt;
    const limit = phase === 'lifecycle' ? this.limits.lifecycleMs : phase === 'prefill' ? this.limits.prefillMs : this.limits.decodeMs;
    if (silentMs > limit) {
      this.stop();
      this.onStuck(phase, silentMs);
    }
  }
}
