/**
 * What an operator sees and is asked, in a real browser against `exobar serve` with sim
 * runners: "Token refused" told from "Cannot reach exobar" (with the real token file);
 * a launch in plain words (the runner's "Loading N of M layers" and the header's
 * loading state on the way, "Ready" with exo's name in the tooltip, the plan's
 * lifecycle states); the queue and jargon explained; the wide layout at 1280 px (cards
 * side by side, the chart filling its card) against the popover's 420 px; and Stop /
 * Stop all asking before they end requests in flight.
 *
 * Screenshots: docs/images/page-420.png and page-1280.png (the README's).
 */
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/e2e/browser';
import { streamChat, type StreamingChat } from '../support/e2e/chat-client';
import { startServe, type ServeProcess } from '../support/e2e/serve-process';
import { MEDIUM, simCards, SMALL } from '../support/e2e/sim-cards';

const IMAGES = fileURLToPath(new URL('../../docs/images/', import.meta.url));
// 0.5: loading takes long enough to be seen in a snapshot or two; a 60k prompt prefills for seconds.
const SIM_TIME_SCALE = 0.5;

let serve: ServeProcess;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const chats: StreamingChat[] = [];

const { card1b, card3b } = simCards(() => page);

/** A fresh page in its own context (its own sessionStorage, so no token carries over). */
async function freshPage(width = 420): Promise<{ context: BrowserContext; page: Page }> {
  const ctx = await browser.newContext({ viewport: { width, height: 800 }, colorScheme: 'light' });
  return { context: ctx, page: await ctx.newPage() };
}

/** A page that never got a snapshot says nothing about models, warnings or the server's version. */
async function expectNoInventedFacts(p: Page): Promise<void> {
  expect(await p.getByTestId('running-count').count()).toBe(0);
  expect(await p.getByTestId('warning-count').count()).toBe(0);
  expect(await p.getByTestId('version').count()).toBe(0);
  expect(await p.locator('body').innerText()).not.toMatch(/models? running|\bwarnings?\b|v0\.0\.0/);
}

beforeAll(async () => {
  serve = await startServe({ simTimeScale: SIM_TIME_SCALE });
  browser = await launchChromium();
  ({ context, page } = await freshPage());
});

afterAll(async () => {
  for (const c of chats) c.abort();
  await browser?.close();
  await serve?.stop();
});

describe('an operator against exobar serve', () => {
  it('says "Token refused" for a stale token, with the real token file and the address to open', async () => {
    const stale = await freshPage();
    try {
      await stale.page.goto(`${serve.url}/#token=stale-token-from-another-data-dir`);
      const banner = stale.page.getByTestId('connection-error');
      await banner.waitFor({ timeout: 15_000 });
      expect(await banner.locator('h2').innerText()).toBe('Token refused');
      const text = await banner.innerText();
      expect(text).toContain(`The token is in ${serve.dataDir}/token`);
      expect(text).toContain(`${serve.url}/#token=`);
      expect(text).toContain('The token stays the same when the server restarts.');
      expect(text).not.toContain(serve.token);
      expect(await stale.page.getByTestId('app-header').innerText()).toContain('Token refused');
      await expectNoInventedFacts(stale.page);
    } finally {
      await stale.context.close();
    }
  });

  it('says "No access token" without one, and where it is', async () => {
    const bare = await freshPage();
    try {
      await bare.page.goto(`${serve.url}/`);
      const banner = bare.page.getByTestId('connection-error');
      await banner.filter({ hasText: `The token is in ${serve.dataDir}/token` }).waitFor({ timeout: 15_000 });
      expect(await banner.locator('h2').innerText()).toBe('No access token');
      await expectNoInventedFacts(bare.page);
    } finally {
      await bare.context.close();
    }
  });

  it('says "Cannot reach exobar" when nothing answers (the network refuses the connection)', async () => {
    const cut = await freshPage();
    try {
      await cut.page.route('**/api/events', (route) => route.abort('connectionrefused'));
      await cut.page.goto(serve.openUrl);
      const banner = cut.page.getByTestId('connection-error');
      await banner.waitFor({ timeout: 15_000 });
      expect(await banner.locator('h2').innerText()).toBe('Cannot reach exobar');
      expect(await banner.innerText()).toContain(`Nothing answers at ${serve.url}`);
      expect(await cut.page.getByTestId('app-header').innerText()).toContain('Cannot reach exobar');
    } finally {
      await cut.context.close();
    }
  });

  it("launches in plain words: loading on the way (header and card), then Ready with exo's name in the tooltip", async () => {
    await page.goto(serve.openUrl);
    await page.getByTestId('plan-row').first().waitFor({ timeout: 15_000 });
    // Record every runner status and header level the page shows, however briefly.
    await page.evaluate(() => {
      const seen = { statuses: new Set<string>(), levels: new Set<string>() };
      (window as unknown as { seen: typeof seen }).seen = seen;
      const record = () => {
        for (const el of document.querySelectorAll('[data-testid=runner-status]')) seen.statuses.add(el.textContent ?? '');
        seen.levels.add(document.querySelector('[data-testid=app-header]')?.getAttribute('data-level') ?? '');
      };
      new MutationObserver(record).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
    });
    await page.getByRole('button', { name: 'Launch safe pair' }).click();
    for (const c of [card1b(), card3b()]) {
      const status = c.getByTestId('runner-status').filter({ hasText: /^Ready$/ });
      await status.waitFor({ timeout: 60_000 });
      expect(await status.getAttribute('title')).toBe('exo status: RunnerReady');
    }
    const seen = await page.evaluate(() => {
      const s = (window as unknown as { seen: { statuses: Set<string>; levels: Set<string> } }).seen;
      return { statuses: [...s.statuses], levels: [...s.levels] };
    });
    expect(seen.statuses.some((s) => /^Loading \d+ of \d+ layers$/.test(s))).toBe(true);
    expect(seen.statuses.filter((s) => /^Runner/.test(s))).toEqual([]);
    expect(seen.levels).toContain('loading');
    await page.getByTestId('app-header').filter({ hasText: 'All good' }).waitFor({ timeout: 30_000 });
    // The plan says the reused models serve, and never "running" for one still loading.
    await expect.poll(async () => page.getByTestId('plan-state').allInnerTexts(), { timeout: 15_000 }).toEqual(['serving', 'serving']);
  });

  it('explains the queue and the jargon in tooltips', async () => {
    const count = card3b().getByTestId('queue-count');
    expect(await count.innerText()).toBe('0 / 64');
    expect(await count.getAttribute('title')).toBe(
      'Requests this model holds: waiting in the queue or running on the runner. At 64, a new request is refused with 429 (queue_full) until one finishes.',
    );
    expect(await card3b().getByText('TTFT', { exact: true }).getAttribute('title')).toMatch(/^TTFT, time to first token/);
    expect(await card3b().getByText('ring', { exact: true }).getAttribute('title')).toMatch(/^ring: /);
    expect(await card3b().getByText('Fast synch', { exact: true }).getAttribute('title')).toMatch(/MLX_METAL_FAST_SYNCH/);
  });

  it("counts the logged requests live in the Requests heading while it is collapsed", async () => {
    const logged = page.getByTestId('requests-logged');
    await logged.waitFor({ timeout: 15_000 });
    const before = Number.parseInt(await logged.innerText(), 10);
    for (let n = 1; n <= 3; n++) {
      const chat = streamChat(serve.url, SMALL, 40, 4);
      expect((await chat.done).error).toBeNull();
      await expect.poll(async () => logged.innerText(), { timeout: 15_000 }).toBe(`${before + n} logged`);
    }
    expect(await page.getByRole('button', { name: /^Requests/ }).getAttribute('aria-expanded')).toBe('false');
  });

  it('shows the cards side by side at 1280 px with the chart filling its card, and one column at 420 px', async () => {
    for (let i = 0; i < 3; i++) {
      const a = streamChat(serve.url, SMALL, 60, 8);
      const b = streamChat(serve.url, MEDIUM, 60, 8);
      expect((await a.done).error).toBeNull();
      expect((await b.done).error).toBeNull();
    }
    await card1b().getByTestId('ttft-chart').waitFor();
    await card3b().getByTestId('ttft-chart').waitFor();
    const boxes = async () => {
      const [a, b] = [await card1b().boundingBox(), await card3b().boundingBox()];
      const chart = await card1b().locator('.recharts-wrapper svg').boundingBox();
      if (!a || !b || !chart) throw new Error('a card or its chart has no box');
      return { a, b, chart };
    };

    await page.setViewportSize({ width: 420, height: 900 });
    await expect.poll(async () => (await boxes()).chart.width, { timeout: 5_000 }).toBeLessThan(400);
    const narrow = await boxes();
    expect(narrow.a.x).toBe(narrow.b.x);
    expect(narrow.b.y).toBeGreaterThan(narrow.a.y + narrow.a.height - 1);
    expect(narrow.chart.width).toBeGreaterThan(narrow.a.width - 40);
    await page.screenshot({ path: `${IMAGES}page-420.png` });

    await page.setViewportSize({ width: 1280, height: 800 });
    await expect.poll(async () => (await boxes()).chart.width, { timeout: 5_000 }).toBeGreaterThan(500);
    const wide = await boxes();
    expect(wide.a.y).toBe(wide.b.y);
    expect(wide.b.x).toBeGreaterThan(wide.a.x + wide.a.width - 1);
    expect(wide.a.width).toBeGreaterThan(560);
    // The chart fills its card (the card's padding aside).
    expect(wide.chart.width).toBeGreaterThan(wide.a.width - 40);
    await page.screenshot({ path: `${IMAGES}page-1280.png` });
    await page.setViewportSize({ width: 420, height: 800 });
  });

  it('asks before Stop ends requests in flight, says how many, and stops only when confirmed', async () => {
    const long = streamChat(serve.url, MEDIUM, 60_000, 16);
    chats.push(long);
    await card3b().getByTestId('queue-row').first().waitFor({ timeout: 15_000 });
    await card3b().getByRole('button', { name: 'Stop Llama 3.2 3B (simulated)' }).click();
    const dialog = page.getByRole('alertdialog', { name: 'Stop Llama 3.2 3B (simulated)?' });
    await dialog.waitFor();
    expect(await dialog.innerText()).toContain('1 request will end');
    await dialog.getByRole('button', { name: 'Keep running' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await card3b().count()).toBe(1);

    await card3b().getByRole('button', { name: 'Stop Llama 3.2 3B (simulated)' }).click();
    await dialog.getByRole('button', { name: 'Stop anyway' }).click();
    await card3b().waitFor({ state: 'detached', timeout: 30_000 });
    expect((await long.done).error).toMatch(/instance_deleted|deleted|stopped/i);
    expect(await page.getByTestId('notice').count()).toBe(0);
  });

  it('asks before Stop all, and stops every model once confirmed', async () => {
    const longer = streamChat(serve.url, SMALL, 20_000, 400);
    chats.push(longer);
    await card1b().getByTestId('queue-row').first().waitFor({ timeout: 15_000 });
    await page.getByRole('button', { name: 'Stop all' }).click();
    const dialog = page.getByRole('alertdialog', { name: 'Stop all models?' });
    await dialog.waitFor();
    expect(await dialog.innerText()).toContain('1 request will end');
    await dialog.getByRole('button', { name: 'Stop all anyway' }).click();
    await page.getByText('No models running — launch the safe pair').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('notice').count()).toBe(0);
    await context.close();
  });
});
