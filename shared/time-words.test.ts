import { describe, expect, it } from 'vitest';
import { formatClock, formatDateTime, formatDay } from './time-words';

describe('time words', () => {
  it('writes 24-hour local clock times and ISO days, zero-padded, whatever the locale', () => {
    const at = new Date(2026, 0, 5, 9, 4, 3).getTime();
    expect(formatClock(at)).toBe('09:04:03');
    expect(formatDay(at)).toBe('2026-01-05');
    expect(formatDateTime(at)).toBe('2026-01-05 09:04:03');
    expect(formatClock(new Date(2026, 11, 31, 23, 59, 59).getTime())).toBe('23:59:59');
  });
});
