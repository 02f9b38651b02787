/**
 * exo's pidfile (`~/.exo/exo.pid`), held the way exo's flock holds it: while the
 * holder lives. Node has no flock, so "held" means the file names a live process
 * other than this one; a holder that died (even by SIGKILL) holds nothing, as the
 * kernel releases a flock when its process dies.
 */
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { processAlive } from '../process-alive';

/** The pid holding the pidfile, or null when it is free. */
export function pidfileHolder(path: string): number | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  const pid = Number(text.trim());
  return Number.isInteger(pid) && pid > 0 && pid !== process.pid && processAlive(pid) ? pid : null;
}

/**
 * Takes the pidfile, or throws with exo's message ("Failed to acquire EXO pidfile at
 * <path>: ..."; the text after the colon is exo's Rust binding's and is not known,
 * so this one is the fake's own words).
 */
export function acquirePidfile(path: string): () => void {
  const holder = pidfileHolder(path);
  if (holder !== null) throw new Error(`Failed to acquire EXO pidfile at ${path}: the pidfile is locked by process ${holder}`);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${process.pid}\n`, { mode: 0o600 });
  return () => {
    try {
      if (readFileSync(path, 'utf8').trim() === String(process.pid)) unlinkSync(path);
    } catch {
      // Already gone.
    }
  };
}
