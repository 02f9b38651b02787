/**
 * How the page copes with a busy node: 2 models × 8 streaming clients (the load of
 * the fast-synch collapse measurement in docs/domain.md), measured in Chromium over a
 * fixed window: frames per second (requestAnimationFrame), main-thread busy time
 * (CDP Performance.getMetrics TaskDuration), long tasks, and how often the store
 * applied a snapshot. Writes the figures to screenshots/perf.json.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Browser, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/e2e/browser';
import { drainChat } from '../support/e2e/chat-client';
import { startServe, type ServeProcess } from '../support/e2e/serve-process';

const SHOTS = fileURLToPath(new URL('../../screenshots/', import.meta.url));
const WINDOW_MS = 5_000;
const STREAMS_PER_MODEL = 8;
const MODELS = ['sim/llama-3.2-1b', 'sim/llama-3.2-3b'];

let serve: ServeProcess;
let browser: Browser;
let page: Page;
const chats: { abort(): void }[] = [];

beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  // Real time (scale 1): the streams decode at the calibrated speed for the whole window.
  serve = await startServe({ simTimeScale: 1 });
  const launched = await fetch(`${serve.url}/api/launch/safe-pair`, { method: 'POST', headers: { Authorization: `Bearer ${serve.token}` } });
  expect(launched.status, await launched.clone().text()).toBe(200);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 400, height: 600 } });
});

afterAll(async () => {
  for (const c of chats) c.abort();
  await browser?.close();
  await serve?.stop();
});

async function metric(cdp: CDPSession, name: string): Promise<number> {
  const { metrics } = (await cdp.send('Performance.getMetrics')) as { metrics: { name: string; value: number }[] };
  return metrics.find((m) => m.name === name)?.value ?? 0;
}

describe('renderer under 16 streams', () => {
  it('keeps frames flowing and the main thread mostly idle while 2 models × 8 streams decode', async () => {
    await page.goto(serve.openUrl);
    await page.getByTestId('instance-card').nth(1).waitFor();

    for (const model of MODELS) {
      for (let i = 0; i < STREAMS_PER_MODEL; i++) chats.push(drainChat(serve.url, model, 200, 50_000));
    }
    // Wait until all 16 decode (the runner admits one new task per step).
    await expect
      .poll(async () => page.locator('[data-testid=queue-row][data-phase=decoding]').count(), { timeout: 30_000 })
      .toBe(MODELS.length * STREAMS_PER_MODEL);

    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
    await page.evaluate(() => {
      const w = window as unknown as { __frames: number; __longTasks: number[]; __stop: boolean };
      w.__frames = 0;
      w.__longTasks = [];
      w.__stop = false;
      const tick = () => {
        w.__frames += 1;
        if (!w.__stop) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
      new PerformanceObserver((list) => list.getEntries().forEach((e) => w.__longTasks.push(e.duration))).observe({ type: 'longtask' });
    });
    const applied0 = Number(await page.locator('.app').getAttribute('data-applied'));
    const task0 = await metric(cdp, 'TaskDuration');
    const script0 = await metric(cdp, 'ScriptDuration');
    const t0 = Date.now();
    await page.waitForTimeout(WINDOW_MS);
    const elapsedS = (Date.now() - t0) / 1000;
    const task1 = await metric(cdp, 'TaskDuration');
    const script1 = await metric(cdp, 'ScriptDuration');
    const applied1 = Number(await page.locator('.app').getAttribute('data-applied'));
    const { frames, longTasks } = await page.evaluate(() => {
      const w = window as unknown as { __frames: number; __longTasks: number[]; __stop: boolean };
      w.__stop = true;
      return { frames: w.__frames, longTasks: w.__longTasks };
    });
    const decodingAtEnd = await page.locator('[data-testid=queue-row][data-phase=decoding]').count();
    await page.screenshot({ path: `${SHOTS}06-16-streams.png` });

    const result = {
      streams: MODELS.length * STREAMS_PER_MODEL,
      decodingAtEnd,
      windowS: Number(elapsedS.toFixed(2)),
      framesPerSecond: Number((frames / elapsedS).toFixed(1)),
      mainThreadBusyPercent: Number((((task1 - task0) / elapsedS) * 100).toFixed(1)),
      scriptPercent: Number((((script1 - script0) / elapsedS) * 100).toFixed(1)),
      snapshotsAppliedPerSecond: Number(((applied1 - applied0) / elapsedS).toFixed(1)),
      longTasks: longTasks.length,
      longestTaskMs: longTasks.length ? Math.round(Math.max(...longTasks)) : 0,
    };
    await writeFile(`${SHOTS}perf.json`, `${JSON.stringify(result, null, 2)}\n`);
    console.log('renderer under load:', result);

    expect(decodingAtEnd).toBe(16);
    // The store applies at most ~10 snapshots a second however fast they come.
    expect(result.snapshotsAppliedPerSecond).toBeLessThanOrEqual(11);
    // Loose bounds for a shared 2-core machine: the page must stay responsive, not fast.
    expect(result.mainThreadBusyPercent).toBeLessThan(50);
    expect(result.framesPerSecond).toBeGreaterThan(20);
  });
});
