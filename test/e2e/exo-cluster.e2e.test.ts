/**
 * A Mac leaving an exo cluster, in a real browser: `exobar serve --exo` attached to the
 * serving fake exo's two-node cluster (a ring of tiny-llama across studio-a and
 * studio-b, tiny-llama-b on studio-b). studio-b's exo stops; the fake removes it, both
 * instances and their runners as exo does. The page shows the cluster timeline under
 * the exo source and an `exo_model_lost` warning per model; Place again on the ring
 * answers with exo's reason (one Mac is left, the ring needs two), Place again on
 * tiny-llama-b places it on studio-a and its warning clears, and Dismiss forgets the
 * other.
 *
 * Screenshot: screenshots/exo-cluster.png (docs/images/exo-cluster.png is a copy).
 */
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STOPPED_NODE_REMOVAL_MS } from '../support/fake-exo/fake-cluster';
import { TINY, TINY_B, twoNodeCluster } from '../support/fake-exo/two-node-scenario';
import { startServingExo, type ServingExo } from '../support/fake-exo/worker/serving-exo';
import { launchChromium } from '../support/e2e/browser';
import { fullPageShot, POPOVER_VIEWPORT } from './full-page-shot';
import { startServe, type ServeProcess } from '../support/e2e/serve-process';

const SHOTS = fileURLToPath(new URL('../../screenshots/', import.meta.url));

// The fake's clock runs ahead on demand, so studio-b's removal needs no 12 s wait.
const clock = { offset: 0 };
let exo: ServingExo;
let serve: ServeProcess;
let browser: Browser;
let page: Page;

const lost = (model: string): Locator =>
  page.locator('[data-testid="warning-banner"][data-code="exo_model_lost"]').filter({ hasText: `${model.split('/')[1]} was lost` });
const events = (): Promise<string[]> => page.getByTestId('exo-event').allTextContents();

const shot = (name: string): Promise<void> => fullPageShot(page, `${SHOTS}${name}.png`);

beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  exo = await startServingExo({ cluster: twoNodeCluster(() => Date.now() + clock.offset) });
  serve = await startServe({ simTimeScale: 0.1, args: ['--exo', exo.url] });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: POPOVER_VIEWPORT, colorScheme: 'light' });
});

afterAll(async () => {
  await browser?.close();
  await serve?.stop();
  await exo?.close();
});

describe('a Mac that leaves the cluster, in the page', () => {
  it('shows the timeline and a lost-model warning per model once studio-b is gone', async () => {
    await page.goto(serve.openUrl);
    await expect.poll(() => page.getByTestId('exo-connection').textContent(), { timeout: 30_000 }).toBe('connected');
    await expect.poll(() => page.getByTestId('instance-card').count(), { timeout: 15_000 }).toBe(2);

    exo.cluster.stopNode('studio-b');
    exo.cluster.step();
    clock.offset += STOPPED_NODE_REMOVAL_MS;
    exo.cluster.step();

    await expect.poll(() => lost(TINY).count(), { timeout: 15_000 }).toBe(1);
    expect(await lost(TINY_B).count()).toBe(1);
    expect(await page.getByTestId('instance-card').count()).toBe(0);
    expect(await lost(TINY).textContent()).toMatch(/studio-b left at \d\d:\d\d/);
    expect(await lost(TINY).textContent()).toContain('ran on studio-a and studio-b');

    // Newest first, each with the time exobar saw it.
    const timeline = await events();
    expect(timeline).toHaveLength(3);
    expect(timeline[0]).toMatch(/^\d\d:\d\d:\d\dtiny-llama-b deleted by exo after studio-b left at/);
    expect(timeline[1]).toMatch(/tiny-llama deleted by exo after studio-b left at \d\d:\d\d \(it ran on studio-a and studio-b\)$/);
    expect(timeline[2]).toContain('studio-b');
    expect(await page.getByTestId('exo-event').first().getAttribute('data-kind')).toBe('instance_deleted');
    await shot('exo-cluster');
  });

  it("answers Place again with exo's reason when the ring cannot be placed on the one Mac left", async () => {
    await lost(TINY).getByRole('button', { name: 'Place again' }).click();
    const notice = page.getByTestId('notice');
    await expect.poll(() => notice.textContent(), { timeout: 15_000 }).toContain('No cycles found with sufficient memory');
    expect(await notice.textContent()).toContain('studio-b left at');
    expect(await lost(TINY).count()).toBe(1);
  });

  it('places tiny-llama-b again on studio-a, and its warning clears once exo serves it', async () => {
    await lost(TINY_B).getByRole('button', { name: 'Place again' }).click();
    await expect.poll(() => lost(TINY_B).count(), { timeout: 15_000 }).toBe(0);
    await expect.poll(() => page.getByTestId('instance-card').count(), { timeout: 15_000 }).toBe(1);
    expect(await page.getByTestId('instance-card').getAttribute('data-instance')).toBe(`exo:${TINY_B}`);
    await expect.poll(async () => (await events())[0], { timeout: 15_000 }).toContain('tiny-llama-b');
    expect(await page.getByTestId('exo-event').first().getAttribute('data-kind')).toBe('instance_placed');
    expect(await lost(TINY).count()).toBe(1);
  });

  it('dismisses the ring that cannot come back', async () => {
    await lost(TINY).getByRole('button', { name: 'Dismiss' }).click();
    await expect.poll(() => page.locator('[data-code="exo_model_lost"]').count(), { timeout: 15_000 }).toBe(0);
  });
});
