import { afterEach, describe, expect, it } from 'vitest';
import { startFakeExo, type FakeExo, demoCluster } from '../../../test/support/fake-exo';
import { ExoClient } from './exo-client';
import { sleep } from '../../../test/support/eventually';

let fake: FakeExo | null = null;
let client: ExoClient | null = null;
afterEach(async () => {
  await client?.stop();
  await fake?.close();
  client = fake = null;
});

describe('exo client on its own timer', () => {
  it('polls the fast paths twice a second and the node sections and downloads every 5 s, over kept-alive sockets', async () => {
    fake = await startFakeExo({ cluster: demoCluster() });
    client = new ExoClient({ url: fake.url });
    client.start();
    await sleep(2_200);
    await client.stop();
    // Rounds at about 0, 0.5, 1, 1.5 and 2 s: 4 or 5 under a loaded machine, never more.
    const fast = fake.hits.get('/state/tasks') ?? 0;
    expect(fast).toBeGreaterThanOrEqual(4);
    expect(fast).toBeLessThanOrEqual(5);
    expect(fake.hits.get('/state/runners')).toBe(fast);
    expect(fake.hits.get('/state/nodeMemory')).toBe(1);
    expect(fake.hits.get('/state/downloads')).toBe(1);
    expect(client.connection).toMatchObject({ connected: true, pollErrors: 0 });
    // Keep-alive: a handful of sockets (one per path polled at once) for all those requests.
    const requests = [...fake.hits.values()].reduce((a, b) => a + b, 0);
    expect(requests).toBeGreaterThan(15);
    expect(fake.connections).toBeLessThanOrEqual(8);
  });
});
