/**
 * The set-up every exo browser test shares: a fake exo (in this process or a child),
 * `exobar serve --exo <its url>` attached to it, Debian's Chromium and one light page,
 * all closed after the file (the page first, the exo last). Each test keeps its own
 * assertions and screenshots; this only stands the scene up.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { launchChromium } from './browser';
import { startServe, type ServeProcess } from './serve-process';

/** What a test drives; filled in by the file's `beforeAll`. */
export interface ExoPage<Exo> {
  /** The exo exobar is attached to; a test that restarts exo on the same port assigns the new one. */
  exo: Exo;
  serve: ServeProcess;
  browser: Browser;
  page: Page;
}

export interface ExoPageOptions<Exo> {
  startExo: () => Promise<Exo>;
  stopExo: (exo: Exo) => Promise<void>;
  viewport: { width: number; height: number };
  /** Settings written before `exobar serve` starts (e.g. `{ exo: { loadStallSeconds: 10 } }`). */
  settings?: Record<string, unknown>;
}

/** Registers the file's `beforeAll`/`afterAll` and returns what they fill in. */
export function useExoPage<Exo extends { url: string }>(options: ExoPageOptions<Exo>): ExoPage<Exo> {
  const rig = {} as ExoPage<Exo>;
  beforeAll(async () => {
    rig.exo = await options.startExo();
    rig.serve = await startServe({ simTimeScale: 0.1, args: ['--exo', rig.exo.url], settings: options.settings });
    rig.browser = await launchChromium();
    rig.page = await rig.browser.newPage({ viewport: options.viewport, colorScheme: 'light' });
  });
  afterAll(async () => {
    await rig.browser?.close();
    await rig.serve?.stop();
    if (rig.exo) await options.stopExo(rig.exo);
  });
  return rig;
}
