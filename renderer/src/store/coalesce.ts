/**
 * Keeps only the newest value and hands it on at most once per interval. Snapshots can
 * arrive far faster than a person can read (a busy node pushes on every chunk); the
 * page re-renders at most ~10 times a second however fast they come.
 */

export interface Coalescer<T> {
  /** Offers a value; the newest one offered wins. */
  push(value: T): void;
  /** Hands on the pending value now, if any (used on teardown and in tests). */
  flush(): void;
  /** Drops the pending value and the timer. */
  dispose(): void;
}

export interface CoalesceTimers {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const defaultTimers: CoalesceTimers = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Leading and trailing edge: the first value after a quiet spell is applied at once
 * (the page answers immediately), later ones are merged into one apply per interval.
 */
export function createCoalescer<T>(apply: (value: T) => void, intervalMs: number, timers: CoalesceTimers = defaultTimers): Coalescer<T> {
  let pending: { value: T } | null = null;
  let timer: unknown = null;
  let lastApplied = Number.NEGATIVE_INFINITY;

  const run = (): void => {
    timer = null;
    if (!pending) return;
    const { value } = pending;
    pending = null;
    lastApplied = timers.now();
    apply(value);
  };

  return {
    push(value) {
      pending = { value };
      if (timer !== null) return;
      const wait = lastApplied + intervalMs - timers.now();
      if (wait <= 0) run();
      else timer = timers.setTimeout(run, wait);
    },
    flush() {
      if (timer !== null) timers.clearTimeout(timer);
      run();
    },
    dispose() {
      if (timer !== null) timers.clearTimeout(timer);
      timer = null;
      pending = null;
    },
  };
}
