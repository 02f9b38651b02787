import { describe, expect, it } from 'vitest';
import { fitSentence, formatMemory } from './memory-words';

const GiB = 1024 ** 3;

describe('formatMemory', () => {
  it('writes GiB as GiB, with one decimal', () => {
    expect(formatMemory(1.44 * GiB)).toBe('1.4 GiB');
    expect(formatMemory(64 * GiB)).toBe('64.0 GiB');
    expect(formatMemory(0)).toBe('0.0 GiB');
    expect(formatMemory(-GiB)).toBe('0.0 GiB');
  });
});

describe('fitSentence', () => {
  it('explains a refusal that looks like a contradiction: the headroom is part of the free memory', () => {
    expect(fitSentence({ neededBytes: 5.9 * GiB, freeBytes: 21.7 * GiB, headroomBytes: 18.6 * GiB })).toBe(
      'needs 5.9 GiB; 21.7 GiB free, of which 18.6 GiB is kept free for macOS and other apps: 3.1 GiB usable',
    );
  });

  it('says nothing is usable when the headroom is more than what is free, never a negative figure', () => {
    expect(fitSentence({ neededBytes: 1.7 * GiB, freeBytes: 1 * GiB, headroomBytes: 2 * GiB })).toBe(
      'needs 1.7 GiB; 1.0 GiB free, less than the 2.0 GiB kept free for macOS and other apps: nothing usable',
    );
  });

  it('says only the need and the free memory without headroom', () => {
    expect(fitSentence({ neededBytes: 1.7 * GiB, freeBytes: 21.7 * GiB, headroomBytes: 0 })).toBe('needs 1.7 GiB; 21.7 GiB free');
  });
});
