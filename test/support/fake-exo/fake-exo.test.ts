import { afterEach, describe, expect, it } from 'vitest';
import { FakeExoCluster } from './fake-cluster';
import { startFakeExo, type FakeExo } from './fake-exo-server';
import { LLAMA_1B, QWEN_30B, demoCluster } from './scenarios';
import { readFixture, tagOf, type Json } from './fixture-data';

let fake: FakeExo | null = null;
afterEach(async () => {
  await fake?.close();
  fake = null;
});

async function get(path: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${fake!.url}${path}`);
  return { status: res.status, body: await res.json() };
}

function oneNode(): FakeExoCluster {
  const cluster = new FakeExoCluster();
  cluster.addNode({ name: 'studio-a' });
  return cluster;
}

describe('fake exo', () => {
  it('serves /state with every top-level key of exo 0.3.70, in exo order', async () => {
    fake = await startFakeExo({ cluster: demoCluster() });
    const { body } = await get('/state');
    expect(Object.keys(body as Json)).toEqual(Object.keys(readFixture('state-1node-two-instances.json')));
    expect((await get('/node_id')).body).toMatch(/^[0-9a-f]{32}$/);
  });

  it('walks /state/{path} and answers exo 404 shape for a missing path', async () => {
    fake = await startFakeExo({ cluster: demoCluster() });
    const runners = (await get('/state/runners')).body as Json;
    expect(Object.keys(runners).length).toBeGreaterThan(0);
    const missing = await get('/state/does/not/exist');
    const documented = readFixture('api-responses.json')['GET /state/does/not/exist'] as Json;
    expect(missing).toEqual({ status: 404, body: documented.response });
    const lastSeen = (await get('/state/lastSeen')).body as Record<string, string>;
    expect(Object.values(lastSeen)[0]).toMatch(/\+00:00$/);
    const whole = (await get('/state')).body as { lastSeen: Record<string, string> };
    expect(Object.values(whole.lastSeen)[0]).toMatch(/Z$/);
  });

  it('loads runners layer by layer through exo lifecycle', async () => {
    const cluster = oneNode();
    fake = await startFakeExo({ cluster });
    const instance = cluster.addInstance({ model: LLAMA_1B, nodes: ['studio-a'] });
    const runnerId = instance.shards[0]!.runnerId;
    const seen: string[] = [];
    for (let i = 0; i < 20; i++) {
      const status = (await get(`/state/runners/${runnerId}`)).body as Json;
      const tag = tagOf(status);
      seen.push(tag === 'RunnerLoading' ? `RunnerLoading ${(status.RunnerLoading as Json).layersLoaded}` : tag);
      if (tag === 'RunnerReady') break;
      cluster.step();
    }
    expect(seen).toEqual([
      'RunnerIdle',
      'RunnerConnecting',
      'RunnerConnected',
      'RunnerLoading 0',
      'RunnerLoading 4',
      'RunnerLoading 8',
      'RunnerLoading 12',
      'RunnerLoading 16',
      'RunnerLoaded',
      'RunnerWarmingUp',
      'RunnerReady',
    ]);
  });

  it('marks only the first task a Ready runner picks up Running; the rest stay Pending while batched', () => {
    const cluster = oneNode();
    const instance = cluster.addInstance({ model: QWEN_30B, nodes: ['studio-a'], ready: true });
    const a = cluster.submit(QWEN_30B);
    const b = cluster.submit(QWEN_30B);
    cluster.step();
    expect(cluster.task(a).body.taskStatus).toBe('Running');
    cluster.step(3);
    expect(cluster.task(b).body.taskStatus).toBe('Pending');
    expect(tagOf(cluster.runners.get(instance.shards[0]!.runnerId))).toBe('RunnerRunning');
    cluster.finish(a);
    expect(cluster.task(a).body.taskStatus).toBe('Complete');
    cluster.step();
    expect(cluster.tasks.has(a)).toBe(false);
  });

  it('cancels with a CancelTask that completes a step later, unless stuck', () => {
    const cluster = oneNode();
    cluster.addInstance({ model: QWEN_30B, nodes: ['studio-a'], ready: true });
    const a = cluster.submit(QWEN_30B);
    const b = cluster.submit(QWEN_30B);
    const cancelA = cluster.cancel(a);
    const cancelB = cluster.cancel(b, { stuck: true });
    expect(cluster.task(a).body.taskStatus).toBe('Cancelled');
    expect(cluster.task(cancelA).body).toMatchObject({ taskStatus: 'Pending', cancelledTaskId: a });
    cluster.step();
    expect(cluster.tasks.has(a)).toBe(false);
    expect(cluster.task(cancelA).body.taskStatus).toBe('Complete');
    expect(cluster.task(cancelB).body.taskStatus).toBe('Pending');
    expect(cluster.task(b).body.taskStatus).toBe('Cancelled');
  });

  it('keeps a failed runner in runners after its instance is deleted', () => {
    const cluster = oneNode();
    cluster.addNode({ name: 'mini-b' });
    const instance = cluster.addInstance({ model: QWEN_30B, nodes: ['studio-a', 'mini-b'], ready: true });
    const dead = cluster.failRunner(QWEN_30B, 'studio-a');
    cluster.step();
    expect(cluster.runners.has(instance.shards[1]!.runnerId)).toBe(false);
    cluster.deleteInstance(instance.id);
    cluster.step();
    expect(tagOf(cluster.runners.get(dead))).toBe('RunnerFailed');
    expect(cluster.instances.size).toBe(0);
  });

  it('drops a silent node after 30 s and deletes the instances that span it; a restart brings a new id', () => {
    let now = 1_000_000;
    const cluster = new FakeExoCluster(() => now);
    cluster.addNode({ name: 'studio-a' });
    cluster.addNode({ name: 'mini-b' });
    cluster.addInstance({ model: QWEN_30B, nodes: ['studio-a', 'mini-b'], ready: true });
    cluster.addInstance({ model: LLAMA_1B, nodes: ['studio-a'], ready: true });
    cluster.dropNode('mini-b');
    now += 20_000;
    cluster.step();
    expect(cluster.instances.size).toBe(2);
    now += 11_000;
    cluster.step();
    expect(cluster.nodes.map((n) => n.name)).toEqual(['studio-a']);
    expect([...cluster.instances.values()].map((i) => i.modelId)).toEqual([LLAMA_1B]);
    const before = cluster.nodeId;
    cluster.restartNode('studio-a');
    expect(cluster.nodeId).not.toBe(before);
    expect(cluster.instances.size).toBe(0);
  });

  it('injects faults per path and refuses connections while stopped', async () => {
    fake = await startFakeExo({ cluster: demoCluster() });
    fake.inject('status500', { path: '/state/tasks', times: 1 });
    expect((await get('/state/tasks')).status).toBe(500);
    expect((await get('/state/tasks')).status).toBe(200);
    fake.inject('notJson', { times: 1 });
    expect(await (await fetch(`${fake.url}/node_id`)).text()).toContain('<html>');
    await fake.refuse();
    await expect(fetch(`${fake.url}/node_id`)).rejects.toThrow();
    await fake.accept();
    expect((await get('/node_id')).status).toBe(200);
  });

  it('speaks snake_case and unknown tags when asked', async () => {
    fake = await startFakeExo({ cluster: demoCluster() });
    fake.variant.snakeCase = true;
    fake.variant.unknownTags = true;
    const instances = (await get('/state/instances')).body as Json;
    const first = Object.values(instances)[0] as Json;
    expect(Object.keys(first.MlxRingInstance as Json)).toContain('shard_assignments');
    const runners = Object.values((await get('/state/runners')).body as Json).map(tagOf);
    expect(runners).toContain('RunnerParked');
  });
});
