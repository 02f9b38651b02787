/** The diagnosis's numbers and words: one rounding and one duration style for every cause. */
import { overlapMs } from '../sharing/intervals';

/** Rounds to 0.1 ms: finer digits are clock noise and would make bundles differ for nothing. */
export const r1 = (n: number): number => Math.round(n * 10) / 10;

/** A duration as an operator reads it: "340 ms" below a second, "2.35 s" above. */
export const ms = (n: number): string => (n >= 1000 ? `${(n / 1000).toFixed(2)} s` : `${Math.round(n)} ms`);

/** Milliseconds of [b0, b1] that [a0, a1] covers. */
export const overlap = (a0: number, a1: number, b0: number, b1: number): number => overlapMs([{ start: a0, end: a1 }], b0, b1);
