import { describe, expect, it } from 'vitest';
import { BusyIntervals, busyIntervalOf, measureTtftParts } from './request-metrics';
import { overlapMs } from '../sharing/intervals';

describe('request metrics', () => {
  it('splits a time to first token into parts that add up to it', () => {
    const t = { arrivedAt: 0, dispatchedAt: 2, acknowledgedAt: 1500, prefillEndAt: 1900, firstTokenAt: 1950 };
    const parts = measureTtftParts(t, 1950);
    // A runner that does not report the start of its prefill: it began at the acknowledgement.
    expect(parts).toEqual({ loadMs: null, dispatchMs: 2, ackWaitMs: 1498, runnerWaitMs: 0, prefillMs: 400, firstTokenMs: 50 });
    expect(parts.dispatchMs! + parts.ackWaitMs! + parts.prefillMs! + parts.firstTokenMs!).toBe(1950);
  });

  it('counts the time a request waited in the runner for its turn apart from its own prefill', () => {
    // Acknowledged at once, behind five other prompts: its prefill began 1.6 s later and took 50 ms.
    const t = { arrivedAt: 0, dispatchedAt: 1, acknowledgedAt: 3, prefillStartAt: 1603, prefillEndAt: 1653, firstTokenAt: 1670 };
    const parts = measureTtftParts(t, 1670);
    expect(parts).toEqual({ loadMs: null, dispatchMs: 1, ackWaitMs: 2, runnerWaitMs: 1600, prefillMs: 50, firstTokenMs: 17 });
    // Still waiting for its turn: the wait grows, the prefill has not begun.
    expect(measureTtftParts({ ...t, prefillStartAt: null, prefillEndAt: null, firstTokenAt: null }, 1000)).toMatchObject({
      runnerWaitMs: 997,
      prefillMs: null,
    });
  });

  it('measures a request still waiting up to `until`, later parts null', () => {
    expect(measureTtftParts({ arrivedAt: 0, dispatchedAt: 5, acknowledgedAt: null, prefillEndAt: null, firstTokenAt: null }, 300)).toEqual({
      loadMs: null,
      dispatchMs: 5,
      ackWaitMs: 295,
      runnerWaitMs: null,
      prefillMs: null,
      firstTokenMs: null,
    });
  });

  it('puts the wait for a model load first, the other parts from the end of the load', () => {
    const t = { arrivedAt: 0, loadedAt: 2000, dispatchedAt: 2001, acknowledgedAt: 2010, prefillEndAt: 2200, firstTokenAt: 2250 };
    const parts = measureTtftParts(t, 2250);
    expect(parts).toEqual({ loadMs: 2000, dispatchMs: 1, ackWaitMs: 9, runnerWaitMs: 0, prefillMs: 190, firstTokenMs: 50 });
    expect(Object.values(parts).reduce((a, b) => a! + b!, 0)).toBe(2250);
    // Still loading: only the load has begun.
    expect(measureTtftParts({ ...t, loadedAt: null, dispatchedAt: null, acknowledgedAt: null, prefillEndAt: null, firstTokenAt: null }, 700)).toEqual({
      loadMs: 700,
      dispatchMs: null,
      ackWaitMs: null,
      runnerWaitMs: null,
      prefillMs: null,
      firstTokenMs: null,
    });
  });

  it('counts overlapping busy time once, open intervals up to now', () => {
    const intervals = [
      { start: 0, end: 100 },
      { start: 50, end: 150 },
      { start: 400, end: null },
    ];
    expect(overlapMs(intervals, 0, 200)).toBe(150);
    expect(overlapMs(intervals, 300, 1000, 500)).toBe(100);
    // Touching at a point is not sharing.
    expect(overlapMs([{ start: 0, end: 100 }], 100, 200)).toBe(0);
  });

  it('the live intervals and the ones derived from requests agree', () => {
    const requests = [
      { acknowledgedAt: 10, endedAt: 60 },
      { acknowledgedAt: 40, endedAt: 90 },
      { acknowledgedAt: null, endedAt: 95 },
    ];
    const live = new BusyIntervals();
    live.markBusy(10);
    live.markIdle(90);
    const derived = requests.flatMap((r) => busyIntervalOf(r) ?? []);
    for (const [from, to] of [
      [0, 30],
      [50, 100],
      [85, 200],
      [95, 200],
    ] as const) {
      expect(live.overlapMs(from, to)).toBe(overlapMs(derived, from, to));
    }
  });
});
