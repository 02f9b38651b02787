/**
 * exo as it really behaves, in a real browser: `exobar serve --exo URL` over the serving
 * fake exo, which downloads a model on studio-a and cancels as exo 0.3.70 does (its
 * runner goes on generating the cancelled request). The Mac's row shows the ongoing
 * download with its progress; the card shows "still generating a cancelled request"
 * with the exo_cancelled_still_running warning.
 *
 * Screenshot: docs/images/exo-download-ghost.png (the README's exo section).
 */
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { makePrompt } from '../../shared/token-count';
import { startFakeDownload, LLAMA_1B, QWEN_30B, startServingExo, stallCluster, type ServingExo } from '../support/fake-exo';
import { useExoPage } from '../support/e2e/exo-page';

const IMAGES = fileURLToPath(new URL('../../docs/images/', import.meta.url));
const GB = 1024 ** 3;

let ticker: NodeJS.Timeout | null = null;

const rig = useExoPage({
  startExo: () => {
    const cluster = stallCluster();
    const download = startFakeDownload(cluster, 'studio-a', QWEN_30B, 16 * GB);
    let bytes = 3 * GB;
    ticker = setInterval(() => download.progress((bytes += 60e6), 60e6), 1_000);
    return startServingExo({ cluster, timeScale: 2 });
  },
  stopExo: (exo: ServingExo) => exo.close(),
  viewport: { width: 420, height: 700 },
});

// Registered after the page's: after-hooks run last-registered first, so the download stops moving first.
afterAll(() => {
  if (ticker) clearInterval(ticker);
});

describe('exo downloads and a cancelled request exo keeps generating, in the page', () => {
  it("shows the ongoing download on the Mac's row and the ghost generation with its warning", async () => {
    await rig.page.goto(rig.serve.openUrl);
    await expect.poll(() => rig.page.getByTestId('exo-connection').textContent(), { timeout: 30_000 }).toBe('connected');
    const progress = rig.page.locator('[data-testid="exo-node"][data-node="studio-a"] [data-testid="exo-download-progress"]');
    // Speed and time left need two reads of /state/downloads, 5 s apart.
    await expect.poll(() => progress.textContent(), { timeout: 20_000 }).toMatch(/^\d+% · \d+\.\d GiB of 16\.0 GiB · \d+ MB\/s · (\d+ m )?\d+ s left$/);

    // A long answer through exobar, cancelled after a few chunks: exo's runner goes on.
    const response = await fetch(`${rig.serve.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: LLAMA_1B, messages: makePrompt(30, 'e2e-ghost'), max_tokens: 3000, stream: true }),
    });
    const reader = response.body!.getReader();
    let text = '';
    while (!/"id":"([^"]+)"/.test(text)) text += new TextDecoder().decode((await reader.read()).value);
    const id = /"id":"([^"]+)"/.exec(text)![1]!;
    await fetch(`${rig.serve.url}/v1/cancel/${id}`, { method: 'POST' });
    while (!(await reader.read()).done);

    const card = rig.page.locator(`[data-testid="instance-card"][data-instance="exo:${LLAMA_1B}"]`);
    await expect
      .poll(() => card.getByTestId('exo-ghost-generation').textContent(), { timeout: 10_000 })
      .toMatch(/still generating a cancelled request, [2-9] s/);
    const banner = rig.page.locator('[data-testid="warning-banner"][data-code="exo_cancelled_still_running"]');
    expect(await banner.textContent()).toContain('Llama-3.2-1B-Instruct-4bit on studio-a is still generating a cancelled request');
    const height = await rig.page.evaluate(() => document.documentElement.scrollHeight);
    await rig.page.setViewportSize({ width: 420, height });
    await rig.page.screenshot({ path: `${IMAGES}exo-download-ghost.png` });
  });
});
