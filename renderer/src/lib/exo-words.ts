/**
 * exo's connection and times in plain words for the exo views. A runner's words and
 * tone are every view's (shared/status-words.ts).
 */
import { formatClock } from '../../../shared/time-words';
import type { ExoSection } from '../../../shared/exo-snapshot';

/** A clock time, 24 h, as the source header shows "not reachable since 14:03:07" (the page's one format). */
export const clockTime = formatClock;

/** "connected" or "not reachable since HH:MM:SS" (never reached: "not reachable yet"). */
export function exoConnectionWords(exo: ExoSection): string {
  if (exo.connected) return 'connected';
  return exo.lastGoodPollAt === null ? `not reachable (trying since ${clockTime(exo.since)})` : `not reachable since ${clockTime(exo.since)}`;
}
