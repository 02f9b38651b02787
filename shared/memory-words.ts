/**
 * Memory in words, one way everywhere (the page, the API's messages, the tray, the
 * reports): one unit, GiB (1024^3 bytes) written as GiB, the unit a Mac's memory is
 * sold and counted in ("a 64 GB Mac" holds 64 GiB), with one decimal. And the sentence
 * that explains a fit: what a launch needs, what is free, how much of that is kept free
 * (the headroom) and what is left to use, so "needs 5.9, 21.7 free" is never read as a
 * contradiction when it does not fit.
 */

const GiB = 1024 ** 3;

/** "5.9 GiB": one decimal; a negative figure reads as 0. */
export function formatMemory(bytes: number): string {
  return `${(Math.max(0, bytes) / GiB).toFixed(1)} GiB`;
}

/**
 * "needs 5.9 GiB; 21.7 GiB free, of which 18.6 GiB is kept free for macOS and other
 * apps: 3.1 GiB usable". Without headroom: "needs 1.7 GiB; 21.7 GiB free".
 */
export function fitSentence(figures: { neededBytes: number; freeBytes: number; headroomBytes: number }): string {
  const { neededBytes, freeBytes, headroomBytes } = figures;
  const needs = `needs ${formatMemory(neededBytes)}; ${formatMemory(freeBytes)} free`;
  if (headroomBytes <= 0) return needs;
  if (headroomBytes >= freeBytes) return `${needs}, less than the ${formatMemory(headroomBytes)} kept free for macOS and other apps: nothing usable`;
  return `${needs}, of which ${formatMemory(headroomBytes)} is kept free for macOS and other apps: ${formatMemory(freeBytes - headroomBytes)} usable`;
}
