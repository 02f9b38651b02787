/**
 * Residency: whether a local model stays loaded. Every instance has an idle time to
 * live (the setting `onDemand.idleTtlSeconds`, a launch's `ttlSeconds`, a request's
 * `keep_alive`), after which it unloads while nothing is queued or in flight; a pinned
 * instance never unloads by itself (the safe pair is pinned). The snapshot carries this
 * per instance, and every view says it with {@link residencyWords}.
 */
import { z } from 'zod';

export const ResidencySchema = z.object({
  /** Never unloaded when idle nor evicted to make room; only the operator stops it. */
  pinned: z.boolean(),
  /** Seconds idle before it unloads; null: never (a `keep_alive` of -1, or `ttlSeconds: -1`). */
  ttlSeconds: z.number().nullable(),
  /** True when a request started it (load on request), false when it was launched. */
  loadedOnDemand: z.boolean(),
  /** Epoch ms of the last request's arrival or end (the least recently used unloads first). */
  lastUsedAt: z.number(),
  /** Epoch ms since which nothing is queued or in flight; null while it has work. */
  idleSince: z.number().nullable(),
  /** Epoch ms at which it unloads if nothing comes; null when it will not (pinned, no TTL, busy, loading). */
  unloadsAt: z.number().nullable(),
  /** What it holds in memory by the fit estimate (the catalog's figure), bytes. */
  memoryBytes: z.number(),
});
export type Residency = z.infer<typeof ResidencySchema>;

/** The most seconds a time to live may be: 30 days (Ollama takes any duration; a month is plenty). */
export const MAX_TTL_SECONDS = 30 * 24 * 3600;

/**
 * A time to live as the API takes it: seconds, or -1 for never (Ollama's `keep_alive`
 * convention, where any negative value means forever).
 */
export const TtlSecondsSchema = z
  .number()
  .int('a time to live is whole seconds')
  .min(-1, 'a time to live is seconds (0 or more), or -1 for never')
  .max(MAX_TTL_SECONDS, `a time to live is at most ${MAX_TTL_SECONDS} seconds (30 days); -1 keeps it loaded`);

/** "12 min", "40 s", "2 h": how long, in the words the views use. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.round(s / 60);
  if (min < 120) return `${min} min`;
  return `${Math.round(min / 60)} h`;
}

/**
 * A resident instance's state in a few words, as of `now` (epoch ms): "pinned",
 * "in use", "idle, unloads in 12 min", "idle, kept loaded". The Models panel, the
 * cards and the tray say the same.
 */
export function residencyWords(residency: Residency, now: number): string {
  if (residency.pinned) return 'pinned';
  if (residency.idleSince === null) return 'in use';
  if (residency.unloadsAt === null) return 'idle, kept loaded';
  return `idle, unloads in ${formatDuration(residency.unloadsAt - now)}`;
}
