import { describe, expect, it } from 'vitest';
import { LineSplitter } from './line-splitter';

describe('LineSplitter', () => {
  it('joins lines split across chunks and strips CR', () => {
    const lines: string[] = [];
    const splitter = new LineSplitter(
      (l) => lines.push(l),
      () => undefined,
    );
    splitter.push('{"a":');
    splitter.push('1}\r\n{"b"');
    splitter.push(':2}\nrest');
    splitter.flush();
    expect(lines).toEqual(['{"a":1}', '{"b":2}', 'rest']);
  });

  it('drops an oversized line without buffering it, then carries on', () => {
    const lines: string[] = [];
    const oversized: number[] = [];
    const splitter = new LineSplitter(
      (l) => lines.push(l),
      (n) => oversized.push(n),
      10,
    );
    splitter.push('x'.repeat(8));
    splitter.push('x'.repeat(8));
    splitter.push('xxx\nok\n');
    expect(oversized).toEqual([16]);
    expect(lines).toEqual(['ok']);
  });
});
