/**
 * The polling benchmark measures a real-size state: `exo_poll_cpu_percent` is only worth
 * its figure if the fake exo it polls (benchCluster, `npm run fake-exo -- --scenario
 * bench`) sends what a real node sends. Each of its 4 Macs lists as many `downloads`
 * entries as the real capture's node (test/fixtures/exo/real/state-ready.json: 123
 * pending cards beside its own), about as many bytes, and the whole /state is at least
 * four real nodes' worth of downloads. A smaller fake would make the benchmark pass on a
 * load exobar never meets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeExo, type FakeExo } from './fake-exo-server';
import { tagOf, type Json } from './fixture-data';
import { readReal } from './real-captures';
import { benchCluster } from './scenarios';

let exo: FakeExo;
let text: string;
beforeAll(async () => {
  exo = await startFakeExo({ cluster: benchCluster() });
  text = await (await fetch(`${exo.url}/state`)).text();
});
afterAll(async () => {
  await exo?.close();
});

const pending = (entries: Json[]) => entries.filter((e) => tagOf(e) === 'DownloadPending').length;

describe("the polling benchmark's fake exo", () => {
  it("serves 4 Macs whose downloads are the real node's size, pending cards included", () => {
    const real = Object.values(readReal('state-ready.json').downloads as Record<string, Json[]>)[0]!;
    const realBytes = JSON.stringify(real).length;
    const fake = JSON.parse(text) as Json;
    const perMac = Object.values(fake.downloads as Record<string, Json[]>);
    expect(perMac).toHaveLength(4);
    expect(Object.keys(fake.nodeIdentities as Json)).toHaveLength(4);
    for (const entries of perMac) {
      expect(pending(entries)).toBe(pending(real));
      expect(entries.length).toBeGreaterThanOrEqual(real.length - 1);
      const bytes = JSON.stringify(entries).length;
      expect(bytes).toBeGreaterThan(realBytes * 0.9);
      expect(bytes).toBeLessThan(realBytes * 1.1);
    }
    expect(text.length).toBeGreaterThan(4 * realBytes);
  });
});
