/**
 * Formatting for the popover: short, fixed-width-friendly strings. Every function
 * answers "n/a" for a missing value, so a card never shows "NaN" or an empty cell.
 */
import { formatMemory } from '../../../shared/memory-words';

export const NA = 'n/a';

/** A duration: "230 ms" below a second, "1.4 s" below a minute, "2 m 05 s" above. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms == null || !Number.isFinite(ms) || ms < 0) return NA;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const totalS = Math.round(ms / 1000);
  const m = Math.floor(totalS / 60);
  const s = totalS % 60;
  return `${m} m ${String(s).padStart(2, '0')} s`;
}

/** An age in whole seconds ("0 s", "12 s", "3 m 10 s"): ages tick, decimals would flicker. */
export function formatAge(ms: number | null | undefined): string {
  if (ms == null || !Number.isFinite(ms) || ms < 0) return NA;
  const totalS = Math.floor(ms / 1000);
  if (totalS < 60) return `${totalS} s`;
  return `${Math.floor(totalS / 60)} m ${String(totalS % 60).padStart(2, '0')} s`;
}

/** Memory ("3.4 GiB", shared/memory-words.ts: the one unit every view and message uses); n/a when unknown. */
export function formatBytes(bytes: number | null | undefined): string {
  if (bytes == null || !Number.isFinite(bytes)) return NA;
  return formatMemory(bytes);
}

/** Tokens per second with one decimal below 100. */
export function formatRate(tokensPerSecond: number | null | undefined): string {
  if (tokensPerSecond == null || !Number.isFinite(tokensPerSecond)) return NA;
  return tokensPerSecond < 100 ? `${tokensPerSecond.toFixed(1)} tok/s` : `${Math.round(tokensPerSecond)} tok/s`;
}

/** A whole percentage, clamped to 0..100; n/a when the total is unknown. */
export function formatPercent(done: number, total: number): string {
  if (!Number.isFinite(done) || !Number.isFinite(total) || total <= 0) return NA;
  return `${Math.round(percentOf(done, total))}%`;
}

/** done/total as 0..100, clamped. */
export function percentOf(done: number, total: number): number {
  if (!Number.isFinite(done) || !Number.isFinite(total) || total <= 0) return 0;
  return Math.min(100, Math.max(0, (done / total) * 100));
}

/** Thousands separators for token counts ("30,000"), locale-independent so tests are stable. */
export function formatCount(n: number): string {
  return Math.round(n)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** The last 8 characters of a request id: enough to tell requests apart in a list. */
export function shortId(id: string): string {
  return id.length > 12 ? `…${id.slice(-8)}` : id;
}
