import { describe, expect, it } from 'vitest';
import { CATCH_UP_CHUNKS, MIN_STACKED_ROW_TOKENS } from '../../../shared/runner-protocol';
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

  it('serves prompts in arrival order: one far ahead first, then the group of the others', () => {
    // 60 tokens ahead is more than two chunks of 20: no catching up.
    expect(CATCH_UP_CHUNKS).toBe(2);
    expect(shareChunk([{ offset: 60, rest: 4 }, { offset: 0, rest: 12 }, { offset: 0, rest: 12 }], 20)).toEqual([4, 8, 8]);
  });

  it('lets prompts a chunk behind the first catch up with it, then takes them all in one pass', () => {
    // Two prompts 20 behind go first, 10 each (never past the first's offset).
    expect(shareChunk([{ offset: 20, rest: 40 }, { offset: 0, rest: 60 }, { offset: 0, rest: 60 }], 20)).toEqual([0, 10, 10]);
    // Those farthest behind first, up to the next offset, where they join it: 10 to reach
    // the second, then both 10 to reach the first.
    expect(shareChunk([{ offset: 30, rest: 40 }, { offset: 20, rest: 50 }, { offset: 10, rest: 60 }], 30)).toEqual([0, 10, 20]);
    // Caught up, all three go on in one pass with what the chunk has left (34: 11 each).
    expect(shareChunk([{ offset: 30, rest: 40 }, { offset: 20, rest: 50 }, { offset: 20, rest: 50 }], 54)).toEqual([11, 21, 21]);
  });

  it('gives each row of a pass over several prompts at least the stacked floor', () => {
    expect(MIN_STACKED_ROW_TOKENS).toBe(8);
    expect(shareChunk([{ offset: 0, rest: 40 }, { offset: 0, rest: 40 }, { offset: 0, rest: 40 }], 10)).toEqual([8, 8, 8]);
    // One prompt alone takes what the chunk has, however little.
    expect(shareChunk([{ offset: 0, rest: 40 }], 3)).toEqual([3]);
  });

  it("stops when what is left is below the next group's floor", () => {
    expect(shareChunk([{ offset: 50, rest: 9 }, { offset: 0, rest: 12 }, { offset: 0, rest: 12 }], 20)).toEqual([9, 0, 0]);
  });
});
