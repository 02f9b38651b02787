/** When exobar restarts an exo that crashed: exponential backoff with a cap, and a limit. */

export interface ExoCrashPolicy {
  /** Delay before the first automatic restart. */
  baseDelayMs: number;
  /** The longest delay between two restarts. */
  maxDelayMs: number;
  /** Automatic restarts before exobar gives up and leaves exo crashed. */
  maxRestarts: number;
  /** A run at least this long forgives earlier crashes (the count starts again). */
  stableAfterMs: number;
}

export const DEFAULT_CRASH_POLICY: ExoCrashPolicy = { baseDelayMs: 2000, maxDelayMs: 60_000, maxRestarts: 5, stableAfterMs: 10 * 60_000 };

/** The delay before automatic restart number `attempt` (1-based): base, 2×base, 4×base, … capped at maxDelayMs. */
export function restartDelayMs(attempt: number, policy: Pick<ExoCrashPolicy, 'baseDelayMs' | 'maxDelayMs'>): number {
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
}
