/**
 * The slow round (the node sections and `downloads`, every 5 s) reads one section after
 * another: the poller then keeps three sockets to exo (runners and tasks side by side,
 * and one for the rest) instead of eight, and a section exo fails ends the round before
 * the sections after it are asked for.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { attachToFake, type AttachHarness, demoCluster } from '../../../../test/support/fake-exo';
import { SLOW_SECTIONS } from './exo-client';

let h: AttachHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

const hits = (path: string) => h!.fake.hits.get(path) ?? 0;

describe('the slow round', () => {
  it('keeps at most three connections to exo across fast and slow rounds', async () => {
    h = await attachToFake(demoCluster);
    await h.round();
    for (let i = 0; i < 3; i++) await h.round();
    await h.round(5_000);
    await h.round();
    expect(hits('/state/downloads')).toBe(2);
    expect(h.fake.connections).toBeLessThanOrEqual(3);
    expect(h.monitor.client.connection).toMatchObject({ connected: true, pollErrors: 0, parseErrors: 0 });
  });

  it('ends at the first section exo fails, without asking for the ones after it, and reads them all next time', async () => {
    h = await attachToFake(demoCluster);
    await h.round();
    expect(h.monitor.client.connection.connected).toBe(true);
    const failing = SLOW_SECTIONS[1];
    const after = [...SLOW_SECTIONS.slice(2).map((s) => `/state/${s}`), '/state/downloads'];
    const before = after.map(hits);
    h.fake.inject('status500', { path: `/state/${failing}`, times: 1 });
    await h.round(5_000);
    expect(h.monitor.client.connection.connected).toBe(false);
    expect(h.monitor.client.connection.lastError?.message).toContain(`/state/${failing}`);
    expect(after.map(hits)).toEqual(before);

    // The next attempt (after its backoff) reads every section again.
    await h.round(10_000);
    expect(h.monitor.client.connection.connected).toBe(true);
    expect(after.map(hits)).toEqual(before.map((n) => n + 1));
  });
});
