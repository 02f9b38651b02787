/**
 * The page in a real browser against `exobar serve` with sim runners: launch the safe
 * pair from the UI, a long prompt plus a queued request on the 3B and short requests on
 * the 1B, then see the queue, the prefill progress advancing, a held cancellation after
 * cancelling from the UI, TTFT samples on the chart, and the shared-GPU warning (with its
 * fix) after forcing fast synch on for both ring instances.
 *
 * Screenshots go to screenshots/ (gitignored).
 */
import { mkdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mlxPlatform } from '../../electron/core/mlx/mlx-platform';
import { launchChromium } from '../support/e2e/browser';
import { streamChat, type StreamingChat } from '../support/e2e/chat-client';
import { controlClient } from '../support/e2e/control-client';
import { startServe, type ServeProcess } from '../support/e2e/serve-process';
import { MEDIUM, simCards, SMALL } from '../support/e2e/sim-cards';

const SHOTS = fileURLToPath(new URL('../../screenshots/', import.meta.url));
// 0.25: the 3B prefills a 60k-token prompt in ~9.5 s, one 4096-token chunk every ~0.65 s:
// long enough to watch, short enough for CI.
const SIM_TIME_SCALE = 0.25;
/** The long 3B prompt: about 9.5 s of prefill at this time scale (1,590 tokens/s at scale 1). */
const LONG_PROMPT = 60_000;

let serve: ServeProcess;
let browser: Browser;
let page: Page;
const chats: StreamingChat[] = [];

const { card1b, card3b } = simCards(() => page);
/** The popover's size, and (`full`) the whole page for the README. */
const shot = async (name: string, full = false) => {
  await page.screenshot({ path: `${SHOTS}${name}.png` });
  if (!full) return;
  // Grow the viewport to the content instead of `fullPage`, which leaves the sticky footer mid-page.
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  await page.setViewportSize({ width: 400, height });
  await page.screenshot({ path: `${SHOTS}${name}-full.png` });
  await page.setViewportSize({ width: 400, height: 600 });
};

beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  // exo's schedule: the runner acknowledges only after a prefill, so a cancellation is held (what this page shows).
  serve = await startServe({ simTimeScale: SIM_TIME_SCALE, settings: { runner: { schedule: 'exo' } } });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 400, height: 600 }, colorScheme: 'light' });
});

afterAll(async () => {
  for (const c of chats) c.abort();
  await browser?.close();
  await serve?.stop();
});

describe('the page against exobar serve', () => {
  it('takes the token from the address, drops it from the URL, and shows the empty state', async () => {
    await page.goto(serve.openUrl);
    await page.getByText('No models running — launch the safe pair').waitFor();
    expect(page.url()).toBe(`${serve.url}/`);
    expect(await page.evaluate(() => sessionStorage.getItem('exobar.token'))).toBe(serve.token);
    await page.getByTestId('plan-row').first().waitFor();
    expect(await page.getByTestId('plan-row').count()).toBe(2);
    expect(await page.getByRole('region', { name: 'Safe launch' }).innerText()).toContain('fast synch off, the rule for ring instances');
    await shot('01-empty');
  });

  it("lists the catalog in the Models panel with the MLX engine's state, from the real API", async () => {
    const models = page.getByRole('region', { name: 'Models' });
    const toggle = models.getByRole('button', { name: /^Models/ });
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    await toggle.click();
    const rows = models.getByTestId('model-row');
    await rows.first().waitFor();
    const sim = models.locator('[data-testid=model-row][data-model^="sim/"]');
    expect(await sim.count()).toBe(2);
    for (const text of await sim.allInnerTexts()) expect(text).toMatch(/simulated[\s\S]*sim[\s\S]*\d+\.\d GiB/);
    const engine = models.getByTestId('mlx-engine');
    // The core's first look runs the interpreter: seconds on a busy machine. Until it
    // answers the panel says it is looking; the answer is what this test reads.
    await models.locator('[data-testid=mlx-engine]:not([data-state=checking])').waitFor({ timeout: 150_000 });
    if (!mlxPlatform(process.platform, process.arch).supported) {
      // Where MLX cannot run: the core's reason, and no setup to offer.
      expect(await engine.getAttribute('data-state')).toBe('unavailable');
      expect(await models.getByTestId('mlx-reason').innerText()).toContain('Apple silicon');
      expect(await models.getByRole('button', { name: 'Set up MLX runtime' }).count()).toBe(0);
    } else if ((await engine.getAttribute('data-state')) === 'unavailable') {
      // Where MLX can run (Metal on a Mac, the CPU on Linux) but this fresh data directory has no runtime: why, and the setup offered.
      expect(await models.getByTestId('mlx-reason').innerText()).toMatch(/No Python with mlx-lm found|cannot run MLX/);
      expect(await models.getByRole('button', { name: 'Set up MLX runtime' }).count()).toBe(1);
    }
    // "check again" goes to POST /api/mlx/refresh and comes back without an error notice.
    await models.getByRole('button', { name: 'check again' }).click();
    await models.getByRole('button', { name: 'check again' }).waitFor();
    expect(await page.getByTestId('notice').count()).toBe(0);
    await shot('01-models');
    await toggle.click();
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
  });

  it('launches the safe pair from the UI and shows both runners ready with fast synch off', async () => {
    await page.getByRole('button', { name: 'Launch safe pair' }).click();
    for (const c of [card1b(), card3b()]) {
      await c
        .getByTestId('runner-status')
        .filter({ hasText: /^Ready$/ })
        .waitFor({ timeout: 60_000 });
      expect(await c.getByTestId('fast-synch').innerText()).toBe('off');
    }
    expect(await page.getByTestId('running-count').innerText()).toBe('2 models running');
    expect(await page.getByTestId('app-header').innerText()).toContain('All good');
  });

  it('shows TTFT samples on the chart once requests complete', async () => {
    for (let i = 0; i < 3; i++) {
      const a = streamChat(serve.url, SMALL, 60, 8);
      const b = streamChat(serve.url, MEDIUM, 60, 8);
      expect((await a.done).error).toBeNull();
      expect((await b.done).error).toBeNull();
    }
    const chart = card1b().getByTestId('ttft-chart');
    await chart.waitFor();
    await expect.poll(async () => Number(await chart.getAttribute('data-samples')), { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    expect(await chart.locator('.recharts-line path').count()).toBeGreaterThan(0);
    expect(await card1b().getByTestId('ttft-latest').innerText()).toMatch(/\d+ ms|\d\.\d+ s/);
    expect(await card1b().getByTestId('ttft-p50').innerText()).not.toBe('n/a');
  });

  // The waiting 3B request can be seen only while the long prefill runs (the runner reads
  // new tasks between steps, and this step is the whole prefill). So the queued request
  // goes in as soon as the server says the long one prefills (not when a loaded page first
  // shows it, which left too little of the prefill to see the wait), and the test waits on
  // the server's own phases before it looks at the page.
  it('shows the queue, the prefill advancing, and a held cancellation after cancelling from the UI', async () => {
    const control = controlClient(serve.url, serve.token);
    const phases3b = async () => (await control.state()).instances.find((i) => i.model === MEDIUM)?.queue.requests.map((r) => r.phase) ?? [];
    // A long unique prompt on the 3B, then one more 3B request queued behind it, then a short 1B request.
    const long = streamChat(serve.url, MEDIUM, LONG_PROMPT, 16);
    chats.push(long);
    await expect.poll(phases3b, { timeout: 60_000 }).toContain('prefilling');
    const queued = streamChat(serve.url, MEDIUM, 200, 16);
    chats.push(queued);
    await expect.poll(phases3b, { timeout: 60_000 }).toEqual(expect.arrayContaining(['prefilling', expect.stringMatching(/^(awaiting_ack|queued)$/)]));
    await card3b().getByTestId('queue-row').filter({ hasText: 'Prefilling' }).waitFor({ timeout: 30_000 });
    const short = streamChat(serve.url, SMALL, 60, 200);
    chats.push(short);

    // The queued request waits for the runner's acknowledgement.
    const waiting = card3b().locator('[data-testid=queue-row][data-phase=awaiting_ack], [data-testid=queue-row][data-phase=queued]');
    await waiting.first().waitFor({ timeout: 30_000 });

    const bar = card3b().getByTestId('prefill').getByRole('progressbar');
    await bar.waitFor();
    await expect.poll(async () => Number(await bar.getAttribute('aria-valuenow')), { timeout: 10_000 }).toBeGreaterThan(0);
    const first = Number(await bar.getAttribute('aria-valuenow'));
    await expect.poll(async () => Number(await bar.getAttribute('aria-valuenow')), { timeout: 10_000 }).toBeGreaterThan(first);
    expect(await card3b().getByTestId('prefill').innerText()).toMatch(/[\d,]+ \/ 60,000 tokens · \d+%/);

    // The 1B answers while the 3B prefills: its own request gets a TTFT sample.
    expect((await short.done).error).toBeNull();
    await shot('02-busy', true);

    // Cancel the waiting 3B request from its row.
    const row = waiting.first();
    const phase = await row.getAttribute('data-phase');
    await row.getByRole('button', { name: /^Cancel request / }).click();
    if (phase === 'awaiting_ack') {
      // Sent but not acknowledged: the supervisor holds the cancel (exo's engine drops
      // cancels for tasks it has not admitted) and the page shows it as held.
      const held = card3b().locator('[data-testid=pending-cancel][data-state=held]');
      await held.waitFor({ timeout: 5_000 });
      expect(await held.innerText()).toContain('sent once the runner takes the request');
      await card3b().locator('[data-testid=queue-row][data-phase=cancelling]').waitFor({ timeout: 5_000 });
      await shot('03-cancel-held');
    }
    // Either way the request ends as cancelled, and the held cancel clears once sent and confirmed.
    const outcome = await queued.done;
    expect(outcome.error ?? outcome.finishReason).toMatch(/cancel/i);
    await card3b().getByTestId('pending-cancel').first().waitFor({ state: 'detached', timeout: 20_000 });
    expect((await long.done).error).toBeNull();
  });

  it('shows the shared-GPU warning after forcing fast synch on for both ring instances, and fixes it', async () => {
    const control = controlClient(serve.url, serve.token);
    const { instances } = await control.state();
    for (const instance of instances) {
      await control.patchInstance(instance.id, { fastSynch: 'on', mode: 'cancel', acknowledgeRisk: true });
    }
    const banner = page.getByTestId('warning-banner');
    await banner.waitFor({ timeout: 30_000 });
    expect(await banner.getAttribute('data-code')).toBe('two_ring_fast_synch');
    expect(await banner.innerText()).toContain('MLX_METAL_FAST_SYNCH');
    expect(await page.getByTestId('app-header').getAttribute('data-level')).toBe('warning');
    for (const c of [card1b(), card3b()]) {
      await c.getByTestId('fast-synch').filter({ hasText: /^on$/ }).waitFor({ timeout: 30_000 });
      await c
        .getByTestId('runner-status')
        .filter({ hasText: /^Ready$/ })
        .waitFor({ timeout: 60_000 });
    }
    await page.evaluate(() => window.scrollTo(0, 0));
    await shot('04-warning', true);

    await banner.getByRole('button', { name: /with fast synch off/ }).click();
    await banner.waitFor({ state: 'detached', timeout: 60_000 });
    for (const c of [card1b(), card3b()]) {
      await c.getByTestId('fast-synch').filter({ hasText: /^off$/ }).waitFor({ timeout: 30_000 });
    }
    await page.getByTestId('app-header').filter({ hasText: 'All good' }).waitFor({ timeout: 60_000 });
  });

  it('exports the diagnostic bundle as a browser download', async () => {
    const [download] = await Promise.all([
      page.waitForEvent('download', { timeout: 60_000 }),
      page.getByRole('button', { name: 'Export diagnostics' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/\.zip$/);
    const path = await download.path();
    const head = (await readFile(path)).subarray(0, 2).toString('latin1');
    expect(head).toBe('PK');
    await page.getByTestId('notice').filter({ hasText: 'Diagnostic bundle saved' }).waitFor();
  });

  it('shows the dark appearance too', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot('05-dark');
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(bg).toBe('rgb(30, 30, 30)');
  });

  it('says the connection is lost when the server stops', async () => {
    await serve.stop();
    await page.getByTestId('connection-error').waitFor({ timeout: 15_000 });
    expect(await page.getByTestId('connection-error').innerText()).toMatch(/Lost connection to exobar at /);
    expect(await page.getByTestId('app-header').innerText()).toContain('Reconnecting…');
    expect(await page.getByTestId('api-url').innerText()).toBe('Local API not answering: reconnecting…');
  });
});
