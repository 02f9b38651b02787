/**
 * When a supervised process that went down is restarted: exponential backoff with a
 * cap on how many failures count, the same rule for a runner and for this Mac's exo.
 * What counts as a failure, and which causes never restart (a start-up failure that
 * would repeat, a stuck process that may have wedged the GPU), is each supervisor's
 * policy by cause; the counting and the delay are here, pure.
 */
import { backoffDelayMs, type BackoffLimits } from '../../../shared/backoff';

export interface RestartLimits extends BackoffLimits {
  /** Failures after which the process stays down (the operator retries). */
  maxRestarts: number;
}

/** Restart after `delayMs`, or give up; `failures` counts this one. */
export type RestartVerdict = { restart: true; delayMs: number; failures: number } | { restart: false; delayMs: null; failures: number };

/** The verdict for the `failures`-th failure (1-based, this one included): restart with backoff until the cap. */
export function restartVerdict(failures: number, limits: RestartLimits): RestartVerdict {
  if (failures > limits.maxRestarts) return { restart: false, delayMs: null, failures };
  return { restart: true, delayMs: backoffDelayMs(failures, limits), failures };
}

/**
 * The failures that count toward the cap: those within `windowMs` of the latest,
 * whatever succeeded between them (a runner that crashes every few minutes is failing,
 * even though it serves in between).
 */
export class FailureWindow {
  private failures: number[] = [];

  constructor(private readonly windowMs: number) {}

  /** Records a failure at `now`; returns how many count now, this one included. */
  record(now: number): number {
    this.failures = [...this.failures.filter((at) => now - at < this.windowMs), now];
    return this.failures.length;
  }

  /** Forgets every failure (the operator's retry, a relaunch). */
  clear(): void {
    this.failures = [];
  }
}
