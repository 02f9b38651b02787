/** History on real files with a clock the test moves: minutes, hours past a day, 30 days, the slower_than_usual warning. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RequestRecord } from '../../../shared/request-record';
import { requestRecord } from '../../../test/support/request-record-fixture';
import { History } from './history';

const MIN = 60_000;
const DAY = 86_400_000;
let dir: string;
let now = Date.UTC(2026, 11, 1, 12, 0, 0);
const open = () => new History({ dataDir: dir, flushMs: 3_600_000, now: () => now });

function record(model: string, ttftMs: number, outcome: RequestRecord['outcome'] = 'done'): RequestRecord {
  return requestRecord({ id: `r${Math.random()}`, at: now - 1000, endedAt: now, instance: 'i-1', model, ttftMs, outcome });
}

afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('History', () => {
  it('keeps per-minute figures across a reopen, merges parts of a minute, compacts to hours after a day and drops 30 days', () => {
    dir = mkdtempSync(join(tmpdir(), 'history-'));
    now = Date.UTC(2026, 10, 1, 12, 0, 0);
    let h = open();
    // Day 0: two rows for one minute (a flush in the middle), then the next minute.
    h.observe(record('m', 100));
    h.flush();
    h.observe(record('m', 300));
    h.observe(record('m', 200, 'failed'));
    h.restart('m');
    h.queue('m', 4);
    now += MIN;
    h.observe(record('m', 1000));
    h.close();
    h = open();
    const day = h.query('1h', 'm').models[0]!;
    expect(day.points.map((p) => [p.requests, p.errors, p.restarts, p.queueMax])).toEqual([
      [3, 1, 1, 4],
      [1, 0, 0, 0],
    ]);
    // Geometric buckets: the percentile is at most 10% above the true value.
    expect(day.points[0]!.ttftP50Ms).toBeGreaterThanOrEqual(200);
    expect(day.points[0]!.ttftP50Ms).toBeLessThanOrEqual(220);
    expect(day.points[0]!.decodeTokensPerSecondP50).toBeGreaterThanOrEqual(40);
    h.close();
    // Two days later the minutes are one hour; 31 days later they are gone.
    now += 2 * DAY;
    h = open();
    const week = h.query('7d', 'm').models[0]!;
    expect(week.points).toHaveLength(1);
    expect(week.points[0]).toMatchObject({ spanMs: 3_600_000, requests: 4, errors: 1, restarts: 1, queueMax: 4 });
    expect(h.query('24h').models).toEqual([]);
    h.close();
    now += 29 * DAY;
    h = open();
    expect(h.query('30d').models).toEqual([]);
    h.close();
  });

  it('warns slower_than_usual when the last hour is over 1.5x the 7-day median at similar load, with both figures', () => {
    dir = mkdtempSync(join(tmpdir(), 'history-'));
    now = Date.UTC(2026, 10, 20, 0, 0, 0);
    const h = open();
    // Three days of two requests a minute for an hour each day at ~200 ms; and busier hours at 2 s (other load: not compared).
    for (let d = 0; d < 3; d++) {
      for (let m = 0; m < 60; m++) {
        h.observe(record('m', 200));
        h.observe(record('m', 210));
        now += MIN;
      }
      for (let m = 0; m < 30; m++) {
        for (let k = 0; k < 20; k++) h.observe(record('m', 2000));
        now += MIN;
      }
      now += DAY - 90 * MIN;
    }
    expect(h.slowerThanUsual('m')).toBeNull();
    // The last hour: the same load, 400 ms.
    for (let m = 0; m < 30; m++) {
      h.observe(record('m', 400));
      h.observe(record('m', 420));
      now += MIN;
    }
    const warning = h.slowerThanUsual('m')!;
    expect(warning).toMatchObject({ code: 'slower_than_usual', model: 'm', requestsPerMinute: 2 });
    expect(warning.lastHourP50Ms).toBeGreaterThanOrEqual(400);
    expect(warning.usualP50Ms).toBeGreaterThanOrEqual(200);
    expect(warning.usualP50Ms).toBeLessThan(250);
    expect(h.query('1h').models[0]!.slowerThanUsual).toEqual(warning);
    h.close();
  });
});
