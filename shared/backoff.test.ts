import { describe, expect, it } from 'vitest';
import { backoffDelayMs } from './backoff';

describe('backoffDelayMs', () => {
  it('doubles from the base delay and stops at the cap', () => {
    const limits = { baseDelayMs: 2000, maxDelayMs: 10_000 };
    expect([1, 2, 3, 4, 5].map((n) => backoffDelayMs(n, limits))).toEqual([2000, 4000, 8000, 10_000, 10_000]);
  });

  it('treats attempt 0 or less as the first', () => {
    expect(backoffDelayMs(0, { baseDelayMs: 50, maxDelayMs: 200 })).toBe(50);
  });
});
