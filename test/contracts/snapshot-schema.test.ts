/**
 * The snapshot schema (shared/snapshot.ts) against every snapshot the tests hand-make
 * and one a real node produces: a fixture the schema refuses is a fixture no production
 * path could deliver to the page, and a node field the schema does not know would be
 * dropped at the bridge. Both fail here.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { syntheticNode } from '../support/diagnostics/synthetic-node';
import * as page from '../support/renderer/fixtures';
import { exoInstances, isFailed, isServing, localInstances } from '../../shared/instance-state';
import { emptySnapshot, parseSnapshotJson, parseSnapshotValue, SnapshotSchema, type Snapshot } from '../../shared/snapshot';
import * as glue from '../support/electron/snapshot-fixtures';
import { mappedExoSnapshot, LLAMA_1B, LLAMA_3B, QWEN_30B } from '../support/fake-exo';
import { FakeNode, walkingFakeNode } from '../support/fake-node';
import { instanceFixture } from '../support/instance-fixture';
import { createNodeFixture, type NodeFixture } from '../support/node-fixture';
import { launchSection } from '../../electron/core/safe-pair/launch-section';

/** Parses and checks nothing was stripped: the schema knows every field the value carries. */
function roundTrips(snapshot: Snapshot): void {
  const parsed = parseSnapshotValue(JSON.parse(JSON.stringify(snapshot)));
  expect(parsed).toEqual(JSON.parse(JSON.stringify(snapshot)));
}

describe('snapshot schema over the test fixtures', () => {
  it('accepts the empty snapshot and the shared instance fixture', () => {
    roundTrips(emptySnapshot());
    roundTrips({ ...emptySnapshot(), instances: [instanceFixture()] });
  });

  it('accepts every page fixture (test/support/renderer/fixtures.ts)', () => {
    const instances = [
      page.instance(),
      page.prefillingInstance(),
      page.instanceWithTtft(),
      page.fastSynchOn(page.instance()),
      page.withStatus({ kind: 'RunnerLoading', layersLoaded: 3, totalLayers: 28 }),
      page.withStatus({ kind: 'RunnerFailed', errorMessage: 'out of memory' }),
    ];
    roundTrips(page.snapshot({ instances, warnings: [page.ringFastSynchWarning()] }));
    for (const mlx of [page.mlxRuntime(), page.mlxAvailable(), page.mlxUnsupported(), page.mlxSetupRunning(), page.mlxSetupFailed()]) {
      roundTrips(page.snapshot({ mlx }));
    }
    roundTrips(page.snapshot({ launch: { state: 'failed', step: 'Loading', models: ['sim/llama-3.2-1b'], current: 0, error: 'oom', startedAt: 1 } }));
  });

  it('accepts the tray and menu fixtures (test/support/electron/snapshot-fixtures.ts)', () => {
    roundTrips(
      glue.snapshot({
        instances: [
          glue.instance('a', { status: { kind: 'RunnerFailed', errorMessage: 'boom' }, runner: { state: 'failed', restarts: 2 } }),
          glue.instance('b', { queue: { capacity: 64, requests: [glue.request('r1', 'queued'), glue.request('r2', 'decoding')] } }),
          glue.instance('c', { ttft: { samples: [glue.ttftSample(300, 5)], p50Ms: 300, p95Ms: 300, latest: glue.ttftSample(300, 5) } }),
        ],
        warnings: [glue.warning('two_ring_fast_synch', ['a', 'b'])],
      }),
    );
  });

  it("accepts the diagnostics' synthetic node and the fake node, ready at once or walking", async () => {
    roundTrips(syntheticNode().snapshot()!);
    const api = new FakeNode();
    await api.createInstance({ model: 'sim/llama-3.2-1b', instanceType: 'ring', fastSynch: 'auto', acknowledgeRisk: false });
    roundTrips(api.snapshot());
    const launcher = walkingFakeNode();
    launcher.addReady('sim/llama-3.2-1b');
    roundTrips(launcher.snapshot());
  });

  it('accepts the exo section and exo instances as the mapper makes them from a fake exo, and the helpers narrow them', async () => {
    const exo = await mappedExoSnapshot();
    const snapshot: Snapshot = { ...exo, instances: [instanceFixture(), ...exo.instances] };
    roundTrips(snapshot);
    roundTrips({ ...snapshot, exo: null, exoOffer: { url: 'http://127.0.0.1:52415', nodeId: exo.exo!.nodeId!, foundAt: 1 } });
    expect(localInstances(snapshot).map((i) => i.id)).toEqual([instanceFixture().id]);
    expect(exoInstances(snapshot).map((i) => i.model)).toEqual([LLAMA_1B, LLAMA_3B, QWEN_30B]);
    // The demo's 3B has a failed runner: failed, not serving; the Qwen's runner serves.
    const byModel = (model: string) => exoInstances(snapshot).find((i) => i.model === model)!;
    expect([isFailed(byModel(LLAMA_3B)), isServing(byModel(LLAMA_3B))]).toEqual([true, false]);
    expect([isFailed(byModel(QWEN_30B)), isServing(byModel(QWEN_30B))]).toEqual([false, true]);
  });

  it('refuses what no node sends, naming the field', () => {
    const local = instanceFixture() as Record<string, unknown>;
    const { source: _source, ...noSource } = local;
    expect(() => parseSnapshotValue({ ...emptySnapshot(), instances: [noSource] })).toThrow(/\(instances\.0\.source:/);
    expect(() => parseSnapshotValue({ ...emptySnapshot(), instances: [{ ...local, source: 'exo' }] })).toThrow(/\(instances\.0\.exo:/);
    expect(() => parseSnapshotValue({ ...emptySnapshot(), exo: undefined })).toThrow(/\(exo:/);
    expect(() => parseSnapshotJson('<html>')).toThrow('The server sent a snapshot that is not JSON');
    // A local instance's queue always has a capacity; only exo's may be null.
    expect(() => parseSnapshotValue({ ...emptySnapshot(), instances: [{ ...local, queue: { capacity: null, requests: [] } }] })).toThrow(/queue\.capacity/);
  });

  it('drops keys it does not know (a newer server) rather than failing', () => {
    const parsed = SnapshotSchema.parse({ ...emptySnapshot(), futureField: 1, instances: [{ ...instanceFixture(), futureInstanceField: 'x' }] });
    expect(parsed).not.toHaveProperty('futureField');
    expect(parsed.instances[0]).not.toHaveProperty('futureInstanceField');
  });
});

describe("snapshot schema over a real node's snapshot", () => {
  let fixture: NodeFixture | null = null;
  afterEach(async () => {
    await fixture?.cleanup();
    fixture = null;
  });

  it('accepts it whole, with nothing stripped', async () => {
    fixture = createNodeFixture();
    await fixture.launch('sim/llama-3.2-1b');
    launchSection(fixture.node.hub)({ state: 'running', step: 'Loading', models: ['sim/llama-3.2-1b'], current: 0, error: null, startedAt: Date.now() });
    const snapshot = fixture.node.snapshot();
    expect(snapshot.instances).toHaveLength(1);
    roundTrips(snapshot);
  });
});
