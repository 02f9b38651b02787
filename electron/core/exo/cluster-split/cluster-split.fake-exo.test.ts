/**
 * A cluster split in two, against two fake exo servers on loopback: studio-a (attached)
 * and studio-b's own exo on another 127.0.0.1 port, published as studio-b's address in
 * studio-a's state. When they stop seeing each other, exobar finds studio-b's exo up in
 * a cluster of its own and says so (event and exo_cluster_split), clears it when
 * studio-b rejoins or stops answering, and probes nothing exo did not publish.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { STOPPED_NODE_REMOVAL_MS, attachToFake, startStudioB, twoNodeCluster, type AttachHarness, type StudioB } from '../../../../test/support/fake-exo';
import { diagnoseExo } from '../../diagnostics/exo-diagnosis';
import { eventually } from '../../../../test/support/eventually';
import type { Snapshot } from '../../../../shared/snapshot';

const SPLIT = 'studio-b is up but no longer in this cluster: it sees 1 node';

describe('a cluster split in two', () => {
  let h: AttachHarness;
  let b: StudioB | undefined;

  afterEach(async () => {
    await h?.close();
    await b?.close();
    b = undefined;
  });

  /** studio-a attached, studio-b's exo beside it, both Macs seen and their addresses read. */
  async function attached(publish: string[] = ['127.0.0.1'], timeoutMs?: number): Promise<void> {
    h = await attachToFake(twoNodeCluster, { clusterSplit: { apiPort: (id) => (id === b?.nodeId ? b.fake.port : undefined), timeoutMs } });
    h.cluster.node('studio-b').addresses = publish;
    b = await startStudioB(h.cluster);
    await h.round();
    await h.monitor.split.tick();
    expect(h.monitor.view().section.nodes.map((n) => n.label)).toEqual(['studio-a', 'studio-b']);
  }

  /** The split as exo has it: studio-a drops studio-b; studio-b sees only itself. */
  async function split(): Promise<void> {
    b!.split();
    await h.round(5_000);
    await h.monitor.split.tick();
  }

  const splitWarnings = () => h.monitor.view().warnings.filter((w) => w.code === 'exo_cluster_split');

  it('says studio-b is up but apart, with an event and a warning, and clears the warning when it rejoins', async () => {
    await attached();
    expect(b!.fake.hits.size).toBe(0);
    await split();

    const [warning, ...more] = splitWarnings();
    expect(more).toEqual([]);
    expect(warning!.title).toBe(SPLIT);
    expect(warning!.risk).toContain(`at 127.0.0.1:${b!.fake.port}`);
    expect(warning!.fix).toContain('restart exo on studio-b');
    const events = h.monitor.events.events();
    expect(events.map((e) => e.kind)).toEqual(['node_left', 'instance_deleted', 'instance_deleted', 'cluster_split']);
    expect(events.at(-1)).toMatchObject({ kind: 'cluster_split', summary: SPLIT, loss: true, nodes: [{ label: 'studio-b', nodeId: b!.nodeId }] });
    // The diagnosis names it, in the same words.
    const snapshot = { exo: h.monitor.view().section, warnings: h.monitor.view().warnings, instances: [] } as unknown as Snapshot;
    expect(diagnoseExo(snapshot).map((c) => [c.cause, c.explanation.startsWith(SPLIT)])).toEqual([['exo_cluster_split', true]]);
    // Only studio-b's own exo was asked, and only its id and its state.
    expect([...b!.fake.hits.keys()].sort()).toEqual(['/node_id', '/state']);

    // Another round while split: one warning still, no second event.
    await h.round(5_000);
    await h.monitor.split.tick();
    expect(splitWarnings()).toHaveLength(1);
    expect(h.monitor.events.events().filter((e) => e.kind === 'cluster_split')).toHaveLength(1);

    b!.rejoin();
    await h.round(5_000);
    expect(splitWarnings()).toEqual([]);
    expect(h.monitor.events.events().at(-1)).toMatchObject({ kind: 'node_joined', summary: 'studio-b joined the cluster' });
    // Back in the cluster: it is no longer probed.
    const asked = b!.fake.hits.get('/node_id');
    await h.monitor.split.tick();
    expect(b!.fake.hits.get('/node_id')).toBe(asked);
  });

  it('clears the warning and stops probing once studio-b stops answering', async () => {
    await attached();
    await split();
    expect(splitWarnings()).toHaveLength(1);

    await b!.fake.refuse();
    await h.monitor.split.tick();
    expect(splitWarnings()).toEqual([]);
    await b!.fake.accept();
    const asked = b!.fake.hits.get('/node_id');
    await h.monitor.split.tick();
    expect(b!.fake.hits.get('/node_id')).toBe(asked);
  });

  it('never holds up the poller: a hanging Mac gets one probe at a time, ended by the timeout', async () => {
    await attached(['127.0.0.1'], 2_000);
    b!.fake.inject('hang', { path: '/node_id' });
    b!.split();
    await h.round(5_000);
    const probing = h.monitor.split.tick();
    await eventually(() => b!.fake.hits.get('/node_id') === 1, 5_000, 'the probe reached studio-b');
    // While it hangs, poll rounds go on and a second probe round sends nothing more to that Mac.
    await h.round(500);
    await h.round(500);
    expect(h.monitor.view().section.nodes.map((n) => n.label)).toEqual(['studio-a']);
    await h.monitor.split.tick();
    expect(b!.fake.hits.get('/node_id')).toBe(1);
    await probing;
    // It timed out: no answer is no split, and the Mac is no longer probed.
    expect(splitWarnings()).toEqual([]);
    await h.monitor.split.tick();
    expect(b!.fake.hits.get('/node_id')).toBe(1);
  });

  it('probes nothing when exo published no address for the Mac', async () => {
    await attached([]);
    await split();
    expect(splitWarnings()).toEqual([]);
    expect(b!.fake.hits.size).toBe(0);
    expect(h.monitor.events.events().map((e) => e.kind)).not.toContain('cluster_split');
  });

  it('is not a split when the published address answers for a Mac still in this cluster', async () => {
    // studio-b publishes loopback with no port of its own: there studio-a's exo answers.
    h = await attachToFake(twoNodeCluster);
    await h.round();
    await h.monitor.split.tick();
    h.cluster.stopNode('studio-b');
    h.clock.now += STOPPED_NODE_REMOVAL_MS;
    h.cluster.step();
    await h.round(5_000);
    expect(h.monitor.events.events()[0]).toMatchObject({ kind: 'node_left' });
    const asked = h.fake.hits.get('/node_id') ?? 0;
    await h.monitor.split.tick();
    expect(h.fake.hits.get('/node_id')).toBe(asked + 1);
    expect(splitWarnings()).toEqual([]);
    await h.monitor.split.tick();
    expect(h.fake.hits.get('/node_id')).toBe(asked + 1);
  });
});
