/** Times in the events' and warnings' words, as the operator's clock shows them (24-hour). */

/** "15:26", or "15:26:32" with seconds. */
export function clockTime(epochMs: number, seconds = false): string {
  return new Date(epochMs).toLocaleTimeString('en-GB', { hour12: false, hour: '2-digit', minute: '2-digit', ...(seconds ? { second: '2-digit' } : {}) });
}
