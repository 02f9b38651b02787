import { describe, expect, it } from 'vitest';
import { medianWithout, sizeClass } from './solo-reference';

describe('solo reference', () => {
  it('leaves one occurrence of the request itself out of the median, and nothing when it is absent', () => {
    expect(medianWithout([1, 2, 3, 10], 10)).toEqual({ median: 2, count: 3 });
    expect(medianWithout([1, 2, 2, 3], 2)).toEqual({ median: 2, count: 3 });
    expect(medianWithout([1, 2, 3, 10], 7)).toEqual({ median: 2.5, count: 4 });
    expect(medianWithout([5], 5)).toEqual({ median: null, count: 0 });
  });

  it('counts prompts up to 256 tokens as one class and doubles the classes above', () => {
    expect([1, 256, 257, 512, 513, 30_000].map(sizeClass)).toEqual([0, 0, 1, 1, 2, 7]);
  });
});
