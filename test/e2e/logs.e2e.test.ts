/**
 * The log view in a real browser against `exobar serve` with a sim runner: a card's Log
 * button opens the model's runner log; a line the runner writes (its "cancelled" record,
 * after a cancel) appears in the page within 1 s of reaching the file, timed from the
 * file's change to the line in the DOM; pause holds the view and counts what waits;
 * the level filter and the search narrow the lines; Copy copies them as written; the
 * sources include exobar's own log and the protocol lines.
 *
 * Screenshot: docs/images/logs-view.png (the README's).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/e2e/browser';
import { streamChat } from '../support/e2e/chat-client';
import { startServe, type ServeProcess } from '../support/e2e/serve-process';
import { eventually, sleep } from '../support/eventually';
import { simCards, SMALL } from '../support/e2e/sim-cards';

const IMAGES = fileURLToPath(new URL('../../docs/images/', import.meta.url));

let serve: ServeProcess;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let instanceId = '';
const { card1b } = simCards(() => page);

const panel = (): Locator => page.getByRole('region', { name: 'Logs' });
const lines = (): Locator => panel().locator('.log-line');
const status = (): Locator => panel().getByTestId('logs-status');

async function control(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${serve.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${serve.token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

const runnerLog = (): string => readFileSync(join(serve.dataDir, 'logs', instanceId, 'stderr.log'), 'utf8');
const cancelledLines = (): number =>
  runnerLog()
    .split('\n')
    .filter((l) => l.includes('"msg":"cancelled"')).length;

const runnerLogLines = (): number => runnerLog().trimEnd().split('\n').length;

/**
 * Streams a long answer and cancels it once it is generating, and returns once the runner's
 * "cancelled" line is in its log: the runner may write it after the client's stream has
 * ended, so a count of the file's lines taken at the stream's end can be one short.
 */
async function makeTheRunnerLogACancel(): Promise<void> {
  const before = cancelledLines();
  const chat = streamChat(serve.url, SMALL, 20, 4000);
  const id = await chat.id;
  expect((await control('POST', `/v1/cancel/${encodeURIComponent(id)}`)).status).toBeLessThan(300);
  await chat.done;
  await eventually(() => cancelledLines() > before, 10_000, 'the runner logged the cancel');
}

beforeAll(async () => {
  serve = await startServe({ simTimeScale: 0.2 });
  const created = await control('POST', '/api/instances?wait=ready', { model: SMALL, instanceType: 'ring' });
  if (created.status !== 201) throw new Error(`launch answered ${created.status}: ${JSON.stringify(created.body)}`);
  instanceId = created.body.id as string;
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 720, height: 900 }, colorScheme: 'light' });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: serve.url });
  page = await context.newPage();
  await page.goto(serve.openUrl);
  await card1b().waitFor({ timeout: 30_000 });
});

afterAll(async () => {
  await browser?.close();
  await serve?.stop();
});

describe('the log view', () => {
  it("opens at the model's runner log from its card: its last lines, the sources listed", async () => {
    await card1b().getByRole('button', { name: 'Log of Llama 3.2 1B (simulated)' }).click();
    await lines().filter({ hasText: 'sim runner started' }).first().waitFor({ timeout: 15_000 });
    expect(await panel().getByRole('combobox', { name: 'Log' }).inputValue()).toBe(instanceId);
    const options = await panel().getByRole('combobox', { name: 'Log' }).locator('option').allInnerTexts();
    expect(options).toEqual(
      expect.arrayContaining(['Llama 3.2 1B (simulated): runner log', 'Llama 3.2 1B (simulated): runner protocol lines', 'exobar: its own log']),
    );
    // A pino record is shown as the terminal shows it, not as JSON.
    expect(await lines().filter({ hasText: 'sim runner started' }).first().innerText()).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}sim runner started /);
    expect(await status().innerText()).toContain('Following live');
  });

  it('shows a line the runner writes within 1 s of it reaching the file', async () => {
    const before = cancelledLines();
    // The page notes when each "cancelled" line enters the DOM (its own clock is the machine's).
    await page.evaluate(() => {
      const w = window as unknown as { shownAt: number[] };
      w.shownAt = [];
      new MutationObserver((records) => {
        for (const r of records)
          for (const n of r.addedNodes) if (n instanceof HTMLElement && n.textContent?.includes(' cancelled ')) w.shownAt.push(Date.now());
      }).observe(document.querySelector('[data-testid=logs-view]')!, { childList: true, subtree: true });
    });
    let writtenAt = 0;
    const watch = (async () => {
      while (cancelledLines() === before) await sleep(5);
      writtenAt = Date.now();
    })();
    await makeTheRunnerLogACancel();
    await watch;
    await page.waitForFunction(() => (window as unknown as { shownAt: number[] }).shownAt.length > 0, undefined, { timeout: 10_000 });
    const shownAt = await page.evaluate(() => (window as unknown as { shownAt: number[] }).shownAt[0]!);
    const lagMs = shownAt - writtenAt;
    process.stdout.write(`log view: the runner's line shown ${lagMs} ms after it reached the file\n`);
    expect(lagMs).toBeLessThan(1000);
  });

  it('pause holds the view and counts the lines waiting; resume shows them', async () => {
    const shown = await lines().count();
    await panel().getByRole('button', { name: 'Pause' }).click();
    await makeTheRunnerLogACancel();
    await status()
      .filter({ hasText: /Paused: \d+ new lines? waiting/ })
      .waitFor({ timeout: 10_000 });
    expect(await lines().count()).toBe(shown);
    await panel().getByRole('button', { name: 'Resume' }).click();
    await expect.poll(() => lines().count(), { timeout: 10_000 }).toBeGreaterThan(shown);
    expect(await status().innerText()).toContain('Following live');
  });

  it('filters by level and searches; Copy copies the matching lines as the file holds them', async () => {
    await panel().getByRole('combobox', { name: 'Level' }).selectOption('warn');
    // The sim runner logs at info here: nothing is a warning.
    await expect.poll(() => lines().count()).toBe(0);
    await panel().getByRole('combobox', { name: 'Level' }).selectOption('all');
    await panel().getByRole('searchbox', { name: 'Search the log' }).fill('cancelled');
    const texts = await lines().allInnerTexts();
    expect(texts.length).toBe(cancelledLines());
    expect(texts.every((t) => t.includes('cancelled'))).toBe(true);
    expect(await panel().locator('mark').first().innerText()).toBe('cancelled');
    await panel().getByRole('button', { name: 'Copy' }).click();
    await status()
      .filter({ hasText: `Copied ${texts.length} lines` })
      .waitFor({ timeout: 5_000 });
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    const expected = runnerLog()
      .split('\n')
      .filter((l) => l.includes('"msg":"cancelled"'));
    expect(copied).toBe(`${expected.join('\n')}\n`);
  });

  it('the screenshot for the README: the runner log followed live, searched', async () => {
    await panel().getByRole('searchbox', { name: 'Search the log' }).fill('');
    for (let i = 0; i < 3; i++) await makeTheRunnerLogACancel();
    // Both sides read on every try: the page has caught up once it shows every line the file holds.
    await expect.poll(async () => (await lines().count()) - runnerLogLines(), { timeout: 10_000 }).toBe(0);
    await panel().getByRole('searchbox', { name: 'Search the log' }).fill('cancel');
    await panel().locator('mark').first().waitFor();
    // The whole page in the viewport, so the footer sits below the panel, not over it.
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    await page.setViewportSize({ width: 720, height });
    await panel().screenshot({ path: `${IMAGES}logs-view.png` });
  });
});
