/** The duration axis's unit and tick words: seconds from 1 s, ms below, one unit per axis. */
import { describe, expect, it } from 'vitest';
import { durationAxis } from './duration-axis';

describe('durationAxis', () => {
  it('stays in ms while every value is below 1 s', () => {
    const axis = durationAxis([120, null, 999.4]);
    expect(axis.unit).toBe('ms');
    expect(axis.perUnitMs).toBe(1);
    expect([0, 250, 999.4].map(axis.label)).toEqual(['0 ms', '250 ms', '999 ms']);
  });

  it('turns to seconds once a value reaches 1 s, for every tick of the axis', () => {
    const axis = durationAxis([180, 2400, null]);
    expect(axis.unit).toBe('s');
    expect(axis.perUnitMs).toBe(1000);
    // The chart plots ms / perUnitMs, so recharts' round ticks arrive in seconds.
    expect([0, 0.25, 0.5, 1, 1.5, 12, 2400 / axis.perUnitMs].map(axis.label)).toEqual(['0 s', '0.25 s', '0.5 s', '1 s', '1.5 s', '12 s', '2.4 s']);
    expect(durationAxis([1000]).unit).toBe('s');
  });

  it('answers ms when there is no value to look at (no TTFT in the range)', () => {
    expect(durationAxis([]).unit).toBe('ms');
    expect(durationAxis([null, Number.NaN, Number.POSITIVE_INFINITY]).unit).toBe('ms');
  });

  it('drops the float noise of a division (0.1 + 0.2 s reads 0.3 s)', () => {
    expect(durationAxis([5000]).label(0.1 + 0.2)).toBe('0.3 s');
  });
});
