import { describe, expect, it } from 'vitest';
import { createCoalescer, type CoalesceTimers } from './coalesce';

function manualTimers() {
  let now = 0;
  const queue: { at: number; fn: () => void; id: number }[] = [];
  let nextId = 1;
  const timers: CoalesceTimers = {
    now: () => now,
    setTimeout: (fn, ms) => {
      const id = nextId++;
      queue.push({ at: now + ms, fn, id });
      return id;
    },
    clearTimeout: (handle) => {
      const i = queue.findIndex((t) => t.id === handle);
      if (i >= 0) queue.splice(i, 1);
    },
  };
  const advance = (ms: number) => {
    now += ms;
    for (const t of [...queue].sort((a, b) => a.at - b.at)) {
      if (t.at <= now) {
        queue.splice(queue.indexOf(t), 1);
        t.fn();
      }
    }
  };
  return { timers, advance };
}

describe('createCoalescer', () => {
  it('hands on the first value at once, then the newest once per interval', () => {
    const { timers, advance } = manualTimers();
    const seen: number[] = [];
    const c = createCoalescer<number>((v) => seen.push(v), 100, timers);
    c.push(1);
    c.push(2);
    c.push(3);
    expect(seen).toEqual([1]);
    advance(100);
    expect(seen).toEqual([1, 3]);
    advance(500);
    c.push(4);
    expect(seen).toEqual([1, 3, 4]);
  });

  it('flushes on demand and forgets the pending value on dispose', () => {
    const { timers, advance } = manualTimers();
    const seen: number[] = [];
    const c = createCoalescer<number>((v) => seen.push(v), 100, timers);
    c.push(1);
    c.push(2);
    c.flush();
    expect(seen).toEqual([1, 2]);
    c.push(3);
    c.dispose();
    advance(1000);
    expect(seen).toEqual([1, 2]);
  });
});
