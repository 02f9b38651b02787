import { describe, expect, it } from 'vitest';
import { DecodeTiming, type TokenGap } from './decode-timing';

describe('decode timing', () => {
  it('has no figures before two tokens', () => {
    const t = new DecodeTiming();
    expect(t.stats()).toEqual({ decodeTokensPerSecond: null, itlP50Ms: null, itlP95Ms: null });
    t.record(100);
    expect(t.stats().decodeTokensPerSecond).toBeNull();
    expect(t.stats().itlP95Ms).toBeNull();
  });

  it('measures the rate from first to last token and the gaps at p50 and p95', () => {
    const gaps: TokenGap[] = [];
    const t = new DecodeTiming((g) => gaps.push(g));
    // 20 gaps: nineteen of 10 ms and one stall of 200 ms.
    let at = 1000;
    t.record(at);
    for (let i = 0; i < 20; i++) t.record((at += i === 10 ? 200 : 10));
    const s = t.stats();
    expect(s.itlP50Ms).toBe(10);
    expect(s.itlP95Ms).toBe(10);
    expect(s.decodeTokensPerSecond).toBeCloseTo((20 / 390) * 1000, 6);
    expect(gaps).toHaveLength(20);
    expect(gaps[10]).toEqual({ at: 1000 + 10 * 10 + 200, gapMs: 200 });
    // Two stalls in 21 gaps reach the p95.
    t.record((at += 300));
    expect(t.stats().itlP95Ms).toBe(200);
  });

  it('counts tokens of one chunk as arriving together', () => {
    const t = new DecodeTiming();
    t.record(0);
    t.record(50, 3);
    const s = t.stats();
    expect(s.decodeTokensPerSecond).toBeCloseTo((3 / 50) * 1000, 6);
    expect(s.itlP50Ms).toBe(0);
    expect(s.itlP95Ms).toBe(50);
  });
});
