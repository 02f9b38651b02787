import { describe, expect, it } from 'vitest';
import { InstancePhases, phaseOf } from './instance-phases';

describe('instance phases', () => {
  it('derives the phase from live requests, prefill first', () => {
    expect(phaseOf([])).toBe('idle');
    expect(phaseOf([{ admitted: false, decoding: false }])).toBe('idle');
    expect(phaseOf([{ admitted: true, decoding: true }])).toBe('decoding');
    expect(
      phaseOf([
        { admitted: true, decoding: true },
        { admitted: true, decoding: false },
      ]),
    ).toBe('prefilling');
  });

  it('keeps intervals and answers what a span was spent on', () => {
    const changes: string[] = [];
    const p = new InstancePhases(0);
    p.onChange((phase, at) => changes.push(`${phase}@${at}`));
    p.set('prefilling', 100);
    p.set('prefilling', 150);
    p.set('decoding', 300);
    p.set('idle', 500);
    expect(changes).toEqual(['prefilling@100', 'decoding@300', 'idle@500']);
    expect(p.phaseDuring(0, 90)).toBe('idle');
    expect(p.phaseDuring(250, 350)).toBe('prefilling');
    expect(p.phaseDuring(310, 350)).toBe('decoding');
    expect(p.phaseDuring(500, 600)).toBe('idle');
    expect(p.msIn('prefilling', 0, 1000)).toBe(200);
    p.set('decoding', 700);
    expect(p.msIn('decoding', 0, 1000, 800)).toBe(300);
    expect(p.history().map((i) => i.phase)).toEqual(['prefilling', 'decoding', 'decoding']);
  });
});
