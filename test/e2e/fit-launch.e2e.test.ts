/**
 * The fit check and the connection words in a real browser against `exobar serve` with
 * sim runners. The settings keep all but about 3 GB of this machine's free memory as
 * headroom (`fit.headroomBytes`), so the sim pair (5.9 GiB) really does not fit: the
 * page refuses with the figures, the Models panel says which model fits, and "Launch
 * anyway" launches both. Then a stale token: the header, the footer and the access
 * message say the same thing.
 *
 * Screenshots: docs/images/launch-anyway.png, models-fit.png, token-refused.png (the README's).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/e2e/browser';
import { startServe, type ServeProcess } from '../support/e2e/serve-process';

const IMAGES = fileURLToPath(new URL('../../docs/images/', import.meta.url));
const GiB = 1024 ** 3;

let serve: ServeProcess;
let browser: Browser;
let page: Page;
let dataDir: string;

/** What Linux says is available now (the fit check's own reading here). */
async function availableBytes(): Promise<number> {
  const line = (await readFile('/proc/meminfo', 'utf8')).split('\n').find((l) => l.startsWith('MemAvailable:'))!;
  return Number(line.split(/\s+/)[1]) * 1024;
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'exobar-e2e-fit-'));
  // About 3 GiB of room: the 1B (1.7 GiB) fits, the 3B (4.3 GiB) and the pair (5.9 GiB) do not.
  const headroomBytes = Math.max(0, Math.round((await availableBytes()) - 3 * GiB));
  await writeFile(join(dataDir, 'settings.json'), JSON.stringify({ fit: { headroomBytes } }));
  serve = await startServe({ simTimeScale: 0.2, dataDir });
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: { width: 420, height: 1600 }, colorScheme: 'light' })).newPage();
});

afterAll(async () => {
  await browser?.close();
  await serve?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('the fit check in the page', () => {
  it('refuses the safe pair with the figures, and "Launch anyway" launches it', async () => {
    await page.goto(serve.openUrl);
    const panel = page.getByRole('region', { name: 'Safe launch' });
    const blockers = panel.getByRole('list', { name: 'Blockers' });
    await blockers.waitFor({ timeout: 20_000 });
    // One sentence that explains the refusal: the headroom is part of what is free, and what is left is too little.
    const sentence = /^Not enough memory: needs 5\.9 GiB; (\d+\.\d) GiB free, of which (\d+\.\d) GiB is kept free for macOS and other apps: (\d+\.\d) GiB usable\.$/;
    const [, free, kept, usable] = sentence.exec(await blockers.innerText()) ?? [];
    expect(free, await blockers.innerText()).toBeDefined();
    expect(Math.abs(Number(free) - Number(kept) - Number(usable))).toBeLessThanOrEqual(0.11);
    expect(Number(usable)).toBeLessThan(5.9);
    // The same figures above it: the plan's memory line and each model's need add up to the one "needs 5.9 GiB".
    expect(await panel.getByTestId('plan-memory').innerText()).toMatch(/^Memory: needs 5\.9 GiB; \d+\.\d GiB free, of which \d+\.\d GiB is kept free/);
    const needs = (await panel.getByTestId('plan-row').allInnerTexts()).map((t) => Number(/(\d+\.\d) GiB/.exec(t)?.[1]));
    expect(Math.abs(needs.reduce((a, b) => a + b, 0) - 5.9)).toBeLessThanOrEqual(0.11);
    expect(await panel.getByRole('button', { name: 'Launch safe pair' }).isDisabled()).toBe(true);
    expect(await page.getByTestId('launch-anyway-memory').innerText()).toMatch(/swapping/);
    await panel.screenshot({ path: `${IMAGES}launch-anyway.png` });

    await panel.getByRole('button', { name: 'Launch anyway' }).click();
    await page.locator('[data-testid="instance-card"]').nth(1).waitFor({ timeout: 60_000 });
    await expect.poll(async () => page.getByTestId('instance-card').count(), { timeout: 60_000 }).toBe(2);
    const state = (await (await fetch(`${serve.url}/api/state`, { headers: { Authorization: `Bearer ${serve.token}` } })).json()) as {
      instances: Array<{ model: string }>;
    };
    expect(state.instances.map((i) => i.model).sort()).toEqual(['sim/llama-3.2-1b', 'sim/llama-3.2-3b']);
  });

  it('says in the Models panel which model fits, with the figures', async () => {
    // Stop both: the panel then checks each model beside nothing running.
    await fetch(`${serve.url}/api/instances`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${serve.token}`, 'Content-Type': 'application/json' },
      body: '{"confirm":true}',
    });
    await expect.poll(async () => page.getByTestId('instance-card').count(), { timeout: 30_000 }).toBe(0);
    const models = page.getByRole('region', { name: 'Models' });
    await models.getByRole('button', { name: /^Models/ }).click();
    const fits = models.getByTestId('model-fit');
    await expect.poll(async () => fits.count(), { timeout: 20_000 }).toBe(2);
    expect(await fits.nth(0).getAttribute('data-verdict')).toMatch(/^(fits|tight)$/);
    expect(await fits.nth(1).getAttribute('data-verdict')).toBe('does_not_fit');
    // The headroom is in the Models panel too, in the same sentence.
    expect(await fits.nth(1).innerText()).toMatch(/^does not fit\s+needs 4\.3 GiB; \d+\.\d GiB free, of which \d+\.\d GiB is kept free for macOS and other apps: \d+\.\d GiB usable$/);
    // One figure per model: the row's memory is the need the fit line says.
    expect(await models.getByTestId('model-memory').allInnerTexts()).toEqual(['1.7 GiB', '4.3 GiB']);
    await models.getByRole('list', { name: 'Model catalog' }).screenshot({ path: `${IMAGES}models-fit.png` });
  });

  it('with a stale token: the header, the footer and the access message agree', async () => {
    const ctx = await browser.newContext({ viewport: { width: 420, height: 700 }, colorScheme: 'light' });
    try {
      const stale = await ctx.newPage();
      await stale.goto(`${serve.url}/#token=stale-token-from-another-data-dir`);
      const banner = stale.getByTestId('connection-error');
      await banner.waitFor({ timeout: 15_000 });
      expect(await banner.locator('h2').innerText()).toBe('Token refused');
      expect(await stale.getByTestId('app-header').locator('h1').innerText()).toBe('Token refused');
      expect(await stale.getByTestId('api-url').innerText()).toBe('Local API running: it refused this page’s token');
      const states = await Promise.all(['app-header', 'api-url', 'connection-error'].map((id) => stale.getByTestId(id).getAttribute('data-connection')));
      expect(states).toEqual(['token_refused', 'token_refused', 'token_refused']);
      await stale.screenshot({ path: `${IMAGES}token-refused.png` });
    } finally {
      await ctx.close();
    }
  });
});
