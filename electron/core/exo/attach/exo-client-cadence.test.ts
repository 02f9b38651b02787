/**
 * The exo client's cadence, by its rounds rather than by a wall-clock window: the fast
 * paths every round, the node sections and downloads once per slow interval of the
 * client's own clock, over a few kept-alive sockets; and its timer keeps rounds coming.
 * How close to twice a second the rounds come on a real machine is the bench's figure
 * (bench/exo-poll-cpu.ts), not a test's.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeExo, type FakeExo, demoCluster } from '../../../../test/support/fake-exo';
import { ExoClient } from './exo-client';
import { eventually } from '../../../../test/support/eventually';

let fake: FakeExo | null = null;
let client: ExoClient | null = null;
afterEach(async () => {
  await client?.stop();
  await fake?.close();
  client = fake = null;
});

describe('exo client on its own timer', () => {
  it('polls the fast paths every round and the node sections and downloads once per 5 s of its clock, over kept-alive sockets', async () => {
    fake = await startFakeExo({ cluster: demoCluster() });
    let clock = 1_000_000;
    client = new ExoClient({ url: fake.url, now: () => clock });
    // Eleven rounds half a second apart on the client's clock: 0, 0.5, ..., 5 s.
    for (let round = 0; round <= 10; round++) {
      await client.tick();
      clock += 500;
    }
    expect(fake.hits.get('/state/tasks')).toBe(11);
    expect(fake.hits.get('/state/runners')).toBe(11);
    // The slow sections at 0 s and again at 5 s, never at the fast rate.
    expect(fake.hits.get('/state/nodeMemory')).toBe(2);
    expect(fake.hits.get('/state/downloads')).toBe(2);
    expect(client.connection).toMatchObject({ connected: true, pollErrors: 0 });
    // Keep-alive: a handful of sockets (one per path polled at once) for all those requests.
    const requests = [...fake.hits.values()].reduce((a, b) => a + b, 0);
    expect(requests).toBeGreaterThan(30);
    expect(fake.connections).toBeLessThanOrEqual(8);
  });

  it('started, it polls at once and then on its timer, the fast paths together', async () => {
    fake = await startFakeExo({ cluster: demoCluster() });
    client = new ExoClient({ url: fake.url });
    client.start();
    await eventually(() => (fake!.hits.get('/state/tasks') ?? 0) >= 4, 30_000, 'four fast rounds');
    await client.stop();
    const fast = fake.hits.get('/state/tasks')!;
    expect(fake.hits.get('/state/runners')).toBe(fast);
    expect(fake.hits.get('/state/nodeMemory')).toBeGreaterThanOrEqual(1);
    expect(fake.hits.get('/state/nodeMemory')).toBeLessThan(fast);
    expect(fake.connections).toBeLessThanOrEqual(8);
  });
});
