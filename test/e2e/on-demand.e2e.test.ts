/**
 * Models on demand in a real browser, against a built `exobar serve` with sim runners
 * and a 12 s idle time to live (settings.json): the Models panel says the 3B is
 * unloaded; a request for it through the official openai client loads it, and the page
 * shows the request waiting as "loading" in the model's queue beside the runner's
 * layers; once answered, the card and the Models panel count down to its unload
 * ("unloads in 9 s", then fewer); after the time to live it unloads, the card goes, the
 * Models panel says "unloaded" again and the Requests view lists the load and the unload.
 *
 * Screenshots: docs/images/on-demand-loading.png (the card loading), on-demand-countdown.png
 * (the card counting down), on-demand-models-row.png (the Models panel's row) and
 * on-demand-unloaded.png (the Requests view after the unload), in docs/on-demand.md and
 * the README.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/e2e/browser';
import { startServe, type ServeProcess } from '../support/e2e/serve-process';

const IMAGES = fileURLToPath(new URL('../../docs/images/', import.meta.url));
const MODEL = 'sim/llama-3.2-3b';
const NAME = 'Llama 3.2 3B (simulated)';
const TTL_SECONDS = 12;

let dataDir: string;
let serve: ServeProcess | undefined;
let browser: Browser;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'exobar-e2e-on-demand-'));
  await writeFile(join(dataDir, 'settings.json'), JSON.stringify({ onDemand: { idleTtlSeconds: TTL_SECONDS } }));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await serve?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

const seconds = (words: string) => Number(/unloads in (\d+) s/.exec(words)?.[1] ?? NaN);

describe('a model loaded for a request, then unloaded when idle', () => {
  it('shows the load with its layers, the idle countdown, and the unload', async () => {
    // Time scale 2: the 3B loads in ~3.6 s, long enough to be seen loading.
    serve = await startServe({ simTimeScale: 2, dataDir });
    // Tall enough that no panel sits under the fixed footer in the element screenshots.
    const context = await browser.newContext({ viewport: { width: 1280, height: 2200 }, colorScheme: 'light' });
    const page = await context.newPage();
    await page.goto(serve.openUrl);

    const models = page.locator('section[aria-label="Models"]');
    await models.locator('button.panel-toggle').click();
    const row = models.locator(`[data-testid="model-row"][data-model="${MODEL}"]`);
    const rowWords = row.getByTestId('model-residency-words');
    await expect.poll(() => rowWords.innerText(), { timeout: 20_000 }).toBe('unloaded');

    const client = new OpenAI({ baseURL: `${serve.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const answer = client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'a cold model, please' }], max_tokens: 16 });

    // Loading: the request waits in the new card's queue as "loading", the runner counts its layers.
    const card = page.locator('[data-testid="instance-card"]', { has: page.getByText(NAME) });
    await card.locator('[data-testid="queue-row"][data-phase="loading"]').waitFor({ timeout: 20_000 });
    const status = card.getByTestId('runner-status');
    await expect.poll(() => status.innerText(), { timeout: 10_000 }).toMatch(/Loading \d+ of 28 layers/);
    await expect.poll(() => rowWords.innerText(), { timeout: 5_000 }).toBe('loading');
    await card.screenshot({ path: join(IMAGES, 'on-demand-loading.png') });

    const done = await answer;
    expect(done.choices[0]?.finish_reason).toBe('length');

    // Idle: the countdown runs on the card and in the Models panel, a second at a time.
    const cardWords = card.getByTestId('residency-words');
    await expect.poll(() => cardWords.innerText(), { timeout: 10_000 }).toMatch(/^idle, unloads in \d+ s$/);
    const first = seconds(await cardWords.innerText());
    expect(first).toBeLessThanOrEqual(TTL_SECONDS);
    await expect.poll(async () => seconds(await cardWords.innerText()), { timeout: 5_000 }).toBeLessThan(first);
    expect(await card.getByTestId('residency-row').innerText()).toContain('Loaded on request');
    // The answer's TTFT starts with the model's load.
    expect(await card.getByTestId('ttft-breakdown').innerText()).toMatch(/^model load\s+[\d.]+ s/);
    await card.screenshot({ path: join(IMAGES, 'on-demand-countdown.png') });
    await expect.poll(() => rowWords.innerText(), { timeout: 5_000 }).toMatch(/^loaded · unloads in \d+ s$/);
    await row.screenshot({ path: join(IMAGES, 'on-demand-models-row.png') });

    // Unloaded after its time to live: the card goes, the Models panel says so, the log has both steps.
    await card.waitFor({ state: 'detached', timeout: TTL_SECONDS * 1000 + 20_000 });
    await expect.poll(() => rowWords.innerText(), { timeout: 10_000 }).toBe('unloaded');
    const requests = page.locator('section[aria-label="Requests"]');
    await requests.locator('button.panel-toggle').click();
    const events = requests.getByTestId('model-event');
    await expect
      .poll(() => events.allInnerTexts(), { timeout: 15_000 })
      .toEqual([
        expect.stringMatching(new RegExp(`${MODEL} unloaded · idle 1\\d s$`)),
        expect.stringMatching(new RegExp(`${MODEL} loaded in [\\d.]+ s · on demand for a request$`)),
      ]);
    await requests.getByTestId('request-row').first().click();
    expect(await requests.getByTestId('request-timeline').innerText()).toMatch(/model load [\d.]+ s · wait/);
    await requests.screenshot({ path: join(IMAGES, 'on-demand-unloaded.png') });
    await context.close();
  }, 120_000);
});
