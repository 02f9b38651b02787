/**
 * "Check GPU sharing" in a real browser against a built `exobar serve` with sim
 * runners: a check started from the page and cancelled leaves no runner; a short check
 * started from the page shows its progress, ends, and shows its report, labelled
 * simulated, with B's ITL chart per sharing policy (A's prefill shaded); afterwards
 * the instances are those before (none).
 *
 * Screenshot: docs/images/sharing-check-report.png (the README's).
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/e2e/browser';
import { controlClient } from '../support/e2e/control-client';
import { startServe, type ServeProcess } from '../support/e2e/serve-process';

const IMAGES = fileURLToPath(new URL('../../docs/images/', import.meta.url));

let serve: ServeProcess;
let browser: Browser;

beforeAll(async () => {
  serve = await startServe({ simTimeScale: 0.25 });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await serve?.stop();
});

async function openPanel(page: Page) {
  await page.goto(serve.openUrl);
  const panel = page.locator('section[aria-label="GPU sharing"]');
  await panel.locator('button.panel-toggle').click();
  await panel.getByText('No reports yet.').or(panel.getByTestId('sharing-report-row').first()).waitFor({ timeout: 20_000 });
  return panel;
}

/** A new page with the panel open and a short check started from it. */
async function startFromPage() {
  const page = await browser.newPage({ viewport: { width: 420, height: 900 }, colorScheme: 'light' });
  const panel = await openPanel(page);
  await panel.getByLabel("A's prompt (tokens)").fill('12000');
  await panel.getByLabel('Clients per model').fill('1');
  await panel.getByLabel('Seconds of load').fill('2');
  await panel.getByRole('button', { name: 'Check GPU sharing' }).click();
  return { page, panel, control: controlClient(serve.url, serve.token) };
}

describe('Check GPU sharing in the page', () => {
  it('cancels a check from the page and leaves no runner behind', async () => {
    const { page, panel, control } = await startFromPage();
    await panel.getByRole('progressbar', { name: 'Check progress' }).waitFor({ timeout: 20_000 });
    // Cancel once the check has launched its models, so there is something to put back.
    await expect.poll(async () => (await control.state()).instances.length, { timeout: 60_000 }).toBeGreaterThan(0);
    await panel.getByRole('button', { name: 'Cancel' }).click();
    await panel.getByText('The check was cancelled; the models are as they were.').waitFor({ timeout: 60_000 });
    expect((await control.state()).instances).toEqual([]);
    await page.close();
  });

  it('runs a short check from the page and shows the finished report with its chart', async () => {
    const { page, panel, control } = await startFromPage();
    const status = panel.getByTestId('sharing-running').getByRole('status');
    await status.waitFor({ timeout: 20_000 });
    // The steps go by in words while it runs.
    await expect.poll(() => status.innerText(), { timeout: 120_000 }).toContain('Experiment 2');
    const report = panel.getByTestId('sharing-report');
    await report.waitFor({ timeout: 240_000 });
    expect(await report.getByTestId('sharing-simulated').innerText()).toContain('not evidence');
    const runs = report.getByTestId('sharing-run');
    expect(await runs.evaluateAll((els) => els.map((e) => e.getAttribute('data-policy')))).toEqual(['off', 'decode_first']);
    for (const run of await runs.all()) {
      // recharts drew B's gaps as a line and A's prefill as the shaded band.
      await run.locator('.recharts-line path').first().waitFor({ timeout: 10_000 });
      await run.locator('.recharts-reference-area-rect').first().waitFor({ timeout: 10_000 });
      expect(Number(await run.getByTestId('itl-chart').getAttribute('data-points'))).toBeGreaterThan(20);
      expect(await run.innerText()).toMatch(/decodes at \d+ % of its solo rate while Llama 3\.2 3B (\(simulated\) )?prefills/);
    }
    expect(await report.getByTestId('sharing-ttft').innerText()).toContain('0.38-0.40 s');
    expect(await report.getByTestId('sharing-throughput').innerText()).toMatch(/requests\/min/);
    // The kept report is listed, and the instances are as before the check: none.
    expect(await panel.getByTestId('sharing-report-row').count()).toBe(1);
    expect((await control.state()).instances).toEqual([]);
    // The viewport grown to the page, so the sticky header and footer cover nothing of the panel.
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    await page.setViewportSize({ width: 420, height });
    await panel.screenshot({ path: join(IMAGES, 'sharing-check-report.png') });
    await page.close();
    // Its waits add up past the file's 180 s default: a whole check on a loaded machine (they end at the event).
  }, 480_000);
});
