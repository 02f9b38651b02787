/**
 * exo as it really behaves, in a real browser: `exobar serve --exo URL` over the serving
 * fake exo, which downloads a model on studio-a and cancels as exo 0.3.70 does (its
 * runner goes on generating the cancelled request). The Mac's row shows the ongoing
 * download with its progress; the card shows "still generating a cancelled request"
 * with the exo_cancelled_still_running warning.
 *
 * Screenshot: docs/images/exo-download-ghost.png (the README's exo section).
 */
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePrompt } from '../../shared/token-count';
import { startFakeDownload } from '../support/fake-exo/fake-downloads';
import { LLAMA_1B, QWEN_30B } from '../support/fake-exo/scenarios';
import { startServingExo, stallCluster, type ServingExo } from '../support/fake-exo/worker/serving-exo';
import { launchChromium } from '../support/e2e/browser';
import { startServe, type ServeProcess } from '../support/e2e/serve-process';

const IMAGES = fileURLToPath(new URL('../../docs/images/', import.meta.url));
const GB = 1024 ** 3;

let exo: ServingExo;
let serve: ServeProcess;
let browser: Browser;
let page: Page;
let ticker: NodeJS.Timeout | null = null;

beforeAll(async () => {
  const cluster = stallCluster();
  const download = startFakeDownload(cluster, 'studio-a', QWEN_30B, 16 * GB);
  let bytes = 3 * GB;
  ticker = setInterval(() => download.progress((bytes += 60e6), 60e6), 1_000);
  exo = await startServingExo({ cluster, timeScale: 2 });
  serve = await startServe({ simTimeScale: 0.1, args: ['--exo', exo.url] });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 420, height: 700 }, colorScheme: 'light' });
});

afterAll(async () => {
  if (ticker) clearInterval(ticker);
  await browser?.close();
  await serve?.stop();
  await exo?.close();
});

describe('exo downloads and a cancelled request exo keeps generating, in the page', () => {
  it("shows the ongoing download on the Mac's row and the ghost generation with its warning", async () => {
    await page.goto(serve.openUrl);
    await expect.poll(() => page.getByTestId('exo-connection').textContent(), { timeout: 30_000 }).toBe('connected');
    const progress = page.locator('[data-testid="exo-node"][data-node="studio-a"] [data-testid="exo-download-progress"]');
    // Speed and time left need two reads of /state/downloads, 5 s apart.
    await expect.poll(() => progress.textContent(), { timeout: 20_000 }).toMatch(/^\d+% · \d+\.\d GB of 16\.0 GB · \d+ MB\/s · (\d+ m )?\d+ s left$/);

    // A long answer through exobar, cancelled after a few chunks: exo's runner goes on.
    const response = await fetch(`${serve.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: LLAMA_1B, messages: makePrompt(30, 'e2e-ghost'), max_tokens: 3000, stream: true }),
    });
    const reader = response.body!.getReader();
    let text = '';
    while (!/"id":"([^"]+)"/.test(text)) text += new TextDecoder().decode((await reader.read()).value);
    const id = /"id":"([^"]+)"/.exec(text)![1]!;
    await fetch(`${serve.url}/v1/cancel/${id}`, { method: 'POST' });
    while (!(await reader.read()).done);

    const card = page.locator(`[data-testid="instance-card"][data-instance="exo:${LLAMA_1B}"]`);
    await expect
      .poll(() => card.getByTestId('exo-ghost-generation').textContent(), { timeout: 10_000 })
      .toMatch(/still generating a cancelled request, [2-9] s/);
    const banner = page.locator('[data-testid="warning-banner"][data-code="exo_cancelled_still_running"]');
    expect(await banner.textContent()).toContain('Llama-3.2-1B-Instruct-4bit on studio-a is still generating a cancelled request');
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    await page.setViewportSize({ width: 420, height });
    await page.screenshot({ path: `${IMAGES}exo-download-ghost.png` });
  });
});
