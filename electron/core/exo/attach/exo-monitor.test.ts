import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { attachToFake, type AttachHarness, FakeExoCluster, LLAMA_1B, LLAMA_3B, QWEN_30B, demoCluster } from '../../../../test/support/fake-exo';
import { ExoInstanceDetailSchema, ExoSectionSchema } from '../../../../shared/exo-snapshot';
import type { ExoView } from './exo-view';

let h: AttachHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

const byModel = (view: ExoView, model: string) => view.instances.find((i) => i.model === model)!;
const codes = (view: ExoView) => view.warnings.map((w) => w.code).sort();

function twoMacs(now: () => number): FakeExoCluster {
  const cluster = new FakeExoCluster(now);
  cluster.addNode({ name: 'studio-a', chip: 'Apple M3 Ultra', ramGb: 256 });
  cluster.addNode({ name: 'mini-b', chip: 'Apple M4 Pro', model: 'Mac mini', ramGb: 64 });
  return cluster;
}

describe('attached to the demo cluster', () => {
  it('shows two models on one Mac, a queue, a pending cancellation and a failed runner on a second Mac', async () => {
    h = await attachToFake(demoCluster);
    await h.round();
    const view = h.monitor.view();
    expect(view.section).toMatchObject({ url: h.fake.url, connected: true, nodeId: h.cluster.nodeId, pollErrors: 0, parseErrors: 0, restartedAt: null });
    expect(view.section.nodes.map((n) => [n.name, n.chip, n.isAttachedNode, n.fastSynch])).toEqual([
      ['studio-a', 'Apple M3 Ultra', true, { enabled: true, source: 'assumed' }],
      ['mini-b', 'Apple M4 Pro', false, { enabled: true, source: 'assumed' }],
    ]);
    expect(view.section.nodes[0]!.memoryTotalBytes).toBe(256 * 1024 ** 3);
    expect(view.instances.map((i) => i.id)).toEqual([`exo:${LLAMA_1B}`, `exo:${LLAMA_3B}`, `exo:${QWEN_30B}`]);

    const qwen = byModel(view, QWEN_30B);
    expect(qwen).toMatchObject({ source: 'exo', instanceType: 'ring', modelName: 'Qwen3-30B-A3B-4bit', queue: { capacity: null } });
    expect(qwen.exo.tasks.map((t) => [t.status, t.place])).toEqual([
      ['Running', 'in_runner'],
      ['Pending', 'in_runner'],
      ['Pending', 'in_runner'],
    ]);
    expect(qwen.exo.pendingCancels).toHaveLength(1);
    expect(qwen.pendingCancels).toEqual([expect.objectContaining({ state: 'sent' })]);
    expect(qwen.exo.runners).toEqual([expect.objectContaining({ nodeName: 'studio-a', rank: 0, status: 'RunnerRunning', known: true })]);

    const failed = byModel(view, LLAMA_3B).exo.runners[0]!;
    expect(failed).toMatchObject({ nodeName: 'mini-b', status: 'RunnerFailed', errorMessage: 'Terminated (signal=6 (Abort trap: 6))' });
    expect(failed.diagnostics.map((d) => d.kind)).toEqual(['RunnerMetalGpuTimeout']);

    expect(codes(view)).toEqual(['exo_runner_failed', 'two_ring_fast_synch']);
    const ring = view.warnings.find((w) => w.code === 'two_ring_fast_synch')!;
    expect(ring).toMatchObject({ assumed: true, instanceIds: [`exo:${LLAMA_1B}`, `exo:${QWEN_30B}`] });
    expect(ring.title).toContain('studio-a');
    expect(ring.title).toContain('assumed');
    expect(view.warnings.find((w) => w.code === 'exo_runner_failed')!.risk).toContain('RunnerMetalGpuTimeout');
    // The shapes are the contract's.
    expect(() => ExoSectionSchema.parse(view.section)).not.toThrow();
    for (const instance of view.instances) expect(() => ExoInstanceDetailSchema.parse(instance.exo)).not.toThrow();
  });

  it('never polls /events or the whole /state; downloads only with the node sections', async () => {
    h = await attachToFake(demoCluster);
    for (let i = 0; i < 12; i++) await h.round();
    expect([...h.fake.hits.keys()].sort()).toEqual(
      [
        '/node_id',
        '/state/downloads',
        '/state/instances',
        '/state/lastSeen',
        '/state/nodeIdentities',
        '/state/nodeMemory',
        '/state/nodeSystem',
        '/state/runners',
        '/state/tasks',
        '/state/topology',
      ].sort(),
    );
    // 12 rounds 0.5 s apart: the fast paths every round, the node sections every 5 s.
    expect(h.fake.hits.get('/state/tasks')).toBe(12);
    expect(h.fake.hits.get('/state/nodeMemory')).toBe(2);
    expect(h.fake.hits.get('/state/downloads')).toBe(2);
  });
});

describe('following exo through time', () => {
  it('shows runners loading layer by layer, the queue waiting for the load, then in the runner', async () => {
    h = await attachToFake(twoMacs);
    const instance = h.cluster.addInstance({ model: LLAMA_1B, nodes: ['studio-a'] });
    h.cluster.step(4);
    const task = h.cluster.submit(LLAMA_1B);
    await h.round();
    let view = h.monitor.view();
    let llama = byModel(view, LLAMA_1B);
    expect(llama.exo.runners[0]).toMatchObject({ status: 'RunnerLoading', layersLoaded: 4, totalLayers: 16 });
    expect(llama.exo.tasks).toEqual([expect.objectContaining({ taskId: task, status: 'Pending', place: 'waiting_for_load', ageMs: 0 })]);
    expect(llama.queue.requests[0]).toMatchObject({ phase: 'queued' });
    h.cluster.loadAll();
    await h.round(1_500);
    view = h.monitor.view();
    llama = byModel(view, LLAMA_1B);
    // The step that made the runner Ready also handed it the task (exo's worker does both).
    expect(llama.exo.runners[0]!.status).toBe('RunnerRunning');
    expect(llama.exo.tasks[0]).toMatchObject({ status: 'Running', place: 'in_runner', ageMs: 1_500 });
    expect(llama.exo.exoInstanceId).toBe(instance.id);
  });

  it('counts finished tasks as ended when they leave exo state', async () => {
    h = await attachToFake(twoMacs);
    h.cluster.addInstance({ model: QWEN_30B, nodes: ['studio-a'], ready: true });
    const a = h.cluster.submit(QWEN_30B);
    h.cluster.submit(QWEN_30B);
    h.cluster.step();
    await h.round();
    h.cluster.finish(a);
    await h.round();
    expect(byModel(h.monitor.view(), QWEN_30B).exo.tasks.map((t) => t.status)).toEqual(['Pending']);
    h.cluster.step();
    await h.round();
    const qwen = byModel(h.monitor.view(), QWEN_30B);
    expect(qwen.exo.endedTasks).toBe(1);
    expect(qwen.queue.requests).toHaveLength(1);
    const history = h.monitor.bundleMaterial().history.filter((c) => c.id === a);
    expect(history.map((c) => [c.from, c.to])).toEqual([
      [null, 'Running'],
      ['Running', 'Complete'],
      ['Complete', null],
    ]);
  });

  it('shows a pending cancellation with its age until its CancelTask completes', async () => {
    h = await attachToFake(twoMacs);
    h.cluster.addInstance({ model: QWEN_30B, nodes: ['studio-a'], ready: true });
    const a = h.cluster.submit(QWEN_30B);
    await h.round();
    h.cluster.cancel(a);
    await h.round();
    await h.round(700);
    const qwen = byModel(h.monitor.view(), QWEN_30B);
    expect(qwen.exo.pendingCancels).toEqual([expect.objectContaining({ taskId: a, ageMs: 700 })]);
    expect(qwen.queue.requests).toHaveLength(0);
    h.cluster.step();
    await h.round();
    expect(byModel(h.monitor.view(), QWEN_30B).exo.pendingCancels).toEqual([]);
  });

  it('warns when an instance stays loading past the threshold', async () => {
    h = await attachToFake(twoMacs, { warnings: { stuckLoadingMs: 60_000 } });
    h.cluster.addInstance({ model: QWEN_30B, nodes: ['studio-a'] });
    h.cluster.step(5);
    await h.round();
    await h.round(59_000);
    expect(codes(h.monitor.view())).toEqual([]);
    await h.round(2_000);
    const warning = h.monitor.view().warnings.find((w) => w.code === 'exo_stuck_loading')!;
    expect(warning.instanceIds).toEqual([`exo:${QWEN_30B}`]);
    expect(warning.risk).toContain('RunnerLoading');
    h.cluster.loadAll();
    await h.round();
    expect(codes(h.monitor.view())).toEqual([]);
  });

  it('reads runners through the instances: a failed runner that outlived its instance is not shown', async () => {
    h = await attachToFake(twoMacs);
    const instance = h.cluster.addInstance({ model: QWEN_30B, nodes: ['studio-a', 'mini-b'], ready: true });
    h.cluster.failRunner(QWEN_30B, 'studio-a', { diagnostics: [{ RunnerRingTransportError: { message: 'Ring transport aborted', evidence: [] } }] });
    await h.round();
    let view = h.monitor.view();
    expect(byModel(view, QWEN_30B).exo.runners.map((r) => [r.rank, r.nodeName, r.status])).toEqual([
      [0, 'studio-a', 'RunnerFailed'],
      [1, 'mini-b', 'RunnerShuttingDown'],
    ]);
    expect(codes(view)).toEqual(['exo_runner_failed']);
    h.cluster.deleteInstance(instance.id);
    h.cluster.step();
    await h.round();
    view = h.monitor.view();
    expect(view.instances).toEqual([]);
    expect(view.warnings).toEqual([]);
  });

  it('warns about any two models on one Mac with fast synch on, whatever their types (a JACCL instance beside a ring one)', async () => {
    h = await attachToFake(twoMacs);
    h.cluster.addInstance({ model: QWEN_30B, nodes: ['studio-a', 'mini-b'], kind: 'MlxJacclInstance', ready: true });
    h.cluster.addInstance({ model: LLAMA_1B, nodes: ['studio-a'], ready: true });
    await h.round();
    const view = h.monitor.view();
    expect(byModel(view, QWEN_30B).instanceType).toBe('jaccl');
    expect(view.warnings.map((w) => [w.code, w.instanceIds, w.title])).toEqual([
      [
        'ring_fast_synch_beside_jaccl',
        [`exo:${LLAMA_1B}`, `exo:${QWEN_30B}`],
        "2 models share the GPU of studio-a, where fast synch is assumed on (exo's default; exobar cannot read it there)",
      ],
    ]);
  });

  it('warns about a node not seen for 30 s; the master then deletes its instances', async () => {
    h = await attachToFake(twoMacs);
    h.cluster.addInstance({ model: QWEN_30B, nodes: ['studio-a', 'mini-b'], ready: true });
    h.cluster.addInstance({ model: LLAMA_1B, nodes: ['studio-a'], ready: true });
    await h.round();
    h.cluster.dropNode('mini-b');
    for (let t = 0; t < 29_000; t += 5_000) {
      h.cluster.step();
      await h.round(5_000);
    }
    // Both models have a runner on studio-a: that warning stands throughout.
    expect(codes(h.monitor.view())).toEqual(['two_ring_fast_synch']);
    h.cluster.step();
    await h.round(5_000);
    const lost = h.monitor.view().warnings.find((w) => w.code === 'exo_node_lost')!;
    expect(lost.title).toMatch(/^mini-b has not been seen for 3\d s$/);
    expect(lost.instanceIds).toEqual([`exo:${QWEN_30B}`]);
    h.cluster.step();
    await h.round(5_000);
    const view = h.monitor.view();
    expect(view.instances.map((i) => i.model)).toEqual([LLAMA_1B]);
    expect(view.section.nodes.map((n) => n.name)).toEqual(['studio-a']);
  });

  it('follows an exo restart: new node id, instances matched by model, and says so', async () => {
    h = await attachToFake(twoMacs);
    h.cluster.addInstance({ model: QWEN_30B, nodes: ['studio-a'], ready: true });
    await h.round();
    const before = h.monitor.view();
    h.cluster.restartNode('studio-a');
    await h.round(5_000);
    let view = h.monitor.view();
    expect(view.section.nodeId).toBe(h.cluster.nodeId);
    expect(view.section.nodeId).not.toBe(before.section.nodeId);
    expect(view.section.restartedAt).toBe(h.clock.now);
    expect(view.instances).toEqual([]);
    const placed = h.cluster.addInstance({ model: QWEN_30B, nodes: ['studio-a'], ready: true });
    await h.round();
    view = h.monitor.view();
    expect(view.instances.map((i) => [i.id, i.exo.exoInstanceId, i.exo.matchedByModel])).toEqual([[`exo:${QWEN_30B}`, placed.id, true]]);
    expect(before.instances[0]!.exo.matchedByModel).toBe(false);
  });
});

describe("fast synch on this Mac from exo's log", () => {
  const dir = mkdtempSync(join(tmpdir(), 'exo-monitor-log-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['OFF', [], { enabled: false, source: 'exo_log' }],
    ['ON', ['two_ring_fast_synch'], { enabled: true, source: 'exo_log' }],
  ])('with FAST_SYNCH forced %s', async (value, expected, fastSynch) => {
    const path = join(dir, `exo-${value}.log`);
    writeFileSync(path, `[ 10:00:00 | INFO ] Starting EXO\n[ 10:00:00 | INFO ] FAST_SYNCH forced ${value}\n`);
    h = await attachToFake(twoMacs, { exoLogPath: path });
    h.cluster.addInstance({ model: QWEN_30B, nodes: ['studio-a'], ready: true });
    h.cluster.addInstance({ model: LLAMA_1B, nodes: ['studio-a'], ready: true });
    await h.round();
    const view = h.monitor.view();
    expect(view.section.nodes[0]!.fastSynch).toEqual(fastSynch);
    expect(codes(view)).toEqual(expected);
    if (value === 'ON') expect(view.warnings[0]!.assumed).toBeUndefined();
  });
});
