/**
 * A Mac leaving an exo cluster, in a real browser: `exobar serve --exo` attached to the
 * serving fake exo's two-node cluster (a ring of tiny-llama across studio-a and
 * studio-b, tiny-llama-b on studio-b). studio-b's exo stops; the fake removes it, both
 * instances and their runners as exo does. The page shows the cluster timeline under
 * the exo source and an `exo_model_lost` warning per model; Place again on the ring
 * places it on the one Mac left (through exo's placement preview) and its warning
 * clears; Place again on tiny-llama-b then meets the fast-synch gate (a second ring
 * model on studio-a, where fast synch is assumed on), and Dismiss forgets it.
 *
 * Screenshot: screenshots/exo-cluster.png (docs/images/exo-cluster.png is a copy).
 */
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Locator } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { STOPPED_NODE_REMOVAL_MS, TINY, TINY_B, twoNodeCluster, startServingExo, type ServingExo } from '../support/fake-exo';
import { fullPageShot, POPOVER_VIEWPORT } from './full-page-shot';
import { useExoPage } from '../support/e2e/exo-page';

const SHOTS = fileURLToPath(new URL('../../screenshots/', import.meta.url));

// The fake's clock runs ahead on demand, so studio-b's removal needs no 12 s wait.
const clock = { offset: 0 };

const lost = (model: string): Locator =>
  rig.page.locator('[data-testid="warning-banner"][data-code="exo_model_lost"]').filter({ hasText: `${model.split('/')[1]} was lost` });
const events = (): Promise<string[]> => rig.page.getByTestId('exo-event').allTextContents();

const shot = (name: string): Promise<void> => fullPageShot(rig.page, `${SHOTS}${name}.png`);

beforeAll(() => mkdir(SHOTS, { recursive: true }));

const rig = useExoPage({
  startExo: () => startServingExo({ cluster: twoNodeCluster(() => Date.now() + clock.offset) }),
  stopExo: (exo: ServingExo) => exo.close(),
  viewport: POPOVER_VIEWPORT,
});

describe('a Mac that leaves the cluster, in the page', () => {
  it('shows the timeline and a lost-model warning per model once studio-b is gone', async () => {
    await rig.page.goto(rig.serve.openUrl);
    await expect.poll(() => rig.page.getByTestId('exo-connection').textContent(), { timeout: 30_000 }).toBe('connected');
    await expect.poll(() => rig.page.getByTestId('instance-card').count(), { timeout: 15_000 }).toBe(2);

    rig.exo.cluster.stopNode('studio-b');
    rig.exo.cluster.step();
    clock.offset += STOPPED_NODE_REMOVAL_MS;
    rig.exo.cluster.step();

    await expect.poll(() => lost(TINY).count(), { timeout: 15_000 }).toBe(1);
    expect(await lost(TINY_B).count()).toBe(1);
    expect(await rig.page.getByTestId('instance-card').count()).toBe(0);
    expect(await lost(TINY).textContent()).toMatch(/studio-b left at \d\d:\d\d/);
    expect(await lost(TINY).textContent()).toContain('ran on studio-a and studio-b');

    // Newest first, each with the time exobar saw it.
    const timeline = await events();
    expect(timeline).toHaveLength(3);
    expect(timeline[0]).toMatch(/^\d\d:\d\d:\d\dtiny-llama-b deleted by exo after studio-b left at/);
    expect(timeline[1]).toMatch(/tiny-llama deleted by exo after studio-b left at \d\d:\d\d \(it ran on studio-a and studio-b\)$/);
    expect(timeline[2]).toContain('studio-b');
    expect(await rig.page.getByTestId('exo-event').first().getAttribute('data-kind')).toBe('instance_deleted');
    await shot('exo-cluster');
  });

  it('places the ring again on the one Mac left, and its warning clears once exo serves it', async () => {
    await lost(TINY).getByRole('button', { name: 'Place again' }).click();
    await expect.poll(() => lost(TINY).count(), { timeout: 15_000 }).toBe(0);
    await expect.poll(() => rig.page.getByTestId('instance-card').count(), { timeout: 15_000 }).toBe(1);
    expect(await rig.page.getByTestId('instance-card').getAttribute('data-instance')).toBe(`exo:${TINY}`);
    await expect.poll(async () => (await events())[0], { timeout: 15_000 }).toContain('tiny-llama');
    expect(await rig.page.getByTestId('exo-event').first().getAttribute('data-kind')).toBe('instance_placed');
    expect(await lost(TINY_B).count()).toBe(1);
  });

  it('holds Place again of tiny-llama-b behind the fast-synch gate beside the ring on studio-a, in words', async () => {
    await lost(TINY_B).getByRole('button', { name: 'Place again' }).click();
    const notice = rig.page.getByTestId('notice');
    await expect.poll(() => notice.textContent(), { timeout: 15_000 }).toContain('would be a second ring model on studio-a');
    expect(await lost(TINY_B).count()).toBe(1);
  });

  it('dismisses the model that was not placed again', async () => {
    await lost(TINY_B).getByRole('button', { name: 'Dismiss' }).click();
    await expect.poll(() => rig.page.locator('[data-code="exo_model_lost"]').count(), { timeout: 15_000 }).toBe(0);
  });
});
