/**
 * `slower_than_usual` as an active warning: from a history with a clock the test moves,
 * into a real node's snapshot (both figures in it), the warnings gauge of /metrics and
 * the tray's lines; it clears once the last hour is back to the usual figure.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RequestRecord } from '../../shared/request-record';
import { trayViewOf } from '../../electron/main/tray-state';
import { ExobarMetrics } from '../../electron/core/metrics/exobar-metrics';
import { createNode } from '../../electron/core/node/node';
import { History } from '../../electron/core/history/history';
import { watchSlowerThanUsual } from '../../electron/core/history/slower-warnings';

const MIN = 60_000;
const DAY = 86_400_000;
const MODEL = 'sim/llama-3.2-1b';
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'slower-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Two requests a minute with these TTFTs, for `minutes` minutes. */
function traffic(history: History, clock: { now: number }, minutes: number, ttftMs: number): void {
  for (let m = 0; m < minutes; m++) {
    for (const ttft of [ttftMs, ttftMs + 10]) {
      history.observe({ id: `r${clock.now}-${ttft}`, at: clock.now - 1000, endedAt: clock.now, model: MODEL, ttftMs: ttft, outcome: 'done' } as RequestRecord);
    }
    clock.now += MIN;
  }
}

describe('slower_than_usual as an active warning', () => {
  it('is in the snapshot with both figures, in the warnings gauge and the tray, and clears when the hour is back to usual', async () => {
    const clock = { now: Date.UTC(2026, 10, 20, 0, 0, 0) };
    const history = new History({ dataDir: tempDir(), flushMs: 3_600_000, now: () => clock.now });
    // Three days of an hour at ~200 ms, then the last half hour at the same load at ~400 ms.
    for (let d = 0; d < 3; d++) {
      traffic(history, clock, 60, 200);
      clock.now += DAY - 60 * MIN;
    }
    traffic(history, clock, 30, 400);

    const node = createNode({ dataDir: tempDir(), simTimeScale: 0.1 });
    const instance = await node.createInstance({ model: MODEL, instanceType: 'ring', fastSynch: 'auto', acknowledgeRisk: false });
    const metrics = new ExobarMetrics({ snapshot: () => node.snapshot(), mac: 'mac' });
    const stop = watchSlowerThanUsual(history, node, node.hub, 3_600_000);
    try {
      const warning = node.snapshot().warnings.find((w) => w.code === 'slower_than_usual');
      expect(warning).toMatchObject({ code: 'slower_than_usual', model: MODEL, instanceIds: [instance.id] });
      const figures = /TTFT p50 (\d+) ms over the last hour, against (\d+) ms usually/.exec(warning!.title);
      expect(figures, warning!.title).not.toBeNull();
      expect(Number(figures![1])).toBeGreaterThanOrEqual(400);
      expect(Number(figures![2])).toBeGreaterThanOrEqual(200);
      expect(Number(figures![2])).toBeLessThan(250);
      expect(warning!.risk).toContain('at similar load (2 requests/min)');
      expect((await metrics.scrape()).text).toMatch(/^exobar_warnings_active\{code="slower_than_usual"\} 1$/m);
      const tray = trayViewOf(node.snapshot());
      expect(tray.state).toBe('warning');
      expect(tray.tooltip.split('\n')).toContain(`Warning: ${warning!.title}`);
      // The event log says it was raised, as for every warning.
      expect(node.eventLog.all().some((e) => e.kind === 'warning_raised' && e.data.code === 'slower_than_usual')).toBe(true);
    } finally {
      stop();
    }

    // An hour later at the usual figure: read again, the warning is gone.
    clock.now += 61 * MIN;
    traffic(history, clock, 30, 200);
    const again = watchSlowerThanUsual(history, node, node.hub, 3_600_000);
    try {
      expect(node.snapshot().warnings.map((w) => w.code)).not.toContain('slower_than_usual');
      expect((await metrics.scrape()).text).not.toMatch(/^exobar_warnings_active\{code="slower_than_usual"\} 1$/m);
    } finally {
      again();
    }
    history.close();
    await node.shutdown();
  });
});
