import type { Page } from 'playwright-core';

/** The popover's width and height in the browser tests. */
export const POPOVER_VIEWPORT = { width: 420, height: 700 };

/**
 * A screenshot of the whole page, grown to its content (the README shows it in full),
 * then the popover's viewport again.
 */
export async function fullPageShot(page: Page, path: string): Promise<void> {
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  await page.setViewportSize({ width: POPOVER_VIEWPORT.width, height });
  await page.screenshot({ path });
  await page.setViewportSize(POPOVER_VIEWPORT);
}
