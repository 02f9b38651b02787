/**
 * `/state/instances` is read in the round where runners or tasks changed (a placement
 * or a delete shows at once), every 5 s, and not at rest: each request costs the poller
 * more than reading an unchanged body does.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { attachToFake, type AttachHarness, GPT_OSS_20B, demoCluster } from '../../../../test/support/fake-exo';

let h: AttachHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

const instanceHits = () => h!.fake.hits.get('/state/instances') ?? 0;
const models = () => h!.monitor.view().instances.map((i) => i.model);

describe('instances read when they can have changed', () => {
  it('skips /state/instances at rest, reads it in the same round as a placement or a delete, and every 5 s', async () => {
    h = await attachToFake(demoCluster);
    await h.round();
    expect(instanceHits()).toBe(1);
    const before = models();
    expect(before).not.toContain(GPT_OSS_20B);

    // At rest: runners and tasks unchanged, so two requests a round, not three.
    for (let i = 0; i < 3; i++) await h.round();
    expect(instanceHits()).toBe(1);
    expect(h.fake.hits.get('/state/tasks')).toBe(4);

    // A placement adds runners and worker tasks: the new model is seen in the very next round.
    const placed = h.cluster.addInstance({ model: GPT_OSS_20B, nodes: ['mini-b'], ready: true });
    await h.round();
    expect(instanceHits()).toBe(2);
    expect(models()).toContain(GPT_OSS_20B);

    // A delete shuts its runners down: gone in the next round too.
    h.cluster.deleteInstance(placed.id);
    await h.round();
    expect(instanceHits()).toBe(3);
    expect(models()).not.toContain(GPT_OSS_20B);
    expect(models().sort()).toEqual(before.sort());

    // With the node sections every 5 s, whatever changed.
    await h.round();
    expect(instanceHits()).toBe(3);
    await h.round(5_000);
    expect(instanceHits()).toBe(4);
    expect(h.monitor.client.connection).toMatchObject({ connected: true, pollErrors: 0, parseErrors: 0 });
  });
});
