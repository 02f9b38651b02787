/**
 * A load that never ends and a cluster split in two, in a real browser: `exobar serve
 * --exo` attached to the serving fake exo's two Macs (a ring of tiny-llama across
 * studio-a and studio-b, and tiny-llama-b on studio-a stopped mid-load, as exo's runners
 * can stay since exo removed its load timeout), with studio-b's own exo on 127.0.0.2 at
 * the same port, published as studio-b's address.
 *
 * - The page says exo_load_stalled (model, Mac, phase, layers, how long) with Place again
 *   and Stop; Place again meets the fast-synch gate beside the ring (in words, the
 *   stalled instance kept), and Stop deletes it and the warning goes.
 * - studio-b then stops seeing studio-a while its exo keeps running alone: the page says
 *   exo_cluster_split, "studio-b is up but no longer in this cluster: it sees 1 node".
 *
 * Screenshots: screenshots/exo-load-stall.png and exo-cluster-split.png (docs/images/ has copies).
 */
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Locator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeExoCluster, TINY, TINY_B, startServingExo, startStudioB, type ServingExo, type StudioB } from '../support/fake-exo';
import { fullPageShot, POPOVER_VIEWPORT } from './full-page-shot';
import { useExoPage } from '../support/e2e/exo-page';

const SHOTS = fileURLToPath(new URL('../../screenshots/', import.meta.url));
const shot = (name: string): Promise<void> => fullPageShot(rig.page, `${SHOTS}${name}.png`);
const banner = (code: string): Locator => rig.page.locator(`[data-testid="warning-banner"][data-code="${code}"]`);

let studioB: StudioB;

beforeAll(() => mkdir(SHOTS, { recursive: true }));
afterAll(async () => studioB?.close());

const rig = useExoPage({
  startExo: async (): Promise<ServingExo> => {
    const cluster = new FakeExoCluster();
    cluster.addNode({ name: 'studio-a', chip: 'Apple M3 Ultra', model: 'Mac Studio', ramGb: 96 });
    cluster.addNode({ name: 'studio-b', chip: 'Apple M3 Ultra', model: 'Mac Studio', ramGb: 96 });
    cluster.addInstance({ model: TINY, nodes: ['studio-a', 'studio-b'], ready: true });
    cluster.addInstance({ model: TINY_B, nodes: ['studio-a'] });
    // Idle → Connecting → Connected → Loading, then nothing more.
    cluster.step(4);
    cluster.stallLoading(TINY_B);
    const exo = await startServingExo({ cluster });
    cluster.node('studio-b').addresses = ['127.0.0.2'];
    studioB = await startStudioB(cluster, 'studio-b', { host: '127.0.0.2', port: exo.port });
    return exo;
  },
  stopExo: (exo: ServingExo) => exo.close(),
  viewport: POPOVER_VIEWPORT,
  // The least the setting allows: the fake's Macs are taken as fast, so the floor decides.
  settings: { exo: { loadStallSeconds: 10 } },
});

describe('a stalled exo load and a split cluster, in the page', () => {
  it('says the stalled load with the model, the Mac, the phase and how long, and offers Place again and Stop', async () => {
    await rig.page.goto(rig.serve.openUrl);
    await expect.poll(() => rig.page.getByTestId('exo-connection').textContent(), { timeout: 30_000 }).toBe('connected');
    await expect.poll(() => banner('exo_load_stalled').count(), { timeout: 40_000 }).toBe(1);
    const stalled = banner('exo_load_stalled');
    expect(await stalled.locator('h2').textContent()).toMatch(/^tiny-llama-b on studio-a has not moved for \d+ s while loading, 4 of 16 layers loaded$/);
    expect(await stalled.textContent()).toContain('exo has no load timeout (removed in exo PR #1889)');
    expect(await stalled.getByRole('button', { name: 'Place again' }).isVisible()).toBe(true);
    expect(await stalled.getByRole('button', { name: 'Stop tiny-llama-b' }).isVisible()).toBe(true);
    await shot('exo-load-stall');
  });

  it('holds Place again at the fast-synch gate beside the ring, in words, and keeps the stalled instance', async () => {
    await banner('exo_load_stalled').getByRole('button', { name: 'Place again' }).click();
    await expect.poll(() => rig.page.getByTestId('notice').textContent(), { timeout: 15_000 }).toContain('would be a second ring model on studio-');
    expect(await banner('exo_load_stalled').count()).toBe(1);
    expect([...rig.exo.cluster.instances.values()].filter((i) => i.modelId === TINY_B)).toHaveLength(1);
    await rig.page.getByTestId('notice').getByRole('button', { name: 'Dismiss' }).click();
  });

  it('Stop deletes the stalled instance on exo and the warning goes', async () => {
    await banner('exo_load_stalled').getByRole('button', { name: 'Stop tiny-llama-b' }).click();
    await expect.poll(() => banner('exo_load_stalled').count(), { timeout: 15_000 }).toBe(0);
    expect([...rig.exo.cluster.instances.values()].filter((i) => i.modelId === TINY_B)).toEqual([]);
  });

  it('says studio-b is up but no longer in this cluster once it sees only itself', async () => {
    studioB.split();
    rig.exo.cluster.step();
    await expect.poll(() => banner('exo_cluster_split').count(), { timeout: 40_000 }).toBe(1);
    expect(await banner('exo_cluster_split').locator('h2').textContent()).toBe('studio-b is up but no longer in this cluster: it sees 1 node');
    expect(await banner('exo_cluster_split').textContent()).toContain(`127.0.0.2:${rig.exo.port}`);
    await shot('exo-cluster-split');
  });
});
