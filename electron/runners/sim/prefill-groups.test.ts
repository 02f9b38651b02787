import { describe, expect, it } from 'vitest';
import { shareChunk } from './prefill-groups';

describe('shareChunk', () => {
  it('gives prompts waiting together equal shares, so they end their prefill together', () => {
    const rows = Array.from({ length: 8 }, () => ({ offset: 0, rest: 200 }));
    expect(shareChunk(rows, 800)).toEqual(Array(8).fill(100));
  });

  it('caps a group by its shortest rest, then the rest of the chunk goes on at the new offset', () => {
    // 30 each takes the short one to its end; the other two share what is left (40) at offset 30.
    expect(shareChunk([{ offset: 0, rest: 30 }, { offset: 0, rest: 100 }, { offset: 0, rest: 100 }], 130)).toEqual([30, 50, 50]);
  });

  it('serves prompts in arrival order: one at another offset first, then the group of the others', () => {
    expect(shareChunk([{ offset: 20, rest: 15 }, { offset: 0, rest: 12 }, { offset: 0, rest: 12 }], 20)).toEqual([15, 2, 2]);
  });

  it('stops when what is left cannot give each prompt of the next group a token', () => {
    expect(shareChunk([{ offset: 5, rest: 9 }, { offset: 0, rest: 12 }, { offset: 0, rest: 12 }], 10)).toEqual([9, 0, 0]);
    // A chunk smaller than its group still gives each prompt one token.
    expect(shareChunk([{ offset: 0, rest: 12 }, { offset: 0, rest: 12 }, { offset: 0, rest: 12 }], 2)).toEqual([1, 1, 1]);
  });
});
