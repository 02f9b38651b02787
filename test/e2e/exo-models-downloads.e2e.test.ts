/**
 * exo's downloads in the Models panel, in a real browser: `exobar serve --exo URL` over
 * the serving fake exo, whose `downloads` follow exo 0.3.70 (the 123 pending cards per
 * Mac of the real capture state-ready.json, beside the entries of the downloads the test
 * drives). studio-a has Llama-3.2-1B on disk and downloads Llama-3.2-3B and Qwen3-30B;
 * mini-b's download of gpt-oss failed. The panel shows each ongoing download's bytes,
 * percent, speed and time left moving from poll to poll (exobar's speed from the bytes
 * of successive polls, not exo's per-session figure), the failed one with exo's message,
 * and never the pending cards; once the 3B completes it is listed as on disk and the
 * safe pair on exo offers it.
 *
 * Screenshot: docs/images/exo-models-downloads.png (the README's exo section).
 */
import { fileURLToPath } from 'node:url';
import type { Locator } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import type { FakeDownload, ServingExo } from '../support/fake-exo';
import { CARDS_PER_NODE, FakeExoCluster, GPT_OSS_20B, LLAMA_1B, LLAMA_3B, QWEN_30B, startFakeDownload, startServingExo } from '../support/fake-exo';
import { fullPageShot, POPOVER_VIEWPORT } from './full-page-shot';
import { useExoPage } from '../support/e2e/exo-page';

const IMAGES = fileURLToPath(new URL('../../docs/images/', import.meta.url));
const GB = 1024 ** 3;
/** The rate the bytes really move at; exo's own `speed` says 5 MB/s (a resumed session's figure). */
const RATE = 100e6;
const EXO_SPEED = 5e6;
const DISK_FULL = 'Not enough disk space: 9.8 GB free, 12.0 GB needed';

let ticker: NodeJS.Timeout | null = null;
let medium: FakeDownload;

/** Bytes follow the wall clock, so the rate between two of exobar's polls is RATE whenever they come. */
function driveDownload(download: FakeDownload, fromBytes: number, totalBytes: number, startedAt: number): () => void {
  return () => download.progress(Math.min(totalBytes, fromBytes + (RATE * (Date.now() - startedAt)) / 1000), EXO_SPEED);
}

interface Progress {
  percent: number;
  downloadedGb: number;
  mbPerS: number;
  leftS: number;
}

const PROGRESS = /^(\d+)% · (\d+\.\d) GiB of 16\.0 GiB · (\d+) MB\/s · (?:(\d+) m )?(\d+) s left$/;

/** "21% · 3.4 GiB of 16.0 GiB · 100 MB/s · 2 m 15 s left", read back as figures (null until speed is known). */
function parseProgress(text: string | null): Progress | null {
  const m = PROGRESS.exec(text ?? '');
  if (!m) return null;
  return { percent: Number(m[1]), downloadedGb: Number(m[2]), mbPerS: Number(m[3]), leftS: Number(m[4] ?? 0) * 60 + Number(m[5]) };
}

const exoPart = (): Locator => rig.page.getByRole('region', { name: 'exo downloads' });
const qwenProgress = (): Locator =>
  exoPart().locator(
    `[data-testid="exo-model-downloads-node"][data-node="studio-a"] [data-testid="exo-download"][data-model="${QWEN_30B}"] [data-testid="exo-download-progress"]`,
  );
const downloaded = (): Promise<Array<string | null>> =>
  exoPart()
    .getByTestId('exo-downloaded')
    .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-model')));
const planModels = (): Promise<string[]> => rig.page.getByRole('list', { name: 'Safe pair plan' }).locator('[data-testid="plan-row"] strong').allTextContents();

const rig = useExoPage({
  startExo: () => {
    const cluster = new FakeExoCluster();
    cluster.addNode({ name: 'studio-a', chip: 'Apple M3 Ultra', model: 'Mac Studio', ramGb: 96 });
    cluster.addNode({ name: 'mini-b', chip: 'Apple M4 Pro', model: 'Mac mini', ramGb: 64 });
    for (const node of cluster.nodes) node.downloadCards = CARDS_PER_NODE;
    const small = startFakeDownload(cluster, 'studio-a', LLAMA_1B, 0.7 * GB);
    small.complete();
    medium = startFakeDownload(cluster, 'studio-a', LLAMA_3B, 1.8 * GB);
    medium.progress(0.9 * GB, EXO_SPEED);
    const qwen = startFakeDownload(cluster, 'studio-a', QWEN_30B, 16 * GB);
    startFakeDownload(cluster, 'mini-b', GPT_OSS_20B, 12 * GB).fail(DISK_FULL);
    const tick = driveDownload(qwen, 3 * GB, 16 * GB, Date.now());
    tick();
    ticker = setInterval(tick, 100);
    return startServingExo({ cluster });
  },
  stopExo: (exo: ServingExo) => exo.close(),
  viewport: POPOVER_VIEWPORT,
});

// Registered after the page's: after-hooks run last-registered first, so the downloads stop moving first.
afterAll(() => {
  if (ticker) clearInterval(ticker);
});

describe("exo's downloads in the Models panel", () => {
  it('shows an ongoing download whose bytes, percent, speed and time left move from poll to poll', async () => {
    await rig.page.goto(rig.serve.openUrl);
    await expect.poll(() => rig.page.getByTestId('exo-connection').textContent(), { timeout: 30_000 }).toBe('connected');
    const models = rig.page.getByRole('region', { name: 'Models' });
    await models.getByRole('button', { name: /^Models/ }).click();

    // Speed and time left need two reads of /state/downloads (5 s apart): until then exo's figures.
    await expect.poll(async () => parseProgress(await qwenProgress().textContent())?.mbPerS, { timeout: 30_000 }).toBeGreaterThanOrEqual(90);
    const first = parseProgress(await qwenProgress().textContent())!;
    // exobar's rate from the bytes of successive polls (RATE), not exo's 5 MB/s.
    expect(first.mbPerS).toBeLessThanOrEqual(110);
    const leftGb = 16 - first.downloadedGb;
    expect(first.leftS).toBeGreaterThan(((leftGb - 0.2) * GB) / 110e6);
    expect(first.leftS).toBeLessThan(((leftGb + 0.2) * GB) / 90e6);
    // The percent is floored, the bytes rounded to 0.1 GiB: they agree within 1.5 points.
    expect(Math.abs(first.percent - (first.downloadedGb / 16) * 100)).toBeLessThanOrEqual(1.5);

    // A later poll: more bytes, a higher percent, less time left, the speed still the real one.
    // Waited for as one reading: on a loaded machine one poll's rate can dip enough that its
    // rounded time left equals the previous one, while the bytes have already moved on.
    const moved = (p: ReturnType<typeof parseProgress>): boolean =>
      p !== null && p.downloadedGb > first.downloadedGb && p.percent > first.percent && p.leftS < first.leftS;
    await expect.poll(async () => moved(parseProgress(await qwenProgress().textContent())), { timeout: 30_000 }).toBe(true);
    const next = parseProgress(await qwenProgress().textContent())!;
    expect(next.mbPerS).toBeGreaterThanOrEqual(90);
    expect(next.mbPerS).toBeLessThanOrEqual(110);
  });

  it("shows the failed download with exo's message, and never the pending cards", async () => {
    const failed = exoPart().locator('[data-testid="exo-model-downloads-node"][data-node="mini-b"] [data-testid="exo-download"]');
    expect(await failed.count()).toBe(1);
    expect(await failed.getAttribute('data-status')).toBe('failed');
    expect(await failed.getAttribute('data-model')).toBe(GPT_OSS_20B);
    expect(await failed.textContent()).toContain(DISK_FULL);
    // 2 Macs x 123 pending cards in exo's state; listed: the two ongoing and the failed one.
    const listed = await exoPart()
      .getByTestId('exo-download')
      .evaluateAll((rows) => rows.map((r) => `${r.getAttribute('data-status')} ${r.getAttribute('data-model')}`));
    expect(listed.sort()).toEqual([`failed ${GPT_OSS_20B}`, `ongoing ${LLAMA_3B}`, `ongoing ${QWEN_30B}`].sort());
  });

  it('lists a completed model as on disk, and the safe pair on exo offers it', async () => {
    expect(await downloaded()).toEqual([LLAMA_1B]);
    await expect
      .poll(() => rig.page.getByRole('list', { name: 'Blockers' }).textContent(), { timeout: 15_000 })
      .toContain('fewer than two downloaded text models');
    expect(await planModels()).toEqual([]);

    medium.complete();
    await expect.poll(downloaded, { timeout: 15_000 }).toEqual([LLAMA_1B, LLAMA_3B]);
    const onDisk = exoPart().locator(`[data-testid="exo-downloaded"][data-model="${LLAMA_3B}"]`);
    expect(await onDisk.textContent()).toContain('on studio-a');
    expect(await exoPart().locator(`[data-testid="exo-download"][data-model="${LLAMA_3B}"]`).count()).toBe(0);
    // The plan reloads once the download completes: the pair is the two models on disk.
    await expect.poll(planModels, { timeout: 15_000 }).toEqual(['Llama-3.2-1B-Instruct-4bit', 'Llama-3.2-3B-Instruct-4bit']);
    expect(await rig.page.getByRole('list', { name: 'Blockers' }).count()).toBe(0);
    await fullPageShot(rig.page, `${IMAGES}exo-models-downloads.png`);
  });
});
