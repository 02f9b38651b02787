/**
 * exo's dispatch stall in a real browser: `exobar serve --exo` attached to the serving
 * fake exo with the blocking worker (stock exo's plan loop), the 1B and the 3B on one
 * Mac. A long prompt to the 3B through exobar, a second 3B request sent straight to exo
 * (bypassing exobar, so exobar's hold cannot keep it back: exo's worker now waits for
 * the prefilling 3B's acknowledgement), and a short request to the 1B through exobar:
 * the page shows `exo_dispatch_stall` naming both models, and the 3B's card its prefill.
 *
 * Screenshot: screenshots/exo-stall.png (docs/images/exo-stall.png is a copy).
 */
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LLAMA_1B, LLAMA_3B, streamChatText, startServingExo, type ServingExo } from '../support/fake-exo';
import { useExoPage } from '../support/e2e/exo-page';

const SHOTS = fileURLToPath(new URL('../../screenshots/', import.meta.url));

const controller = new AbortController();

/** A streamed chat completion to `base`, read to its end in the background. */
function stream(base: string, model: string, tokens: number, salt: string): Promise<unknown> {
  return streamChatText(base, model, tokens, salt, controller.signal);
}

beforeAll(() => mkdir(SHOTS, { recursive: true }));

const rig = useExoPage({
  // Time scale 0.5: the 3B's 60k-token prefill takes about 19 s, the stall shows after 2 s.
  startExo: () => startServingExo({ mode: 'blocking', timeScale: 0.5 }),
  stopExo: (exo: ServingExo) => exo.close(),
  viewport: { width: 420, height: 700 },
});

// Registered after the page's: after-hooks run last-registered first, so the streams end before the page closes.
afterAll(() => controller.abort());

describe('the stall on the blocking fake exo', () => {
  it('shows exo_dispatch_stall naming both models when a request bypasses exobar', async () => {
    await rig.page.goto(rig.serve.openUrl);
    await expect.poll(() => rig.page.getByTestId('exo-connection').textContent(), { timeout: 30_000 }).toBe('connected');
    const card3b = rig.page.locator(`[data-testid="instance-card"][data-instance="exo:${LLAMA_3B}"]`);
    await expect.poll(() => card3b.count(), { timeout: 15_000 }).toBe(1);

    const long = stream(rig.serve.url, LLAMA_3B, 60_000, 'long');
    await expect.poll(() => card3b.getByTestId('prefill').count(), { timeout: 15_000 }).toBe(1);
    const bypass = stream(rig.exo.url, LLAMA_3B, 50, 'bypass');
    await expect.poll(() => rig.exo.worker.openCommands().length, { timeout: 5000 }).toBe(2);
    const short = stream(rig.serve.url, LLAMA_1B, 50, 'short');

    const banner = rig.page.locator('[data-testid="warning-banner"][data-code="exo_dispatch_stall"]');
    await expect.poll(() => banner.count(), { timeout: 10_000 }).toBe(1);
    const text = (await banner.textContent()) ?? '';
    expect(text).toContain(LLAMA_1B);
    expect(text).toContain(LLAMA_3B);
    expect(text).toContain('that exobar did not send');
    expect(text).toContain('exo PR 2348');
    // The 1B's request waits, sent to exo, with no progress; the 3B's card shows the prefill and exo's task it did not send.
    const card1b = rig.page.locator(`[data-testid="instance-card"][data-instance="exo:${LLAMA_1B}"]`);
    expect(await card1b.locator('[data-testid="queue-row"][data-phase="awaiting_ack"]').count()).toBe(1);
    expect(await card3b.locator('[data-testid="exo-task"][data-observed="false"]').count()).toBe(1);

    const height = await rig.page.evaluate(() => document.documentElement.scrollHeight);
    await rig.page.setViewportSize({ width: 420, height });
    await rig.page.screenshot({ path: `${SHOTS}exo-stall.png` });
    controller.abort();
    await Promise.all([long, bypass, short]);
  });
});
