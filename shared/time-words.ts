/**
 * Dates and times in words, one way everywhere (every part of the page, the menu-bar
 * tooltip): 24-hour local time "14:03:07", and with the day "2026-12-03 14:03:07". Written
 * by hand from the Date's local fields rather than with toLocale*String: the locale's
 * format differed between parts of one page ("03/12/2026, 2:03:07 pm" beside "14:03:07").
 */

const two = (n: number): string => String(n).padStart(2, '0');

/** "14:03:07": a clock time, 24-hour, local. */
export function formatClock(epochMs: number): string {
  const d = new Date(epochMs);
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/** "2026-12-03": the local day. */
export function formatDay(epochMs: number): string {
  const d = new Date(epochMs);
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}`;
}

/** "2026-12-03 14:03:07": the local day and clock time. */
export function formatDateTime(epochMs: number): string {
  return `${formatDay(epochMs)} ${formatClock(epochMs)}`;
}
