/**
 * What exobar remembers across a restart, in a real browser: a built `exobar serve`
 * with a sim runner serves a few requests through the official openai client and is
 * stopped; a new `exobar serve` on the same data directory (no runner now) lists those
 * requests in the Requests view, opens one's timeline, and draws the model's history
 * chart.
 *
 * Screenshots: docs/images/requests-after-restart.png and history-after-restart.png
 * (the README's).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/e2e/browser';
import { controlClient } from '../support/e2e/control-client';
import { startServe, type ServeProcess } from '../support/e2e/serve-process';

const IMAGES = fileURLToPath(new URL('../../docs/images/', import.meta.url));
const MODEL = 'sim/llama-3.2-1b';
const REQUESTS = 5;

let dataDir: string;
let serve: ServeProcess | undefined;
let browser: Browser;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'exobar-e2e-restart-'));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await serve?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('the request log and history after a restart', () => {
  it('lists the earlier requests and draws their history chart', async () => {
    serve = await startServe({ simTimeScale: 0.25, dataDir });
    const first = serve;
    const res = await fetch(`${first.url}/api/instances`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${first.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: MODEL }),
    });
    expect(res.status, await res.clone().text()).toBeLessThan(300);
    const control = controlClient(first.url, first.token);
    await expect
      .poll(async () => (await control.state()).instances.find((i) => i.model === MODEL && i.source === 'local' && i.runner.state === 'ready') != null, {
        timeout: 60_000,
      })
      .toBe(true);
    const client = new OpenAI({ baseURL: `${first.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    for (let i = 0; i < REQUESTS; i++) {
      const answer = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: `before the restart ${i}` }], max_tokens: 4 });
      expect(answer.choices[0]?.finish_reason).toBe('length');
    }
    // A graceful stop (SIGTERM), then a new process on the same data directory.
    await first.stop();
    serve = await startServe({ simTimeScale: 0.25, dataDir });

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
    const page = await context.newPage();
    await page.goto(serve.openUrl);

    const requests = page.locator('section[aria-label="Requests"]');
    await requests.locator('button.panel-toggle').click();
    const rows = requests.getByTestId('request-row');
    await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(REQUESTS);
    for (const row of await rows.all()) {
      const text = await row.innerText();
      expect(text).toContain(MODEL);
      expect(text).toContain('local');
    }
    await rows.first().click();
    await requests.getByTestId('request-timeline').waitFor({ timeout: 5_000 });
    await requests.screenshot({ path: join(IMAGES, 'requests-after-restart.png') });

    const history = page.locator('section[aria-label="History"]');
    await history.locator('button.panel-toggle').click();
    const chart = history.locator(`[data-testid="history-chart"][data-model="${MODEL}"]`);
    await chart.waitFor({ timeout: 20_000 });
    expect(await chart.locator('h3').innerText()).toContain(`${REQUESTS} requests`);
    // recharts drew the minute's bar of requests, the legend, and the TTFT p50 and p95:
    // these requests fall in one minute or two, and a single minute's figures are dots.
    await chart.locator('.recharts-bar-rectangle').first().waitFor({ timeout: 10_000 });
    expect(await chart.locator('.recharts-legend-item').allInnerTexts()).toEqual(['TTFT p50', 'TTFT p95', 'requests/min']);
    const minutes = await chart.locator('.recharts-bar-rectangle').count();
    if (minutes === 1) expect(await chart.locator('.recharts-line-dot').count()).toBe(2);
    else expect(await chart.locator('.recharts-line-curve').count()).toBe(2);
    // Tall enough that the sticky footer does not cover the chart's legend in the screenshot.
    await page.setViewportSize({ width: 1280, height: 1600 });
    await history.screenshot({ path: join(IMAGES, 'history-after-restart.png') });
    await context.close();
  });
});
