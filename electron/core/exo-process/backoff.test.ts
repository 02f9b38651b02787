import { describe, expect, it } from 'vitest';
import { restartDelayMs } from './backoff';

describe('restartDelayMs', () => {
  it('doubles from the base delay and stops at the cap', () => {
    const policy = { baseDelayMs: 2000, maxDelayMs: 10_000 };
    expect([1, 2, 3, 4, 5].map((n) => restartDelayMs(n, policy))).toEqual([2000, 4000, 8000, 10_000, 10_000]);
  });
});
