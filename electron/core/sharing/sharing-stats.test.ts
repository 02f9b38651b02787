import { describe, expect, it } from 'vitest';
import { SharingStats, type BusyNeighbour } from './sharing-stats';

const A_PREFILL: BusyNeighbour = { instanceId: 'a-1', model: 'sim/llama-3.2-3b', modelName: 'Llama 3.2 3B', phase: 'prefilling', node: null };
const A_DECODE: BusyNeighbour = { ...A_PREFILL, phase: 'decoding' };

describe('sharing stats', () => {
  it('files gaps as solo or under each busy neighbour and phase, and says the most slowed in words', () => {
    const s = new SharingStats('all', 60_000);
    let at = 0;
    for (let i = 0; i < 40; i++) s.add({ at: (at += 10), gapMs: 10 }, []);
    for (let i = 0; i < 30; i++) s.add({ at: (at += 25), gapMs: 25 }, [A_PREFILL]);
    for (let i = 0; i < 30; i++) s.add({ at: (at += 12.5), gapMs: 12.5 }, [A_DECODE]);
    const snap = s.snapshot(at);
    expect(snap.solo).toMatchObject({ gaps: 40, decodeTokensPerSecond: 100, itlP50Ms: 10, itlP95Ms: 10 });
    expect(snap.neighbours.map((n) => [n.phase, n.decodeRatio, n.itlP95Ratio])).toEqual([
      ['prefilling', 0.4, 2.5],
      ['decoding', 0.8, 1.25],
    ]);
    expect(snap.summary).toBe('decodes at 40 % of its solo rate while Llama 3.2 3B prefills');
  });

  it('puts nothing in words before both sides have enough gaps, and forgets gaps older than the window', () => {
    const s = new SharingStats('proxied', 1000);
    for (let i = 1; i <= 5; i++) s.add({ at: i * 10, gapMs: 10 }, []);
    s.add({ at: 60, gapMs: 30 }, [{ ...A_PREFILL, node: 'studio-a' }]);
    const early = s.snapshot(100);
    expect(early.summary).toBeNull();
    expect(early.neighbours[0]).toMatchObject({ node: 'studio-a', gaps: 1 });
    expect(early.neighbours[0]!.decodeRatio).toBeCloseTo(1 / 3, 9);
    const later = s.snapshot(1055);
    expect(later.solo.gaps).toBe(0);
    expect(later.neighbours).toHaveLength(1);
    expect(s.snapshot(2000).neighbours).toHaveLength(0);
  });
});
