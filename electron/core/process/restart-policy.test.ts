import { describe, expect, it } from 'vitest';
import { FailureWindow, restartVerdict } from './restart-policy';

const limits = { baseDelayMs: 100, maxDelayMs: 350, maxRestarts: 4 };

describe('restart policy', () => {
  it('restarts with doubling delays capped at the maximum, and gives up past the cap', () => {
    expect([1, 2, 3, 4, 5].map((n) => restartVerdict(n, limits))).toEqual([
      { restart: true, delayMs: 100, failures: 1 },
      { restart: true, delayMs: 200, failures: 2 },
      { restart: true, delayMs: 350, failures: 3 },
      { restart: true, delayMs: 350, failures: 4 },
      { restart: false, delayMs: null, failures: 5 },
    ]);
  });

  it('never restarts with a cap of zero', () => {
    expect(restartVerdict(1, { ...limits, maxRestarts: 0 })).toEqual({ restart: false, delayMs: null, failures: 1 });
  });

  it('counts the failures within the window, successes between them included; a clear starts over', () => {
    const window = new FailureWindow(1000);
    expect(window.record(0)).toBe(1);
    expect(window.record(500)).toBe(2);
    expect(window.record(999)).toBe(3);
    // The first one (at 0) is a full window old now.
    expect(window.record(1000)).toBe(3);
    expect(window.record(5000)).toBe(1);
    window.clear();
    expect(window.record(5001)).toBe(1);
  });
});
