/**
 * What exobar reads in exo's own output lines: the start failures exo only reports in
 * words, and the fast-synch line (exo 0.3.70's src/exo/main.py logs "FAST_SYNCH forced ON|OFF"
 * when started with --fast-synch / --no-fast-synch).
 */

export type ExoOutputSignal =
  /** "Failed to acquire EXO pidfile at <path>: ..." (exo 0.3.70's src/exo/main.py, before anything else). */
  | { kind: 'pidfile_held' }
  /** Hypercorn's "[Errno 48|98] error while attempting to bind on address (...): address already in use". */
  | { kind: 'port_taken' }
  | { kind: 'fast_synch'; enabled: boolean };

/** Classifies one line of exo's stdout or stderr; null for everything else. */
export function classifyExoLine(line: string): ExoOutputSignal | null {
  if (line.includes('Failed to acquire EXO pidfile')) return { kind: 'pidfile_held' };
  if (/address already in use/i.test(line)) return { kind: 'port_taken' };
  const fast = /FAST_SYNCH forced (ON|OFF)\b/.exec(line);
  if (fast) return { kind: 'fast_synch', enabled: fast[1] === 'ON' };
  return null;
}

/** The last "FAST_SYNCH forced ON|OFF" in a log text (exo.log of the current start), or null. */
export function lastFastSynchLine(text: string): boolean | null {
  let found: boolean | null = null;
  for (const line of text.split('\n')) {
    const signal = classifyExoLine(line);
    if (signal?.kind === 'fast_synch') found = signal.enabled;
  }
  return found;
}
