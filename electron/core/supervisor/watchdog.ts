/**
 * Detects a stuck runner from its silence. A runner wedged on the GPU stays alive, so
 * "is the process alive" never fires; what does show is silence while work is in
 * progress. Silence is measured from the last line the runner wrote: handing it more
 * work never resets the clock (steady traffic would otherwise hide a hang forever),
 * except when work arrives at an idle runner, which starts it.
 *
 * The deadline adapts (docs/operations.md, "Watchdog"): the longest step the runner's
 * own measured rates predict for its current work, times a safety factor, stretched
 * while other runners share the GPU, clamped between a floor and a per-phase ceiling.
 */
export type WatchdogPhase = 'lifecycle' | 'prefill' | 'decode';

export interface WatchdogLimits {
  /** Longest silence while loading or warming up (a layer of a large model). */
  lifecycleMs: number;
  /** Ceiling of the adaptive deadline while any task waits for its first token. */
  prefillMs: number;
  /** Ceiling of the adaptive deadline while every task is decoding. */
  decodeMs: number;
  /** The adaptive deadline never goes below this (real ms; the node scales it for a sim runner). */
  floorMs: number;
  /** Expected step time × this factor = the deadline before stretching and clamping. */
  safetyFactor: number;
}

export const DEFAULT_WATCHDOG_LIMITS: WatchdogLimits = {
  lifecycleMs: 120_000,
  prefillMs: 600_000,
  decodeMs: 120_000,
  floorMs: 5_000,
  safetyFactor: 4,
};

/** What the runner is doing now, as far as the deadline is concerned. */
export type WatchdogWork =
  | { phase: 'lifecycle' }
  /** `expectedStepMs`: the largest prefill step still to come (at most one 4096-token chunk), from measured rates. */
  | { phase: 'prefill'; expectedStepMs: number }
  | { phase: 'decode'; expectedStepMs: number };

/** The deadline for `work`: expected step × safety × (1 + runners sharing the GPU), clamped. */
export function watchdogDeadlineMs(limits: WatchdogLimits, work: WatchdogWork, gpuSharers: number): number {
  if (work.phase === 'lifecycle') return limits.lifecycleMs;
  const ceiling = work.phase === 'prefill' ? limits.prefillMs : limits.decodeMs;
  const floor = Math.min(limits.floorMs, ceiling);
  const stretched = work.expectedStepMs * limits.safetyFactor * (1 + Math.max(0, gpuSharers));
  return Math.min(ceiling, Math.max(floor, stretched));
}

export interface WatchdogFiring {
  phase: WatchdogPhase;
  silentMs: number;
  deadlineMs: number;
}

export class Watchdog {
  private lastOutputAt = performance.now();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly limits: WatchdogLimits,
    /** The runner's work now, null when idle; and its deadline. */
    private readonly deadline: () => { phase: WatchdogPhase; deadlineMs: number } | null,
    private readonly onStuck: (firing: WatchdogFiring) => void,
  ) {}

  /** The runner wrote a line: the only thing that restarts the clock while it works. */
  outputSeen(): void {
    this.lastOutputAt = performance.now();
  }

  /** Work arrived at an idle runner: silence counts from now. */
  workStartedWhileIdle(): void {
    this.lastOutputAt = performance.now();
  }

  /** Milliseconds since the runner's last line. */
  silentMs(now = performance.now()): number {
    return now - this.lastOutputAt;
  }

  start(): void {
    this.stop();
    this.lastOutputAt = performance.now();
    const shortest = Math.min(this.limits.lifecycleMs, this.limits.floorMs, this.limits.prefillMs, this.limits.decodeMs);
    const interval = Math.max(20, Math.min(1000, Math.floor(shortest / 5)));
    this.timer = setInterval(() => this.check(), interval);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private check(): void {
    if (this.overdue() === null) return;
    // Timers run before the event loop reads pipes: after the node itself was starved of
    // CPU (a busy machine, a wake from sleep), the runner's lines may be waiting unread
    // in its stdout, and the silence is the node's, not the runner's. Judge again once
    // the loop has read what is pending (setImmediate runs after the poll phase).
    setImmediate(() => {
      if (this.timer === null) return;
      const firing = this.overdue();
      if (firing === null) return;
      this.stop();
      this.onStuck(firing);
    });
  }

  /** The firing the runner's silence calls for now, or null while it is within its deadline. */
  private overdue(): WatchdogFiring | null {
    const current = this.deadline();
    if (current === null) return null;
    const silentMs = this.silentMs();
    return silentMs > current.deadlineMs ? { phase: current.phase, silentMs, deadlineMs: current.deadlineMs } : null;
  }
}
