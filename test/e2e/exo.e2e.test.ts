/**
 * Attach mode in a real browser: `npm run fake-exo` (a child process) and
 * `exobar serve --exo http://127.0.0.1:PORT` together show two exo models on one Mac,
 * a queue, a pending cancellation and a failed runner; losing the exo node shows the
 * unreachable state, and exobar recovers by itself when exo comes back (new node ids:
 * instances matched by model).
 *
 * Screenshots go to screenshots/ (gitignored); docs/images/exo-*.png are copies.
 */
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Locator } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { fullPageShot, POPOVER_VIEWPORT } from './full-page-shot';
import { freePort } from '../support/free-port';
import { startFakeExoProcess, type FakeExoProcess } from '../support/fake-exo';
import { useExoPage } from '../support/e2e/exo-page';

const SHOTS = fileURLToPath(new URL('../../screenshots/', import.meta.url));
const QWEN = 'exo:mlx-community/Qwen3-30B-A3B-4bit';
const LLAMA_1B = 'exo:mlx-community/Llama-3.2-1B-Instruct-4bit';
const LLAMA_3B = 'exo:mlx-community/Llama-3.2-3B-Instruct-4bit';

let port: number;
const card = (id: string): Locator => rig.page.locator(`[data-testid="instance-card"][data-instance="${id}"]`);
const connection = (): Locator => rig.page.getByTestId('exo-connection');

/** The whole rig.page, grown to its content (the README shows it in full). */
const shot = (name: string): Promise<void> => fullPageShot(rig.page, `${SHOTS}${name}.png`);

beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  port = await freePort();
});

const rig = useExoPage({
  startExo: () => startFakeExoProcess('demo', 1_000, port),
  stopExo: (exo: FakeExoProcess) => exo.stop(),
  viewport: POPOVER_VIEWPORT,
});

describe('exobar serve --exo against the fake exo', () => {
  it('shows two exo models on one Mac, a queue, a pending cancellation and a failed runner', async () => {
    await rig.page.goto(rig.serve.openUrl);
    await expect.poll(() => connection().textContent(), { timeout: 30_000 }).toBe('connected');
    await expect.poll(() => rig.page.getByTestId('instance-card').count(), { timeout: 15_000 }).toBe(3);
    const source = rig.page.getByTestId('exo-source');
    expect(await source.textContent()).toContain(`exo at ${rig.exo.url}`);
    expect(await source.textContent()).toContain('2 Macs');

    // Two models on studio-a, both serving.
    for (const id of [QWEN, LLAMA_1B]) expect(await card(id).getByTestId('exo-runner').getAttribute('data-node')).toBe('studio-a');
    // The queue, in the runner, with ages.
    expect(await card(QWEN).getByTestId('exo-task').count()).toBeGreaterThanOrEqual(2);
    expect(await card(QWEN).getByTestId('exo-task').first().textContent()).toMatch(/not observed.*\d+ s/);
    // The pending cancellation, with its age.
    expect(await card(QWEN).getByTestId('pending-cancel').textContent()).toMatch(/exo has not completed its CancelTask\d+ s/);
    // The failed runner on mini-b, with exo's diagnostics.
    const failed = card(LLAMA_3B);
    expect(await failed.getByTestId('exo-runner-status').textContent()).toBe('Failed: Terminated (signal=6 (Abort trap: 6))');
    expect(await failed.getByTestId('exo-diagnostic').textContent()).toContain('RunnerMetalGpuTimeout');
    // The warnings, "assumed" where exo's default was assumed.
    const codes = await rig.page.getByTestId('warning-banner').evaluateAll((els) => els.map((e) => e.getAttribute('data-code')).sort());
    expect(codes).toEqual(['exo_runner_failed', 'two_ring_fast_synch']);
    expect(await rig.page.locator('[data-code="two_ring_fast_synch"]').getByTestId('warning-assumed').count()).toBe(1);
    await shot('exo-attached');
  });

  it('shows the exo node lost as not reachable, and recovers by itself when exo returns (matched by model)', async () => {
    await rig.exo.stop();
    await expect.poll(() => connection().textContent(), { timeout: 15_000 }).toMatch(/^not reachable since \d\d:\d\d:\d\d$/);
    expect(await rig.page.getByTestId('exo-source').getAttribute('data-connected')).toBe('false');
    await expect.poll(() => rig.page.locator('[data-code="exo_unreachable"]').count(), { timeout: 5_000 }).toBe(1);
    // The last known models stay on screen meanwhile.
    expect(await rig.page.getByTestId('instance-card').count()).toBe(3);
    await shot('exo-unreachable');

    rig.exo = await startFakeExoProcess('demo', 1_000, port);
    await expect.poll(() => connection().textContent(), { timeout: 30_000 }).toBe('connected');
    await expect.poll(() => rig.page.getByTestId('exo-restarted').count(), { timeout: 10_000 }).toBe(1);
    expect(await rig.page.getByTestId('exo-restarted').textContent()).toContain('exo restarted: instances matched by model');
    await expect.poll(() => rig.page.getByTestId('instance-card').count(), { timeout: 10_000 }).toBe(3);
    expect(await card(QWEN).getByText('matched by model').count()).toBe(1);
    expect(await rig.page.locator('[data-code="exo_unreachable"]').count()).toBe(0);
  });
});
