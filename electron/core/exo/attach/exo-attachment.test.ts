/**
 * ExoAttachment on its own, against fake exos over HTTP: attaches apply in the order
 * they were asked for, and a replaced attachment stops polling.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ExoProbeAnswer } from '../../../../shared/api';
import { SnapshotHub } from '../../app-state/snapshot-hub';
import { startFakeExo, type FakeExo, demoCluster } from '../../../../test/support/fake-exo';
import { ExoAttachment } from './exo-attachment';
import { sleep } from '../../../../test/support/eventually';

/** Probes `slowUrl` a second late: an attach asked for first finishes its test last. */
class SlowProbe extends ExoAttachment {
  constructor(
    private readonly slowUrl: string,
    ...args: ConstructorParameters<typeof ExoAttachment>
  ) {
    super(...args);
  }

  override async probe(url: string): Promise<ExoProbeAnswer> {
    if (url === this.slowUrl) await sleep(1_000);
    return super.probe(url);
  }
}

const fakes: FakeExo[] = [];
let attachment: ExoAttachment | null = null;
afterEach(async () => {
  await attachment?.stop();
  attachment = null;
  await Promise.all(fakes.splice(0).map((f) => f.close()));
});

describe('ExoAttachment', () => {
  it('applies attaches in the order asked, even when the first one tests its address last, and stops the one it replaces', async () => {
    const first = await startFakeExo({ cluster: demoCluster() });
    const second = await startFakeExo({ cluster: demoCluster() });
    fakes.push(first, second);
    const hub = new SnapshotHub({ record: () => undefined });
    const saved: Array<string | null> = [];
    attachment = new SlowProbe(first.url, {
      hub,
      saveUrl: async (url) => void saved.push(url),
      exoLogDir: null,
      offerUrl: null,
    });
    await Promise.all([attachment.attach(first.url), attachment.attach(second.url)]);
    expect(attachment.url).toBe(second.url);
    expect(saved).toEqual([first.url, second.url]);
    await sleep(800);
    expect(hub.snapshot().exo?.url).toBe(second.url);
    const before = first.hits.get('/state/tasks') ?? 0;
    await sleep(1_200);
    // Nothing polls the replaced exo any more.
    expect(first.hits.get('/state/tasks') ?? 0).toBe(before);
    expect(second.hits.get('/state/tasks') ?? 0).toBeGreaterThan(1);
  });

  it('detaches: the exo part leaves the snapshot and the saved address is cleared', async () => {
    const fake = await startFakeExo({ cluster: demoCluster() });
    fakes.push(fake);
    const hub = new SnapshotHub({ record: () => undefined });
    const saved: Array<string | null> = [];
    attachment = new ExoAttachment({
      hub,
      saveUrl: async (url) => void saved.push(url),
      exoLogDir: null,
      offerUrl: null,
    });
    await attachment.attach(fake.url);
    await attachment.detach();
    expect(hub.snapshot()).toMatchObject({ exo: null, exoOffer: null, instances: [], warnings: [] });
    expect(saved).toEqual([fake.url, null]);
    expect(attachment.url).toBeNull();
  });
});
