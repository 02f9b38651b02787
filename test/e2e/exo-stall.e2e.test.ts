/**
 * exo's dispatch stall in a real browser: `exobar serve --exo` attached to the serving
 * fake exo with the blocking worker (stock exo's plan loop), the 1B and the 3B on one
 * Mac. A long prompt to the 3B through exobar, a second 3B request sent straight to exo
 * (bypassing exobar, so exobar's hold cannot keep it back: exo's worker now waits for
 * the prefilling 3B's acknowledgement), and a short request to the 1B through exobar:
 * the page shows `exo_dispatch_stall` naming both models, and the 3B's card its prefill.
 *
 * Screenshot: screenshots/exo-stall.png (docs/images/exo-stall.png is a copy).
 */
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LLAMA_1B, LLAMA_3B } from '../support/fake-exo/scenarios';
import { streamChatText } from '../support/fake-exo/stream-chat';
import { startServingExo, type ServingExo } from '../support/fake-exo/worker/serving-exo';
import { launchChromium } from '../support/e2e/browser';
import { startServe, type ServeProcess } from '../support/e2e/serve-process';

const SHOTS = fileURLToPath(new URL('../../screenshots/', import.meta.url));

let exo: ServingExo;
let serve: ServeProcess;
let browser: Browser;
let page: Page;
const controller = new AbortController();

/** A streamed chat completion to `base`, read to its end in the background. */
function stream(base: string, model: string, tokens: number, salt: string): Promise<unknown> {
  return streamChatText(base, model, tokens, salt, controller.signal);
}

beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  // Time scale 0.5: the 3B's 60k-token prefill takes about 19 s, the stall shows after 2 s.
  exo = await startServingExo({ mode: 'blocking', timeScale: 0.5 });
  serve = await startServe({ simTimeScale: 0.1, args: ['--exo', exo.url] });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 420, height: 700 }, colorScheme: 'light' });
});

afterAll(async () => {
  controller.abort();
  await browser?.close();
  await serve?.stop();
  await exo?.close();
});

describe('the stall on the blocking fake exo', () => {
  it('shows exo_dispatch_stall naming both models when a request bypasses exobar', async () => {
    await page.goto(serve.openUrl);
    await expect.poll(() => page.getByTestId('exo-connection').textContent(), { timeout: 30_000 }).toBe('connected');
    const card3b = page.locator(`[data-testid="instance-card"][data-instance="exo:${LLAMA_3B}"]`);
    await expect.poll(() => card3b.count(), { timeout: 15_000 }).toBe(1);

    const long = stream(serve.url, LLAMA_3B, 60_000, 'long');
    await expect.poll(() => card3b.getByTestId('prefill').count(), { timeout: 15_000 }).toBe(1);
    const bypass = stream(exo.url, LLAMA_3B, 50, 'bypass');
    await expect.poll(() => exo.worker.openCommands().length, { timeout: 5000 }).toBe(2);
    const short = stream(serve.url, LLAMA_1B, 50, 'short');

    const banner = page.locator('[data-testid="warning-banner"][data-code="exo_dispatch_stall"]');
    await expect.poll(() => banner.count(), { timeout: 10_000 }).toBe(1);
    const text = (await banner.textContent()) ?? '';
    expect(text).toContain(LLAMA_1B);
    expect(text).toContain(LLAMA_3B);
    expect(text).toContain('that exobar did not send');
    expect(text).toContain('exo PR 2348');
    // The 1B's request waits, sent to exo, with no progress; the 3B's card shows the prefill and exo's task it did not send.
    const card1b = page.locator(`[data-testid="instance-card"][data-instance="exo:${LLAMA_1B}"]`);
    expect(await card1b.locator('[data-testid="queue-row"][data-phase="awaiting_ack"]').count()).toBe(1);
    expect(await card3b.locator('[data-testid="exo-task"][data-observed="false"]').count()).toBe(1);

    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    await page.setViewportSize({ width: 420, height });
    await page.screenshot({ path: `${SHOTS}exo-stall.png` });
    controller.abort();
    await Promise.all([long, bypass, short]);
  });
});
