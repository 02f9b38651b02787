import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { attachToFake, type AttachHarness, QWEN_30B, demoCluster, type FaultKind } from '../../../../test/support/fake-exo';
import { ExoMonitor } from './exo-monitor';
import { findLocalExo, normalizeExoUrl, probeExo } from './exo-probe';

let h: AttachHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

// Long enough that a loaded CI machine answers the healthy polls in time; the hang case waits it out once.
const TIMEOUT_MS = 1500;

async function attached(): Promise<AttachHarness> {
  h = await attachToFake(demoCluster, { http: { timeoutMs: TIMEOUT_MS } });
  await h.round();
  expect(h.monitor.view().section.connected).toBe(true);
  return h;
}

describe('bad answers from exo: a clear state, a counted error, and recovery', () => {
  it.each<[FaultKind, string, RegExp]>([
    ['status500', 'http_status', /GET \/state\/tasks: HTTP 500: Internal Server Error/],
    ['notJson', 'not_json', /GET \/state\/tasks: answer is not JSON \(text\/html\)/],
    ['huge', 'too_large', /GET \/state\/tasks: answer of 52428800 bytes is over the 8388608-byte cap/],
    ['hugeChunked', 'too_large', /GET \/state\/tasks: answer is over the 8388608-byte cap/],
    ['deepNesting', 'too_deep', /GET \/state\/tasks: JSON nested deeper than 64 levels/],
    ['reset', 'unreachable', /GET \/state\/tasks: /],
    ['hang', 'timeout', new RegExp(`GET /state/tasks: timed out after ${TIMEOUT_MS} ms`)],
  ])('%s', async (fault, kind, message) => {
    const harness = await attached();
    harness.fake.inject(fault, { path: '/state/tasks', times: 1 });
    await harness.round();
    const view = harness.monitor.view();
    expect(view.section).toMatchObject({ connected: false, since: harness.clock.now, pollErrors: 1 });
    expect(view.section.lastError!.message).toMatch(message);
    expect(harness.monitor.client.errors.at(-1)).toMatchObject({ path: '/state/tasks', kind });
    // The last known instances are still shown, with the warning saying why they are stale.
    expect(view.instances.length).toBe(3);
    const unreachable = view.warnings.find((w) => w.code === 'exo_unreachable')!;
    expect(unreachable.risk).toMatch(message);
    await harness.round();
    expect(harness.monitor.view().section).toMatchObject({ connected: true, pollErrors: 1 });
    expect(harness.monitor.view().warnings.map((w) => w.code)).not.toContain('exo_unreachable');
  });

  it('backs off while connections are refused, drops stale instances, and reattaches by itself', async () => {
    const harness = await attached();
    const downAt = harness.clock.now;
    await harness.fake.refuse();
    const requestsBefore = harness.fake.hits.get('/node_id') ?? 0;
    const attempts: number[] = [];
    for (let i = 0; i < 80; i++) {
      const errors = harness.monitor.view().section.pollErrors;
      await harness.round(500);
      if (harness.monitor.view().section.pollErrors > errors) attempts.push(harness.clock.now - downAt);
    }
    // Attempts spread out: 0.5 s apart, then 1 s, 2 s, 4 s, 8 s, then every 10 s at most.
    const gaps = attempts.slice(1).map((t, i) => t - attempts[i]!);
    expect(gaps.slice(0, 5)).toEqual([500, 1_000, 2_000, 4_000, 8_000]);
    expect(attempts.length).toBeLessThan(12);
    const view = harness.monitor.view();
    expect(view.section).toMatchObject({ connected: false, since: downAt + 500 });
    expect(view.section.lastError!.message).toBe('GET /node_id: ECONNREFUSED');
    expect(view.instances).toEqual([]);
    expect(view.warnings.map((w) => w.code)).toEqual(['exo_unreachable']);
    await harness.fake.accept();
    for (let i = 0; i < 25 && !harness.monitor.view().section.connected; i++) await harness.round(500);
    expect(harness.monitor.view().section.connected).toBe(true);
    expect(harness.monitor.view().instances.length).toBe(3);
    expect(harness.fake.hits.get('/node_id') ?? 0).toBe(requestsBefore + 1);
  });

  it('reports a node that cannot be reached at all (an address nothing routes to)', async () => {
    // 192.0.2.1 is TEST-NET-1 (RFC 5737), never routed: depending on the network the
    // connect times out, fails as unreachable, or a firewall refuses it.
    const monitor = new ExoMonitor({ url: 'http://192.0.2.1:52415', exoLogPath: null, http: { timeoutMs: TIMEOUT_MS } });
    await monitor.tick();
    const view = monitor.view();
    await monitor.stop();
    expect(view.section).toMatchObject({ connected: false, pollErrors: 1, nodeId: null, lastGoodPollAt: null });
    expect(['timeout', 'unreachable', 'refused']).toContain(monitor.client.errors[0]!.kind);
    expect(view.warnings).toEqual([expect.objectContaining({ code: 'exo_unreachable', instanceIds: [] })]);
    expect(view.warnings[0]!.risk).toContain('(never)');
  });

  it('keeps one request in flight per path: a hung round is not doubled', async () => {
    const harness = await attached();
    harness.fake.inject('hang', { path: '/state/runners', times: 1 });
    const hits = harness.fake.hits.get('/state/runners')!;
    const first = harness.monitor.tick();
    await harness.monitor.tick();
    await harness.monitor.tick();
    await first;
    expect(harness.fake.hits.get('/state/runners')).toBe(hits + 1);
  });

  it('reads exo speaking snake_case with tags it does not know, counting them', async () => {
    h = await attachToFake(demoCluster);
    h.fake.variant.snakeCase = true;
    h.fake.variant.unknownTags = true;
    await h.round();
    const view = h.monitor.view();
    expect(view.section).toMatchObject({ connected: true, parseErrors: 0, unknownTags: 2 });
    expect(view.instances.map((i) => i.model).sort()).toHaveLength(3);
    const parked = view.instances.flatMap((i) => i.exo.runners).find((r) => r.status === 'RunnerParked')!;
    expect(parked.known).toBe(false);
    expect(view.instances.find((i) => i.model === QWEN_30B)!.exo.tasks.length).toBeGreaterThan(0);
  });

  it('counts garbage entries as parse errors once, keeping every other entry', async () => {
    h = await attachToFake(demoCluster);
    const runnerId = [...h.cluster.runners.keys()][0]!;
    h.cluster.runners.set(runnerId, { RunnerLoading: 'nine of sixteen' } as never);
    await h.round();
    await h.round();
    const view = h.monitor.view();
    expect(view.section).toMatchObject({ connected: true, parseErrors: 1, pollErrors: 0 });
    expect(h.monitor.client.errors.at(-1)!.message).toContain(`runners[${runnerId}]`);
    const row = view.instances.flatMap((i) => i.exo.runners).find((r) => r.runnerId === runnerId)!;
    expect(row.status).toBe('missing');
    expect(view.instances.length).toBe(3);
  });
});

describe('probe and the local finder', () => {
  let other: Server | null = null;
  afterEach(() => other?.close());

  it('tests an address: an exo answers with its node id and its Macs', async () => {
    h = await attachToFake(demoCluster);
    expect(await probeExo(`${h.fake.url}/`)).toEqual({ ok: true, url: h.fake.url, nodeId: h.cluster.nodeId, nodes: 2 });
    const offer = await findLocalExo(() => 42, h.fake.url);
    expect(offer).toEqual({ url: h.fake.url, nodeId: h.cluster.nodeId, foundAt: 42 });
    await h.fake.refuse();
    expect(await probeExo(h.fake.url)).toMatchObject({ ok: false, error: { kind: 'refused' } });
    expect(await findLocalExo(Date.now, h.fake.url)).toBeNull();
  });

  it('does not take another server for exo', async () => {
    other = createServer((_req, res) => res.end('{"hello":"world"}'));
    await new Promise<void>((resolve) => other!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    expect(await probeExo(url)).toMatchObject({ ok: false, error: { message: expect.stringContaining('not an exo node id') } });
  });

  it('refuses addresses that are not http', () => {
    expect(normalizeExoUrl('ftp://mac:21')).toMatchObject({ ok: false });
    expect(normalizeExoUrl('not a url')).toMatchObject({ ok: false });
    expect(normalizeExoUrl(' http://127.0.0.1:52415/state ')).toEqual({ ok: true, url: 'http://127.0.0.1:52415' });
  });
});
