/**
 * The unit of a chart's duration axis: seconds once the largest value reaches 1 s,
 * milliseconds below. One unit per axis, chosen from the values drawn, so the ticks read
 * "0 s 0.5 s 1 s 1.5 s" rather than "500 ms 1000 ms 1500 ms" (too wide for the popover's
 * axis) or a mix of both. The chart plots `value / perUnitMs`, so recharts picks round
 * ticks in the unit shown (0.5 s steps, not 600 ms steps written as 0.6 s).
 */

export interface DurationAxis {
  unit: 'ms' | 's';
  /** Milliseconds in one unit: divide a value in ms by this before plotting it. */
  perUnitMs: number;
  /** A tick's words, from a value already in the unit ("1.5 s", "250 ms"). */
  label: (value: number) => string;
}

const SECOND_MS = 1000;

const milliseconds: DurationAxis = { unit: 'ms', perUnitMs: 1, label: (v) => `${Math.round(v)} ms` };
// Two decimals at most, trailing zeros dropped: 0.25 s, 1.5 s, 12 s.
const seconds: DurationAxis = { unit: 's', perUnitMs: SECOND_MS, label: (v) => `${Number(v.toFixed(2))} s` };

/** The axis for these values in ms (nulls and non-finite values ignored; ms when there is none). */
export function durationAxis(valuesMs: Iterable<number | null | undefined>): DurationAxis {
  let max = 0;
  for (const v of valuesMs) if (v != null && Number.isFinite(v)) max = Math.max(max, v);
  return max >= SECOND_MS ? seconds : milliseconds;
}
