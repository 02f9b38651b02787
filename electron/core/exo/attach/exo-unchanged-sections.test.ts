/**
 * A section exo sends again byte for byte is not parsed again (what keeps polling a
 * real-size state cheap), and any change, even one byte of the same length, is.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeExo, type FakeExo, demoCluster } from '../../../../test/support/fake-exo';
import { ExoClient } from './exo-client';
import { DEFAULT_EXO_HTTP, exoAgent, getExoJsonIfChanged } from './exo-http';
import { ExoMonitor } from './exo-monitor';

let server: Server | null = null;
let fake: FakeExo | null = null;
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
  await fake?.close();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = fake = null;
});

/** A server answering `body()` in chunks of `chunk` bytes. */
async function serve(body: () => string, chunk = 7): Promise<URL> {
  server = createServer((_req, res) => {
    const bytes = Buffer.from(body());
    res.writeHead(200, { 'content-type': 'application/json' });
    for (let i = 0; i < bytes.length; i += chunk) res.write(bytes.subarray(i, i + chunk));
    res.end();
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
}

describe('an unchanged answer is not parsed again', () => {
  it('answers unchanged for the same bytes, and parses a change of one byte, a longer and a shorter body', async () => {
    let text = JSON.stringify({ a: { RunnerReady: {} }, b: 'x'.repeat(100) });
    const base = await serve(() => text);
    const agent = exoAgent(base);
    stops.push(async () => agent.destroy());
    const first = await getExoJsonIfChanged(base, '/state/runners', agent, DEFAULT_EXO_HTTP, null);
    if (!first.ok || first.unchanged) throw new Error('the first answer must be parsed');
    expect(first.value).toEqual(JSON.parse(text));

    const again = await getExoJsonIfChanged(base, '/state/runners', agent, DEFAULT_EXO_HTTP, first.body);
    expect(again).toEqual({ ok: true, unchanged: true, bytes: first.bytes });

    const variants = [text.replace('RunnerReady', 'RunnerReadz'), `${text} `, text.slice(0, -1).replace('"}', '}')];
    for (const changed of variants) {
      text = changed;
      const next = await getExoJsonIfChanged(base, '/state/runners', agent, DEFAULT_EXO_HTTP, first.body);
      expect(next.ok && next.unchanged).toBe(false);
    }
  });

  it('keeps the parsed maps while exo sends the same bytes, and takes in a change at once', async () => {
    fake = await startFakeExo({ cluster: demoCluster() });
    const client = new ExoClient({ url: fake.url });
    stops.push(() => client.stop());
    await client.tick();
    const { instances, runners, tasks } = client.reading;
    expect(instances?.size).toBeGreaterThan(0);
    await client.tick();
    // Nothing moved in the fake: the very same maps, not equal copies.
    expect(client.reading.instances).toBe(instances);
    expect(client.reading.runners).toBe(runners);
    expect(client.reading.tasks).toBe(tasks);

    const model = [...instances!.values()][0]!.modelId;
    const taskId = fake.cluster.submit(model, 'one more');
    await client.tick();
    expect(client.reading.tasks).not.toBe(tasks);
    expect(client.reading.tasks?.has(taskId)).toBe(true);
    expect(client.reading.instances).toBe(instances);
  });

  it('a monitor on an unchanged state still ages what it shows (queue ages move, the section stays connected)', async () => {
    fake = await startFakeExo({ cluster: demoCluster() });
    let now = Date.now();
    const monitor = new ExoMonitor({ url: fake.url, exoLogPath: null, now: () => now });
    stops.push(() => monitor.stop());
    await monitor.tick();
    const before = monitor.view();
    const ages = (v: typeof before) => v.instances.flatMap((i) => i.queue.requests.map((r) => r.ageMs));
    expect(ages(before).length).toBeGreaterThan(0);
    now += 3_000;
    await monitor.tick();
    const after = monitor.view();
    expect(monitor.client.reading.tasks).toBeDefined();
    expect(ages(after)).toEqual(ages(before).map((a) => a + 3_000));
    expect(after.section.connected).toBe(true);
  });

  it('parses every poll again when asked to (the benchmark contrast)', async () => {
    fake = await startFakeExo({ cluster: demoCluster() });
    const client = new ExoClient({ url: fake.url, reparseUnchanged: true });
    stops.push(() => client.stop());
    await client.tick();
    const { tasks } = client.reading;
    await client.tick();
    expect(client.reading.tasks).not.toBe(tasks);
    expect([...client.reading.tasks!.keys()]).toEqual([...tasks!.keys()]);
  });
});
