/**
 * Exponential backoff with a cap: the one rule for every retry and restart in exobar
 * (a runner's restart, exo's restart, the exo client's polling after failures, the
 * page's reconnect to the event stream).
 */
export interface BackoffLimits {
  /** The wait before the first retry. */
  baseDelayMs: number;
  /** The longest wait. */
  maxDelayMs: number;
}

/** The wait before retry number `attempt` (1-based): base, 2×base, 4×base, … capped at maxDelayMs. */
export function backoffDelayMs(attempt: number, limits: BackoffLimits): number {
  return Math.min(limits.maxDelayMs, limits.baseDelayMs * 2 ** Math.max(0, attempt - 1));
}
