import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { emptySnapshot, type Snapshot } from '../../../shared/snapshot';
import { SnapshotBroadcaster } from './snapshot-broadcaster';

function counting(): { broadcaster: SnapshotBroadcaster; builds: () => number } {
  let builds = 0;
  const broadcaster = new SnapshotBroadcaster((seq) => {
    builds += 1;
    return { ...emptySnapshot(), seq };
  });
  return { broadcaster, builds: () => builds };
}

describe('snapshot broadcaster: one value per version', () => {
  it('builds a version once and hands the same object to every reader', () => {
    const { broadcaster, builds } = counting();
    broadcaster.changed();
    const first = broadcaster.current();
    expect(broadcaster.current()).toBe(first);
    expect(first.seq).toBe(1);
    expect(builds()).toBe(1);
    broadcaster.changed();
    expect(broadcaster.current().seq).toBe(2);
    expect(builds()).toBe(2);
  });
});

describe('snapshot broadcaster: the one throttle', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sends the first change at once and at most one per 100 ms after that, always the newest', () => {
    const { broadcaster } = counting();
    const seen: number[] = [];
    broadcaster.subscribe((s) => seen.push(s.seq));
    vi.advanceTimersByTime(0);
    expect(seen).toEqual([0]);
    // After a quiet spell, a change goes out at once.
    vi.advanceTimersByTime(500);
    broadcaster.changed();
    vi.advanceTimersByTime(0);
    expect(seen).toEqual([0, 1]);
    // 50 changes in 50 ms: nothing sent until the interval passes, then only the last.
    for (let i = 0; i < 50; i++) {
      broadcaster.changed();
      vi.advanceTimersByTime(1);
    }
    expect(seen).toEqual([0, 1]);
    vi.advanceTimersByTime(60);
    expect(seen).toEqual([0, 1, 51]);
  });

  it('sends ~10 a second under a 1 kHz stream of changes, and every subscriber gets the same object', () => {
    const { broadcaster, builds } = counting();
    const a: Snapshot[] = [];
    const b: Snapshot[] = [];
    broadcaster.subscribe((s) => a.push(s));
    broadcaster.subscribe((s) => b.push(s));
    for (let i = 0; i < 2000; i++) {
      broadcaster.changed();
      vi.advanceTimersByTime(1);
    }
    vi.advanceTimersByTime(200);
    expect(a.at(-1)?.seq).toBe(2000);
    // 2 seconds of changes: about 20 sends, never the 2000 changes.
    expect(a.length).toBeGreaterThanOrEqual(19);
    expect(a.length).toBeLessThanOrEqual(23);
    expect(b).toEqual(a);
    a.forEach((s, n) => expect(b[n]).toBe(s));
    // One build per version sent, shared by both subscribers.
    expect(builds()).toBe(a.length);
  });

  it('keeps sending to the others when one listener throws', () => {
    const { broadcaster } = counting();
    const seen: number[] = [];
    broadcaster.subscribe(() => {
      throw new Error('faulty view');
    });
    broadcaster.subscribe((s) => seen.push(s.seq));
    broadcaster.changed();
    vi.advanceTimersByTime(0);
    expect(seen).toEqual([1]);
  });
});
