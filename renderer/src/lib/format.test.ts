import { describe, expect, it } from 'vitest';
import { formatAge, formatBytes, formatCount, formatDuration, formatPercent, formatRate, shortId } from './format';

describe('format', () => {
  it('says n/a for missing values instead of NaN', () => {
    expect(formatDuration(null)).toBe('n/a');
    expect(formatDuration(Number.NaN)).toBe('n/a');
    expect(formatAge(undefined)).toBe('n/a');
    expect(formatRate(null)).toBe('n/a');
    expect(formatPercent(3, 0)).toBe('n/a');
  });

  it('formats durations at the scale that reads best', () => {
    expect(formatDuration(230.4)).toBe('230 ms');
    expect(formatDuration(1530)).toBe('1.53 s');
    expect(formatDuration(15_100)).toBe('15.1 s');
    expect(formatDuration(125_000)).toBe('2 m 05 s');
  });

  it('formats ages, sizes, counts, rates and ids', () => {
    expect(formatAge(12_900)).toBe('12 s');
    expect(formatAge(190_000)).toBe('3 m 10 s');
    expect(formatBytes(3.4 * 1024 ** 3)).toBe('3.4 GiB');
    expect(formatCount(30000)).toBe('30,000');
    expect(formatRate(42.123)).toBe('42.1 tok/s');
    expect(formatRate(250.6)).toBe('251 tok/s');
    expect(formatPercent(4096, 30000)).toBe('14%');
    expect(formatPercent(40, 30)).toBe('100%');
    expect(shortId('chatcmpl-0123456789abcdef')).toBe('…89abcdef');
    expect(shortId('req-1')).toBe('req-1');
  });
});
