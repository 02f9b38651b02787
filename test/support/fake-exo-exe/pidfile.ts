/**
 * exo's pidfile (`~/.exo/exo.pid`), held the way exo's flock holds it: while the
 * holder lives. Node has no flock, so "held" means the file names a live process
 * other than this one (exobar's own reading, electron/core/exo-process/exo-home.ts);
 * a holder that died, even by SIGKILL, holds nothing, as with a flock.
 */
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { pidfileHolder } from '../../../electron/core/exo-process/exo-home';

/**
 * Takes the pidfile, or throws with exo's message ("Failed to acquire EXO pidfile at
 * <path>: ..."; the text after the colon comes from exo's Rust binding and is not
 * known, so this one is the fake's own words). Returns the release function.
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
