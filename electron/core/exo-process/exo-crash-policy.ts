/**
 * When exobar restarts an exo that crashed: the process kit's restart policy
 * (exponential backoff with a cap, a limit), plus exo's own forgiveness of a long run.
 */
import type { RestartLimits } from '../process/restart-policy';

export interface ExoCrashPolicy extends RestartLimits {
  /** A run at least this long forgives earlier crashes (the count starts again). */
  stableAfterMs: number;
}

export const DEFAULT_CRASH_POLICY: ExoCrashPolicy = { baseDelayMs: 2000, maxDelayMs: 60_000, maxRestarts: 5, stableAfterMs: 10 * 60_000 };
