/**
 * One shared once-a-second clock for every live age on the page. One interval for the
 * page rather than one per row, and none at all while nothing shows an age.
 */
import { useSyncExternalStore } from 'react';

const listeners = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | null = null;
let now = Date.now();

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  if (timer === null) {
    now = Date.now();
    timer = setInterval(() => {
      now = Date.now();
      for (const l of listeners) l();
    }, 1000);
  }
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer !== null) {
      clearInterval(timer);
      timer = null;
    }
  };
}

/** Date.now(), refreshed once a second while the calling component is mounted. */
export function useNow(): number {
  return useSyncExternalStore(subscribe, () => now);
}
