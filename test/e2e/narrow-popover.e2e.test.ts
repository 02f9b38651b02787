/**
 * The popover is 420 px wide and must never scroll sideways. Against a real `exobar
 * serve` with the sim safe pair serving (the 1B decoding while the 3B prefills, so the
 * cards carry their GPU-sharing lines and the request log has rows), every panel is
 * opened and the page measured; then the same page is fed a snapshot made from the
 * real one with long model names, long figures, the fake exo's cluster and every
 * warning code, and the request log with long model names, and measured again.
 * "No wider" means `document.documentElement.scrollWidth <= 420`, and the Requests
 * table shows its last column without a sideways scroll of its own.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WarningCodeSchema, type Snapshot } from '../../shared/snapshot';
import type { RequestList } from '../../shared/request-record';
import { eventually } from '../support/eventually';
import { launchChromium } from '../support/e2e/browser';
import { streamChat } from '../support/e2e/chat-client';
import { controlClient } from '../support/e2e/control-client';
import { startServe, type ServeProcess } from '../support/e2e/serve-process';
import { MEDIUM, SMALL } from '../support/e2e/sim-cards';
import { loadViewScenarios } from '../support/renderer/exo-scenarios';

const WIDTH = 420;
const LONG_NAME = 'Meta-Llama-3.1-405B-Instruct-Abliterated-Uncensored-8bit-DWQ-mixed-precision (simulated)';
const LONG_MODEL = 'mlx-community/Meta-Llama-3.1-405B-Instruct-Abliterated-Uncensored-8bit-DWQ-mixed-precision';

let serve: ServeProcess;
let browser: Browser;

beforeAll(async () => {
  serve = await startServe({ simTimeScale: 0.1 });
  browser = await launchChromium();
  const res = await fetch(`${serve.url}/api/launch/safe-pair`, { method: 'POST', headers: { Authorization: `Bearer ${serve.token}` } });
  expect(res.status, await res.text()).toBeLessThan(300);
  const control = controlClient(serve.url, serve.token);
  await eventually(
    async () => {
      const state = await control.state();
      return state.instances.length === 2 && state.instances.every((i) => i.source === 'local' && i.runner.state === 'ready');
    },
    60_000,
    'the safe pair ready',
  );
  // The 1B decodes while the 3B prefills: both cards get their GPU-sharing lines, the log its rows.
  for (let i = 0; i < 2; i++) {
    const long = streamChat(serve.url, MEDIUM, 20_000, 8);
    const short = streamChat(serve.url, SMALL, 40, 60);
    expect((await short.done).error).toBeNull();
    expect((await long.done).error).toBeNull();
  }
});

afterAll(async () => {
  await browser?.close();
  await serve?.stop();
});

/** The document's width and the elements that reach past the viewport (for the failure message). */
async function overflow(page: Page): Promise<{ scrollWidth: number; offenders: string[] }> {
  return page.evaluate((width) => {
    const offenders: string[] = [];
    for (const el of document.querySelectorAll('body *')) {
      const box = el.getBoundingClientRect();
      if (box.width === 0) continue;
      // Text that does not wrap spills out of a box that fits, so its box alone does not tell.
      const spills = el instanceof HTMLElement && getComputedStyle(el).overflowX === 'visible' && box.left + el.scrollWidth > width + 0.5;
      if (box.right <= width + 0.5 && !spills) continue;
      // Report the innermost ones only: a parent is wide because of its child.
      if ([...el.children].some((c) => c.getBoundingClientRect().right > width + 0.5)) continue;
      offenders.push(`${el.tagName.toLowerCase()}.${[...el.classList].join('.')} right=${Math.round(box.right)} "${(el.textContent ?? '').slice(0, 60)}"`);
    }
    return { scrollWidth: document.documentElement.scrollWidth, offenders };
  }, WIDTH);
}

/** Opens every collapsed panel, and the first request's timeline once the log lists it. */
async function openEverything(page: Page): Promise<void> {
  for (;;) {
    const closed = page.locator('button.panel-toggle[aria-expanded=false]');
    if ((await closed.count()) === 0) break;
    await closed.first().click();
  }
  const row = page.getByTestId('request-row').first();
  await row.waitFor({ timeout: 15_000 });
  await row.click();
  await page.getByTestId('request-timeline').waitFor();
}

async function expectNoWiderThanPopover(page: Page): Promise<void> {
  const measured = await overflow(page);
  expect(measured.offenders, `wider than ${WIDTH} px`).toEqual([]);
  expect(measured.scrollWidth).toBeLessThanOrEqual(WIDTH);
  // The Requests table shows every column (TTFT included) without scrolling sideways.
  const table = await page.locator('.requests-table-wrap').evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
  expect(table.scroll).toBeLessThanOrEqual(table.client);
}

/** The real snapshot made as long as a real one gets: long names everywhere, the fake exo's cluster beside it, every warning. */
function stretched(real: Snapshot, exo: Snapshot): Snapshot {
  const instances = [...real.instances, ...exo.instances].map((i) => ({
    ...i,
    modelName: LONG_NAME,
    sharing: i.sharing
      ? {
          ...i.sharing,
          neighbours: i.sharing.neighbours.map((n) => ({ ...n, modelName: LONG_NAME, node: 'studio-with-a-very-long-hostname.local', gaps: 123_456 })),
        }
      : i.sharing,
  }));
  const warnings = WarningCodeSchema.options.map((code) => ({
    code,
    instanceIds: instances.map((i) => i.id),
    title: `${code}: ${LONG_MODEL} and ${LONG_MODEL} on studio-with-a-very-long-hostname.local`,
    risk: `Something bad can happen to ${LONG_MODEL}, 123,456,789 tokens in 12,345.67 s.`,
    fix: `Relaunch ${LONG_MODEL} with MLX_METAL_FAST_SYNCH=0 and --very-long-flag-name-without-spaces=${'x'.repeat(60)}.`,
    assumed: true,
    model: LONG_MODEL,
  }));
  return { ...real, instances, warnings, exo: exo.exo, version: '0.1.0-rc.1+build.1234567890' };
}

describe('the popover at 420 px', () => {
  it('is no wider than 420 px with every panel open on the real safe pair', async () => {
    const page = await browser.newPage({ viewport: { width: WIDTH, height: 900 }, colorScheme: 'light' });
    try {
      await page.goto(serve.openUrl);
      await page.getByTestId('sharing').first().waitFor({ timeout: 30_000 });
      await openEverything(page);
      await expectNoWiderThanPopover(page);
    } finally {
      await page.close();
    }
  });

  it('is no wider than 420 px with long names, long figures, an exo cluster and every warning', async () => {
    const real = await controlClient(serve.url, serve.token).state();
    const demo = (await loadViewScenarios()).demo;
    const snapshot = stretched(real, demo);
    const page = await browser.newPage({ viewport: { width: WIDTH, height: 900 }, colorScheme: 'light' });
    try {
      // The event stream answers the stretched snapshot and stays open; every other call reaches the real server.
      await page.addInitScript((json) => {
        const realFetch = window.fetch.bind(window);
        window.fetch = (input, init) => {
          const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
          if (!new URL(url, location.href).pathname.startsWith('/api/events')) return realFetch(input, init);
          const body = new ReadableStream<Uint8Array>({
            start: (controller) => controller.enqueue(new TextEncoder().encode(`event: snapshot\ndata: ${json}\n\n`)),
          });
          return Promise.resolve(new Response(body, { headers: { 'Content-Type': 'text/event-stream' } }));
        };
      }, JSON.stringify(snapshot));
      await page.route('**/api/requests*', async (route) => {
        const answer = await route.fetch();
        const list = (await answer.json()) as RequestList;
        const requests = list.requests.map((r) => ({
          ...r,
          model: LONG_MODEL,
          ttftMs: 123_456,
          prefillTokensPerSecond: 12_345.6,
          decodeTokensPerSecond: 1_234.5,
          itlP95Ms: 98_765,
          outputTokens: 123_456,
        }));
        await route.fulfill({ response: answer, json: { ...list, requests } });
      });
      await page.goto(serve.openUrl);
      await page.getByText(LONG_NAME).first().waitFor({ timeout: 15_000 });
      await page.getByTestId('warning-banner').first().waitFor();
      expect(await page.getByTestId('warning-banner').count()).toBe(WarningCodeSchema.options.length);
      await openEverything(page);
      await expectNoWiderThanPopover(page);
      await page.screenshot({ path: 'screenshots/narrow-popover-stretched.png', fullPage: true });
      await page.getByTestId('instance-grid').screenshot({ path: 'screenshots/narrow-popover-cards.png' });
      await page.getByRole('region', { name: 'Requests' }).screenshot({ path: 'screenshots/narrow-popover-requests.png' });
    } finally {
      await page.close();
    }
  });
});
