/**
 * The History panel's charts in Chromium, at the popover's 420 px and a 1280 px window,
 * against a real `exobar serve` whose data directory holds history the real History
 * class wrote (electron/core/history/history.ts, the serve's own store): the 3B over the
 * last 40 minutes with TTFT past 1 s and some failures, the 1B in one minute only.
 * Each chart is drawn with its legend; every axis label and legend entry lies inside the
 * chart's box (bounding boxes: a label outside the svg is cut off); the 3B's TTFT axis is
 * in seconds; the 1B's single minute shows as two visible dots (p50 and p95).
 *
 * Screenshots: docs/images/history-panel-420.png and history-panel-1280.png.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestRecord } from '../../shared/request-record';
import { History } from '../../electron/core/history/history';
import { requestRecord } from '../support/request-record-fixture';
import { launchChromium } from '../support/e2e/browser';
import { POPOVER_VIEWPORT } from './full-page-shot';
import { startServe, type ServeProcess } from '../support/e2e/serve-process';

const IMAGES = fileURLToPath(new URL('../../docs/images/', import.meta.url));
const BUSY = 'sim/llama-3.2-3b';
const ONE_MINUTE = 'sim/llama-3.2-1b';
const MINUTE = 60_000;

let dataDir: string;
let serve: ServeProcess;
let browser: Browser;

function record(model: string, endedAt: number, ttftMs: number, failed = false): RequestRecord {
  return requestRecord({ model, endedAt, ttftMs, promptTokens: 900, outputTokens: 40, outcome: failed ? 'failed' : 'done' });
}

/** 40 minutes of the 3B (TTFT climbing from ~0.4 s to past 3 s, a failure every 7th minute) and one minute of the 1B. */
function seedHistory(dir: string): void {
  const now = Date.now();
  const history = new History({ dataDir: dir, flushMs: 3_600_000 });
  for (let m = 40; m >= 1; m--) {
    const at = now - m * MINUTE;
    const base = 400 + (40 - m) * 60;
    for (let i = 0; i < 3 + (m % 4); i++) history.observe(record(BUSY, at + i * 1000, base + i * 150 + (i === 2 ? base / 2 : 0)));
    if (m % 7 === 0) history.observe(record(BUSY, at + 30_000, base, true));
  }
  for (const ttft of [120, 150, 180, 210]) history.observe(record(ONE_MINUTE, now - 5 * MINUTE + ttft, ttft));
  history.close();
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'exobar-e2e-history-'));
  seedHistory(dataDir);
  serve = await startServe({ simTimeScale: 0.25, dataDir });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await serve?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

interface Box {
  left: number;
  top: number;
  right: number;
  bottom: number;
  width: number;
  height: number;
}
interface Drawn {
  text: string;
  box: Box;
}
interface ChartLayout {
  unit: string | null;
  frame: Box;
  svg: Box;
  yLabels: Drawn[];
  xLabels: Drawn[];
  legend: Drawn[];
  dots: Drawn[];
}

/** Where the model's chart drew its frame, its svg, its axis labels, legend entries and dots (client pixels). */
function layoutOf(page: Page, model: string): Promise<ChartLayout> {
  return page.evaluate((m) => {
    const box = (e: Element) => {
      const r = e.getBoundingClientRect();
      return { left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height };
    };
    const chart = document.querySelector(`[data-testid="history-chart"][data-model="${m}"]`);
    if (!chart) throw new Error(`no chart for ${m}`);
    const drawn = (selector: string) => [...chart.querySelectorAll(selector)].map((e) => ({ text: e.textContent ?? '', box: box(e) }));
    return {
      unit: chart.querySelector('[data-testid="history-chart-plot"]')?.getAttribute('data-unit') ?? null,
      frame: box(chart.querySelector('.history-chart')!),
      svg: box(chart.querySelector('.recharts-wrapper > svg')!),
      yLabels: drawn('.recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value'),
      xLabels: drawn('.recharts-xAxis-tick-labels .recharts-cartesian-axis-tick-value'),
      legend: drawn('.recharts-legend-item'),
      dots: drawn('.recharts-line-dot'),
    };
  }, model);
}

const inside = (inner: Box, outer: Box) =>
  inner.left >= outer.left - 0.5 && inner.top >= outer.top - 0.5 && inner.right <= outer.right + 0.5 && inner.bottom <= outer.bottom + 0.5;

/** What is drawn outside `outer`, in words (none when all is inside). */
const outside = (items: Drawn[], outer: Box, what: string): string[] =>
  items.filter((item) => !inside(item.box, outer)).map((item) => `${what} "${item.text}" ${JSON.stringify(item.box)} outside ${JSON.stringify(outer)}`);

/** Labels of one row that cover each other, in words. */
function overlapping(items: Drawn[], what: string): string[] {
  const sorted = [...items].sort((a, b) => a.box.left - b.box.left);
  return sorted.slice(1).flatMap((item, i) => (item.box.left < sorted[i]!.box.right - 0.5 ? [`${what} "${sorted[i]!.text}" and "${item.text}" overlap`] : []));
}

/** Every way the chart's labels, legend and dots could be cut off or cover each other. */
function clipped(chart: ChartLayout, viewportWidth: number): string[] {
  return [
    ...(chart.svg.right <= viewportWidth + 0.5 ? [] : [`svg reaches ${chart.svg.right} px`]),
    ...(inside(chart.svg, chart.frame) ? [] : [`svg ${JSON.stringify(chart.svg)} outside its frame ${JSON.stringify(chart.frame)}`]),
    ...outside(chart.yLabels, chart.svg, 'y label'),
    ...outside(chart.xLabels, chart.svg, 'x label'),
    ...outside(chart.legend, chart.frame, 'legend entry'),
    ...outside(chart.dots, chart.svg, 'dot'),
    ...overlapping(chart.xLabels, 'x labels'),
    ...overlapping(chart.legend, 'legend entries'),
  ];
}

describe('the History chart', () => {
  for (const width of [POPOVER_VIEWPORT.width, 1280]) {
    it(`at ${width} px: drawn with its legend, every label inside the chart, seconds past 1 s, a one-minute model as dots`, async () => {
      // Tall enough for the whole panel above the sticky footer (the screenshot shows both legends).
      const context = await browser.newContext({ viewport: { width, height: 1400 }, colorScheme: 'light' });
      const page = await context.newPage();
      await page.goto(serve.openUrl);
      const history = page.locator('section[aria-label="History"]');
      await history.locator('button.panel-toggle').click();
      for (const model of [BUSY, ONE_MINUTE]) {
        await history.locator(`[data-testid="history-chart"][data-model="${model}"] .recharts-legend-item`).first().waitFor({ timeout: 20_000 });
      }
      // recharts sizes the axes from the labels it measured, then draws again: wait for the ticks to settle.
      await history.locator(`[data-testid="history-chart"][data-model="${BUSY}"] .recharts-yAxis-tick-labels text`).first().waitFor({ timeout: 10_000 });

      const busy = await layoutOf(page, BUSY);
      expect(busy.legend.map((l) => l.text)).toEqual(['TTFT p50', 'TTFT p95', 'requests/min', 'errors']);
      expect(busy.unit).toBe('s');
      const seconds = busy.yLabels.filter((l) => / s$/.test(l.text));
      expect(seconds.length, busy.yLabels.map((l) => l.text).join(', ')).toBeGreaterThanOrEqual(2);
      expect(busy.yLabels.some((l) => /ms$/.test(l.text))).toBe(false);
      expect(busy.xLabels.length).toBeGreaterThanOrEqual(2);
      for (const l of busy.xLabels) expect(l.text).toMatch(/^\d\d:\d\d$/);

      const single = await layoutOf(page, ONE_MINUTE);
      expect(single.legend.map((l) => l.text)).toEqual(['TTFT p50', 'TTFT p95', 'requests/min']);
      expect(single.unit).toBe('ms');
      expect(single.dots).toHaveLength(2);
      for (const dot of single.dots) expect(dot.box.width).toBeGreaterThanOrEqual(4);

      // recharts measures its labels and lays the axes out again: wait for the final layout, then nothing may be cut.
      for (const model of [BUSY, ONE_MINUTE]) {
        await expect.poll(async () => clipped(await layoutOf(page, model), width), { timeout: 10_000 }).toEqual([]);
      }
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);

      await history.screenshot({ path: join(IMAGES, `history-panel-${width}.png`) });
      await context.close();
    });
  }
});
